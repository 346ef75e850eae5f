"""ember.vision.ops: nms / batched_nms against the greedy definition (torchvision's compiled
nms does not load beside the CPU torch), roi_align against a direct transcription of the
kernel's definition (torchvision's slow Python fallback skips the kernel's zeros outside
the image), with gradients and float64 gradcheck; the box utilities and sigmoid_focal_loss against
torchvision's (pure Python) functions, forward and backward."""
import math

import numpy as np
import pytest

import ember
from ember.vision import ops as eo

from ._torchvision import import_torchvision

torchvision = import_torchvision()
torch = pytest.importorskip("torch")
to = torchvision.ops

rng = np.random.default_rng(11)


def random_boxes(n, size=50.0, dtype=np.float32):
    xy = rng.uniform(0, size, (n, 2))
    wh = rng.uniform(1, size / 2, (n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(dtype)


def greedy_nms(boxes, scores, threshold):
    """The definition, one box at a time: by decreasing score (ties in input order), keep a
    box unless a kept box overlaps it with IoU > threshold."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    kept = []
    for i in order:
        def iou(j):
            w = max(0.0, min(boxes[i][2], boxes[j][2]) - max(boxes[i][0], boxes[j][0]))
            h = max(0.0, min(boxes[i][3], boxes[j][3]) - max(boxes[i][1], boxes[j][1]))
            inter = w * h
            area = [(b[2] - b[0]) * (b[3] - b[1]) for b in (boxes[i], boxes[j])]
            return inter / (area[0] + area[1] - inter)
        if all(iou(j) <= threshold for j in kept):
            kept.append(i)
    return kept


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.9])
def test_nms_is_the_greedy_definition(threshold):
    boxes = random_boxes(60)
    scores = rng.random(60).astype(np.float32)
    scores[5] = scores[7]  # a tie keeps input order
    keep = eo.nms(ember.from_numpy(boxes), ember.from_numpy(scores), threshold)
    assert keep.dtype == ember.int64
    expected = greedy_nms(boxes.astype(np.float64).tolist(), scores.tolist(), threshold)
    assert keep.tolist() == expected


def test_nms_edge_cases_and_errors():
    empty = eo.nms(ember.zeros(0, 4), ember.zeros(0), 0.5)
    assert tuple(empty.shape) == (0,) and empty.dtype == ember.int64
    same = ember.tensor([[0.0, 0, 10, 10]] * 3)
    assert eo.nms(same, ember.tensor([0.1, 0.3, 0.2]), 0.99).tolist() == [1]
    for boxes, scores in ((ember.zeros(3, 5), ember.zeros(3)), (ember.zeros(3, 4),
                                                                  ember.zeros(3, 1)),
                          (ember.zeros(3, 4), ember.zeros(2))):
        with pytest.raises(RuntimeError):
            eo.nms(boxes, scores, 0.5)


def test_batched_nms_suppresses_within_each_category_only():
    boxes = random_boxes(80)
    scores = rng.random(80).astype(np.float32)
    idxs = rng.integers(0, 4, 80)
    keep = eo.batched_nms(ember.from_numpy(boxes), ember.from_numpy(scores),
                          ember.from_numpy(idxs), 0.4).tolist()
    expected = []
    for c in range(4):
        members = np.flatnonzero(idxs == c)
        expected += [members[k] for k in greedy_nms(boxes[members].astype(np.float64).tolist(),
                                                    scores[members].tolist(), 0.4)]
    expected.sort(key=lambda i: -scores[i])
    assert keep == [int(i) for i in expected]
    assert eo.batched_nms(ember.zeros(0, 4), ember.zeros(0), ember.zeros(0).long(),
                          0.5).tolist() == []


BOX_FNS = [
    ("box_area", lambda o, b, c: o.box_area(b)),
    ("box_area_xywh", lambda o, b, c: o.box_area(b, fmt="xywh")),
    ("box_iou", lambda o, b, c: o.box_iou(b, c)),
    ("box_iou_cxcywh", lambda o, b, c: o.box_iou(b, c, fmt="cxcywh")),
    ("box_iou_xywh", lambda o, b, c: o.box_iou(b, c, fmt="xywh")),
    ("generalized_box_iou", lambda o, b, c: o.generalized_box_iou(b, c)),
    ("xyxy_to_cxcywh", lambda o, b, c: o.box_convert(b, "xyxy", "cxcywh")),
    ("xyxy_to_xywh", lambda o, b, c: o.box_convert(b, "xyxy", "xywh")),
    ("cxcywh_to_xyxy", lambda o, b, c: o.box_convert(b, "cxcywh", "xyxy")),
    ("xywh_to_cxcywh", lambda o, b, c: o.box_convert(b, "xywh", "cxcywh")),
    ("cxcywh_to_xywh", lambda o, b, c: o.box_convert(b, "cxcywh", "xywh")),
    ("same_format", lambda o, b, c: o.box_convert(b, "xywh", "xywh")),
    ("clip", lambda o, b, c: o.clip_boxes_to_image(b, (30, 40))),
]


@pytest.mark.parametrize("name,fn", [pytest.param(n, f, id=n) for n, f in BOX_FNS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_box_functions_match_torchvision(name, fn, dtype):
    a, b = random_boxes(7, dtype=dtype), random_boxes(5, dtype=dtype)
    ea, eb = (ember.from_numpy(x.copy()).requires_grad_() for x in (a, b))
    ta, tb = (torch.from_numpy(x.copy()).requires_grad_() for x in (a, b))
    e_out, t_out = fn(eo, ea, eb), fn(to, ta, tb)
    assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6,
                               atol=1e-6)
    seed = rng.standard_normal(tuple(t_out.shape))
    t_out.backward(torch.from_numpy(seed.astype(dtype)))
    e_out.backward(ember.from_numpy(seed.astype(dtype)))
    for e, t in ((ea, ta), (eb, tb)):
        if t.grad is None:
            assert e.grad is None or not e.grad.numpy().any()
        else:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_batched_boxes_integer_boxes_and_small_boxes():
    a = rng.integers(0, 30, (2, 4, 4))
    a[..., 2:] += a[..., :2] + 1
    e, t = ember.from_numpy(a), torch.from_numpy(a)
    np.testing.assert_allclose(eo.box_iou(e, e).numpy(), to.box_iou(t, t).numpy(), rtol=1e-6)
    assert eo.box_area(e).dtype == ember.int64
    boxes = random_boxes(20)
    assert eo.remove_small_boxes(ember.from_numpy(boxes), 10.0).tolist() == \
        to.remove_small_boxes(torch.from_numpy(boxes), 10.0).tolist()
    masks = rng.random((3, 9, 8)) > 0.8
    masks[1] = False
    np.testing.assert_array_equal(eo.masks_to_boxes(ember.from_numpy(masks)).numpy(),
                                  to.masks_to_boxes(torch.from_numpy(masks)).numpy())
    for bad in (lambda o: o.box_convert(torch.zeros(1, 4) if o is to else ember.zeros(1, 4),
                                        "xyxy", "bogus"),
                lambda o: o.box_area(torch.zeros(1, 4) if o is to else ember.zeros(1, 4),
                                     fmt="xywhr")):
        with pytest.raises(ValueError):
            bad(to)
        with pytest.raises(ValueError):
            bad(eo)
    with pytest.raises(NotImplementedError, match="rotated"):
        eo.box_convert(ember.zeros(1, 5), "cxcywhr", "xywhr")


def roi_align_reference(x, rois, ph, pw, scale, ratio, aligned):
    """RoIAlign written out from its definition (torchvision's CPU kernel), in float64."""
    n, c, height, width = x.shape
    out = np.zeros((len(rois), c, ph, pw))

    def bilinear(img, y, xx):
        if y < -1.0 or y > height or xx < -1.0 or xx > width:
            return np.zeros(c)
        y, xx = max(y, 0.0), max(xx, 0.0)
        y0, x0 = int(y), int(xx)
        y1, x1 = (y0 + 1, x0 + 1)
        if y0 >= height - 1:
            y0 = y1 = height - 1
            y = float(y0)
        if x0 >= width - 1:
            x0 = x1 = width - 1
            xx = float(x0)
        ly, lx = y - y0, xx - x0
        return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1] +
                ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])

    offset = 0.5 if aligned else 0.0
    for k, (b, x1, y1, x2, y2) in enumerate(rois):
        sw, sh = x1 * scale - offset, y1 * scale - offset
        rw, rh = x2 * scale - offset - sw, y2 * scale - offset - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        for i in range(ph):
            for j in range(pw):
                total = np.zeros(c)
                for iy in range(gh):
                    for ix in range(gw):
                        total += bilinear(x[int(b)], sh + i * bh + (iy + 0.5) * bh / gh,
                                          sw + j * bw + (ix + 0.5) * bw / gw)
                out[k, :, i, j] = total / count
    return out


ROIS = np.array([[0, 1.0, 2, 7, 8], [1, 0.5, 0.5, 11, 9.5], [0, -3, -2, 4, 5],
                 [1, 8, 7, 14, 13], [0, 3, 3, 3.2, 3.1], [1, 0, 0, 12, 10]], np.float32)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("ratio", [-1, 2])
@pytest.mark.parametrize("scale", [1.0, 0.8])
def test_roi_align_is_its_definition(aligned, ratio, scale):
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    got = eo.roi_align(ember.from_numpy(x), ember.from_numpy(ROIS), (3, 4), scale, ratio,
                       aligned)
    expected = roi_align_reference(x.astype(np.float64), ROIS.astype(np.float64), 3, 4, scale,
                                   ratio, aligned)
    assert got.dtype == ember.float32 and tuple(got.shape) == (6, 3, 3, 4)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_roi_align_list_of_boxes_module_and_gradients():
    """Boxes as one list entry per image give the same result as (K, 5) rois; the gradient
    of sum(out * g) is the adjoint of the sampling (float64, against the reference)."""
    x = rng.standard_normal((2, 4, 9, 11))
    boxes = [ROIS[ROIS[:, 0] == b, 1:].astype(np.float64) for b in (0, 1)]
    rois = np.concatenate([np.concatenate([np.full((len(bx), 1), b), bx], axis=1)
                           for b, bx in enumerate(boxes)])
    ex = ember.from_numpy(x.copy()).requires_grad_()
    out = eo.RoIAlign((2, 3), 0.9, -1, True)(ex, [ember.from_numpy(b) for b in boxes])
    expected = roi_align_reference(x, rois, 2, 3, 0.9, -1, True)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(expected.shape)
    (out * ember.from_numpy(g)).sum().backward()
    eps = 1e-6
    for index in [(0, 1, 3, 4), (1, 2, 5, 7), (0, 0, 0, 0), (1, 3, 8, 10)]:
        bumped = x.copy()
        bumped[index] += eps
        slope = ((roi_align_reference(bumped, rois, 2, 3, 0.9, -1, True) - expected) * g).sum()
        assert abs(slope / eps - ex.grad.numpy()[index]) < 1e-5
    assert repr(eo.RoIAlign((2, 3), 0.9, -1)) == repr(to.RoIAlign((2, 3), 0.9, -1))


def test_roi_align_gradcheck_and_empty():
    x = ember.from_numpy(rng.standard_normal((1, 2, 5, 6))).requires_grad_()
    rois = ember.tensor([[0, 0.7, 1.2, 4.1, 3.9], [0, -0.6, 2.0, 5.5, 4.2]], dtype=ember.float64)
    assert ember.autograd.gradcheck(lambda t: eo.roi_align(t, rois, 2, 1.0, 2, True), [x])
    empty = eo.roi_align(x, ember.zeros(0, 5, dtype=ember.float64), (2, 2))
    assert tuple(empty.shape) == (0, 2, 2, 2)
    with pytest.raises(AssertionError):
        eo.roi_align(x, ember.zeros(3, 4), 2)


@pytest.mark.parametrize("kwargs", [{}, {"alpha": -1, "gamma": 0}, {"reduction": "mean"},
                                    {"reduction": "sum", "alpha": 0.7, "gamma": 1.5}])
def test_sigmoid_focal_loss_matches_torchvision(kwargs):
    logits = rng.standard_normal((4, 6)).astype(np.float32)
    targets = (rng.random((4, 6)) > 0.6).astype(np.float32)
    el = ember.from_numpy(logits.copy()).requires_grad_()
    tl = torch.from_numpy(logits.copy()).requires_grad_()
    e = eo.sigmoid_focal_loss(el, ember.from_numpy(targets), **kwargs)
    t = to.sigmoid_focal_loss(tl, torch.from_numpy(targets), **kwargs)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-7)
    e.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(el.grad.numpy(), tl.grad.numpy(), rtol=1e-5, atol=1e-7)
    for bad in ({"alpha": 2.0}, {"reduction": "bogus"}):
        with pytest.raises(ValueError):
            eo.sigmoid_focal_loss(el, ember.from_numpy(targets), **bad)


def test_building_blocks_match_torchvision():
    torch.manual_seed(0)
    t_block = to.Conv2dNormActivation(3, 8, kernel_size=3, stride=2, groups=1).eval()
    e_block = eo.Conv2dNormActivation(3, 8, kernel_size=3, stride=2, groups=1).eval()
    e_block.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                             for k, v in t_block.state_dict().items()})
    x = rng.standard_normal((2, 3, 9, 9)).astype(np.float32)
    with torch.no_grad():
        np.testing.assert_allclose(e_block(ember.from_numpy(x)).detach().numpy(),
                                   t_block(torch.from_numpy(x)).numpy(), rtol=1e-5, atol=1e-5)
    assert repr(e_block).replace("ember", "torch") == repr(t_block)
    t_mlp = to.MLP(5, [7, 3], norm_layer=torch.nn.LayerNorm, dropout=0.1)
    e_mlp = eo.MLP(5, [7, 3], norm_layer=ember.nn.LayerNorm, dropout=0.1)
    assert list(e_mlp.state_dict()) == list(t_mlp.state_dict())

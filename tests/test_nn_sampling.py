"""Resampling vs torch: interpolate (every mode, size / scale_factor, align_corners,
recompute_scale_factor), grid_sample (modes x padding modes x align_corners, 4-d and 5-d, grads
w.r.t. input and grid), affine_grid, fold/unfold, pixel and channel shuffles; the layers' repr;
errors; gradcheck in float64.
"""
import warnings

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _quiet():
    """torch warns about align_corners defaults and deprecated upsample_*; so does ember."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def R(*shape):
    return rng.standard_normal(shape)


def U(*shape, lim=1.2):
    return rng.uniform(-lim, lim, shape)


def both_precisions(fn, inputs, atol32=1e-5):
    check(fn, [a.astype(np.float32) for a in inputs], grad=False, atol=atol32)
    check(fn, [a.astype(np.float64) for a in inputs])


def F(m):
    return m.nn.functional


INTERPOLATE = [
    ("nearest_scale", dict(scale_factor=2.3), (2, 3, 5, 6)),
    ("nearest_double", dict(scale_factor=2), (2, 3, 5, 6)),
    ("nearest_down", dict(scale_factor=0.6), (2, 3, 5, 6)),
    ("nearest_size", dict(size=(7, 4)), (2, 3, 5, 6)),
    ("nearest_1d", dict(scale_factor=1.5), (2, 3, 7)),
    ("nearest_3d", dict(scale_factor=(1.5, 2, 0.7)), (1, 2, 3, 4, 5)),
    ("nearest_recompute", dict(scale_factor=1.7, recompute_scale_factor=True), (2, 3, 5, 6)),
    ("nearest_exact", dict(size=(7, 4), mode="nearest-exact"), (2, 3, 5, 6)),
    ("nearest_exact_scale", dict(scale_factor=1.7, mode="nearest-exact"), (2, 3, 5, 6)),
    ("linear", dict(scale_factor=2.5, mode="linear"), (2, 3, 5)),
    ("linear_down", dict(size=3, mode="linear"), (2, 3, 8)),
    ("linear_corners", dict(size=8, mode="linear", align_corners=True), (2, 3, 5)),
    ("linear_to_one", dict(size=1, mode="linear", align_corners=True), (2, 3, 5)),
    ("bilinear", dict(size=(7, 4), mode="bilinear"), (2, 3, 5, 6)),
    ("bilinear_scale", dict(scale_factor=(1.3, 0.6), mode="bilinear"), (2, 3, 5, 6)),
    ("bilinear_recompute", dict(scale_factor=(1.3, 0.6), mode="bilinear",
                                recompute_scale_factor=True), (2, 3, 5, 6)),
    ("bilinear_corners", dict(size=(9, 4), mode="bilinear", align_corners=True), (2, 3, 5, 6)),
    ("bilinear_same_size", dict(size=(5, 6), mode="bilinear"), (2, 3, 5, 6)),
    ("bilinear_unit_scale", dict(scale_factor=1.1, mode="bilinear"), (1, 2, 5, 6)),
    ("bilinear_one_channel", dict(scale_factor=2, mode="bilinear"), (2, 1, 3, 4)),
    ("bicubic", dict(size=(9, 4), mode="bicubic"), (2, 3, 5, 6)),
    ("bicubic_scale", dict(scale_factor=1.7, mode="bicubic"), (2, 3, 5, 6)),
    ("bicubic_corners", dict(scale_factor=1.7, mode="bicubic", align_corners=True),
     (2, 3, 5, 6)),
    ("bicubic_down", dict(size=(2, 3), mode="bicubic"), (2, 3, 5, 7)),
    ("trilinear", dict(scale_factor=(1.5, 2, 0.7), mode="trilinear"), (1, 2, 3, 4, 5)),
    ("trilinear_corners", dict(size=(2, 5, 3), mode="trilinear", align_corners=True),
     (1, 2, 3, 4, 5)),
    ("area", dict(size=(3, 4), mode="area"), (2, 3, 5, 6)),
    ("area_scale", dict(scale_factor=0.5, mode="area"), (2, 3, 5, 6)),
    ("area_1d", dict(size=4, mode="area"), (2, 3, 9)),
    ("area_3d", dict(size=(2, 2, 3), mode="area"), (1, 2, 3, 4, 5)),
    ("empty_batch", dict(scale_factor=2, mode="bilinear"), (0, 2, 3, 3)),
    ("bilinear_antialias_down", dict(size=(3, 4), mode="bilinear", antialias=True),
     (2, 3, 11, 9)),
    ("bilinear_antialias_mixed", dict(size=(12, 4), mode="bilinear", antialias=True),
     (1, 2, 5, 13)),
    ("bilinear_antialias_scale", dict(scale_factor=0.4, mode="bilinear", antialias=True),
     (1, 2, 10, 12)),
    ("bicubic_antialias_down", dict(size=(4, 3), mode="bicubic", antialias=True),
     (2, 3, 13, 10)),
    ("bicubic_antialias_up", dict(size=(9, 8), mode="bicubic", antialias=True), (1, 2, 4, 5)),
    ("bicubic_antialias_corners", dict(size=(3, 4), mode="bicubic", antialias=True,
                                       align_corners=True), (1, 2, 9, 11)),
]


@pytest.mark.parametrize("kwargs,shape", [pytest.param(k, s, id=n) for n, k, s in INTERPOLATE])
def test_interpolate(kwargs, shape):
    both_precisions(lambda m, x: F(m).interpolate(x, **kwargs), [R(*shape)])


def test_interpolate_nearest_uint8():
    x = rng.integers(0, 255, (2, 3, 4, 5)).astype(np.uint8)
    check(lambda m, x: F(m).interpolate(x, scale_factor=1.5), [x])


def test_deprecated_upsample_functions():
    x = R(2, 3, 4, 5)
    both_precisions(lambda m, x: F(m).upsample(x, scale_factor=2, mode="bilinear"), [x])
    both_precisions(lambda m, x: F(m).upsample_nearest(x, size=(5, 7)), [x])
    both_precisions(lambda m, x: F(m).upsample_bilinear(x, scale_factor=1.5), [x])


GRID_SAMPLE = [
    ("bilinear", dict(), 1.2),
    ("bilinear_corners", dict(align_corners=True), 1.2),
    ("border", dict(padding_mode="border"), 1.5),
    ("border_corners", dict(padding_mode="border", align_corners=True), 1.5),
    ("reflection", dict(padding_mode="reflection"), 3.0),
    ("reflection_corners", dict(padding_mode="reflection", align_corners=True), 3.0),
    ("bicubic", dict(mode="bicubic"), 1.2),
    ("bicubic_border", dict(mode="bicubic", padding_mode="border", align_corners=True), 1.5),
    ("bicubic_reflection", dict(mode="bicubic", padding_mode="reflection"), 2.5),
]


@pytest.mark.parametrize("kwargs,lim", [pytest.param(k, lim, id=n) for n, k, lim in GRID_SAMPLE])
def test_grid_sample_2d(kwargs, lim):
    kwargs.setdefault("align_corners", False)
    both_precisions(lambda m, x, g: F(m).grid_sample(x, g, **kwargs),
                    [R(2, 3, 5, 6), U(2, 4, 3, 2, lim=lim)])


@pytest.mark.parametrize("kwargs", [dict(padding_mode="zeros"), dict(padding_mode="border"),
                                    dict(padding_mode="reflection", align_corners=True)])
def test_grid_sample_3d(kwargs):
    kwargs.setdefault("align_corners", False)
    both_precisions(lambda m, x, g: F(m).grid_sample(x, g, **kwargs),
                    [R(2, 3, 4, 5, 6), U(2, 4, 3, 2, 3, lim=1.6)])


@pytest.mark.parametrize("shape,grid", [((2, 3, 5, 6), (2, 4, 3, 2)),
                                        ((2, 3, 4, 5, 6), (2, 4, 3, 2, 3))])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_nearest(shape, grid, padding_mode):
    # nearest has no gradient w.r.t. the grid (torch returns zeros), so the grid is detached
    both_precisions(lambda m, x, g: F(m).grid_sample(x, g.detach(), mode="nearest",
                                                     padding_mode=padding_mode,
                                                     align_corners=True),
                    [R(*shape), U(*grid, lim=1.5)])


def test_grid_sample_identity_grid_reproduces_input():
    x = R(1, 2, 4, 5)
    theta = np.array([[[1.0, 0, 0], [0, 1.0, 0]]])
    check(lambda m, x, t: F(m).grid_sample(x, F(m).affine_grid(t, (1, 2, 4, 5), align_corners=True),
                                           align_corners=True, padding_mode="border"), [x, theta])


def test_grid_sample_empty_grid():
    check(lambda m, x, g: F(m).grid_sample(x, g, align_corners=False),
          [R(1, 2, 5, 6), U(1, 0, 3, 2)])


AFFINE = [
    ((2, 3, 5, 4), False, (2, 2, 3)), ((2, 3, 5, 4), True, (2, 2, 3)),
    ((2, 3, 2, 5, 4), False, (2, 3, 4)), ((2, 3, 2, 5, 4), True, (2, 3, 4)),
    ((2, 3, 1, 4), True, (2, 2, 3)), ((1, 1, 1, 1), False, (1, 2, 3)),
]


@pytest.mark.parametrize("size,corners,theta", AFFINE)
def test_affine_grid(size, corners, theta):
    both_precisions(lambda m, t: F(m).affine_grid(t, size, align_corners=corners), [R(*theta)])


FOLD = [
    ("unfold", lambda m, x: F(m).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
     (2, 3, 5, 6)),
    ("unfold_unbatched", lambda m, x: F(m).unfold(x, 2), (3, 4, 4)),
    ("unfold_one_channel", lambda m, x: F(m).unfold(x, 3, padding=1), (2, 1, 4, 5)),
    ("unfold_empty_batch", lambda m, x: F(m).unfold(x, 2), (0, 2, 3, 3)),
    ("fold", lambda m, x: F(m).fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1,
                                    stride=(2, 1)), (2, 18, 12)),
    ("fold_unbatched", lambda m, x: F(m).fold(x, 3, 2), (8, 4)),
    ("fold_empty_batch", lambda m, x: F(m).fold(x, 3, 2), (0, 8, 4)),
    ("pixel_shuffle", lambda m, x: F(m).pixel_shuffle(x, 2), (2, 8, 3, 4)),
    ("pixel_shuffle_batch_dims", lambda m, x: F(m).pixel_shuffle(x, 2), (3, 1, 8, 2, 2)),
    ("pixel_shuffle_unbatched", lambda m, x: F(m).pixel_shuffle(x, 3), (9, 2, 2)),
    ("pixel_unshuffle", lambda m, x: F(m).pixel_unshuffle(x, 2), (3, 2, 4, 6)),
    ("channel_shuffle", lambda m, x: F(m).channel_shuffle(x, 3), (2, 6, 3, 2)),
    ("channel_shuffle_3d", lambda m, x: F(m).channel_shuffle(x, 2), (2, 4, 5)),
    ("torch_pixel_shuffle", lambda m, x: m.pixel_shuffle(x, 2), (1, 4, 2, 3)),
]


@pytest.mark.parametrize("fn,shape", [pytest.param(f, s, id=n) for n, f, s in FOLD])
def test_fold_and_shuffles(fn, shape):
    both_precisions(fn, [R(*shape)])


def test_native_channel_shuffle():
    # torch has no derivative for it; ember's is channel_shuffle's
    check(lambda m, x: F(m).native_channel_shuffle(x, 2), [R(1, 4, 2, 2)], grad=False)


def test_fold_is_the_adjoint_of_unfold():
    # <unfold(x), y> == <x, fold(y)> for any x, y
    x = ember.from_numpy(R(2, 3, 5, 6))
    y = ember.from_numpy(R(2, 3 * 6, 12))
    args = dict(kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    left = (ember.nn.functional.unfold(x, **args) * y).sum().item()
    right = (x * ember.nn.functional.fold(y, (5, 6), **args)).sum().item()
    assert np.isclose(left, right, rtol=1e-12)


GRADCHECK = [
    (lambda x: ember.nn.functional.interpolate(x, size=(3, 5), mode="bicubic"), [(1, 2, 4, 3)]),
    (lambda x: ember.nn.functional.interpolate(x, scale_factor=1.5, mode="bilinear",
                                               align_corners=True), [(1, 2, 3, 3)]),
    (lambda x: ember.nn.functional.interpolate(x, scale_factor=2), [(1, 2, 3)]),
    (lambda x: ember.nn.functional.interpolate(x, size=(2, 3), mode="bicubic", antialias=True),
     [(1, 1, 5, 7)]),
    (lambda x, g: ember.nn.functional.grid_sample(x, g, align_corners=False),
     [(1, 2, 3, 4), (1, 2, 3, 2)]),
    (lambda x, g: ember.nn.functional.grid_sample(x, g, mode="bicubic",
                                                  padding_mode="reflection", align_corners=True),
     [(1, 1, 3, 4), (1, 2, 2, 2)]),
    (lambda t: ember.nn.functional.affine_grid(t, (1, 1, 3, 4), align_corners=False),
     [(1, 2, 3)]),
    (lambda x: ember.nn.functional.unfold(x, 2, padding=1, stride=2), [(1, 2, 3, 4)]),
    (lambda x: ember.nn.functional.fold(x, (3, 4), 2, padding=1, stride=2), [(1, 8, 6)]),
    (lambda x: ember.nn.functional.pixel_shuffle(x, 2), [(1, 4, 2, 3)]),
]


@pytest.mark.parametrize("fn,shapes", GRADCHECK)
def test_gradcheck_and_gradgradcheck(fn, shapes):
    xs = [ember.from_numpy(U(*s, lim=0.9)).requires_grad_() for s in shapes]
    assert ember.autograd.gradcheck(fn, xs)
    assert ember.autograd.gradgradcheck(fn, xs)


ERRORS = [
    lambda m, x: F(m).interpolate(x, size=(3, 4), scale_factor=2),
    lambda m, x: F(m).interpolate(x),
    lambda m, x: F(m).interpolate(x, scale_factor=2, mode="linear"),
    lambda m, x: F(m).interpolate(x[0], scale_factor=2, mode="bilinear"),
    lambda m, x: F(m).interpolate(x, scale_factor=2, mode="trilinear"),
    lambda m, x: F(m).interpolate(x, scale_factor=2, align_corners=True),
    lambda m, x: F(m).interpolate(x, scale_factor=2, mode="bogus"),
    lambda m, x: F(m).interpolate(x[0, 0], scale_factor=2),
    lambda m, x: F(m).interpolate(x, size=(3, 4, 5)),
    lambda m, x: F(m).interpolate(x, size=[3]),
    lambda m, x: F(m).interpolate(x, scale_factor=(2, 2, 2)),
    lambda m, x: F(m).interpolate(x, scale_factor=0.1),
    lambda m, x: F(m).interpolate(x, size=(0, 3)),
    lambda m, x: F(m).interpolate(x, size=(3.5, 4)),
    lambda m, x: F(m).interpolate(x, size=(3, 4), recompute_scale_factor=True),
    lambda m, x: F(m).interpolate(x, scale_factor=2, mode="nearest", antialias=True),
    lambda m, x: F(m).interpolate(x.long(), scale_factor=2),
    lambda m, x: F(m).interpolate(x[:, :0], scale_factor=2, mode="bilinear"),
    lambda m, x: F(m).grid_sample(x, x[:, :1, :3, :3].expand(1, 3, 3, 3).contiguous()),
    lambda m, x: F(m).grid_sample(x, x.new_zeros(2, 3, 3, 2)),
    lambda m, x: F(m).grid_sample(x, x.new_zeros(1, 3, 3, 2), mode="bogus"),
    lambda m, x: F(m).grid_sample(x, x.new_zeros(1, 3, 3, 2), padding_mode="bogus"),
    lambda m, x: F(m).grid_sample(x.unsqueeze(2), x.new_zeros(1, 3, 3, 3, 3), mode="bicubic"),
    lambda m, x: F(m).grid_sample(x, x.new_zeros(1, 3, 3, 2).double()),
    lambda m, x: F(m).grid_sample(x[:, :, :0], x.new_zeros(1, 3, 3, 2)),
    lambda m, x: F(m).grid_sample(x.long(), x.new_zeros(1, 3, 3, 2).long()),
    lambda m, x: F(m).affine_grid(x.new_zeros(1, 2, 3), (1, 1, 3, 3, 3)),
    lambda m, x: F(m).affine_grid(x.new_zeros(1, 2, 3), (1, 1, 3)),
    lambda m, x: F(m).affine_grid(x.new_zeros(1, 2, 3), (1, 1, 0, 3)),
    lambda m, x: F(m).affine_grid(x.new_zeros(2, 2, 3), (1, 1, 3, 3)),
    lambda m, x: F(m).affine_grid(x.new_zeros(1, 2, 3).long(), (1, 1, 3, 3)),
    lambda m, x: F(m).unfold(x.unsqueeze(0), 2),
    lambda m, x: F(m).unfold(x, 7),
    lambda m, x: F(m).unfold(x, 2, stride=0),
    lambda m, x: F(m).unfold(x, (2, 2, 2)),
    lambda m, x: F(m).unfold(x, 2, padding=-1),
    lambda m, x: F(m).fold(x.new_zeros(1, 7, 4), 3, 2),
    lambda m, x: F(m).fold(x.new_zeros(1, 8, 5), 3, 2),
    lambda m, x: F(m).fold(x, 3, 2),
    lambda m, x: F(m).pixel_shuffle(x, 2),
    lambda m, x: F(m).pixel_shuffle(x[0, 0], 2),
    lambda m, x: F(m).pixel_shuffle(x, 0),
    lambda m, x: F(m).pixel_unshuffle(x, 2),
    lambda m, x: F(m).channel_shuffle(x, 2),
    lambda m, x: F(m).channel_shuffle(x[0, 0], 1),
    lambda m, x: F(m).channel_shuffle(x, 0),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_like_torch(fn):
    check_raises(fn, [R(1, 3, 5, 6).astype(np.float32)])


def test_upsample_warns_like_torch():
    with pytest.warns(UserWarning, match="deprecated"):
        ember.nn.functional.upsample(ember.randn(1, 1, 2, 2), scale_factor=2)


# ----------------------------------------------------------------------------------------------
# layers

MODULES = [
    ("Upsample(scale_factor=2)", (2, 3, 4, 5)),
    ("Upsample(size=(3, 4), mode='bilinear', align_corners=True)", (2, 3, 4, 5)),
    ("Upsample(scale_factor=(2, 3), mode='bicubic')", (2, 3, 4, 5)),
    ("Upsample(scale_factor=1.5, mode='trilinear')", (1, 2, 3, 4, 5)),
    ("UpsamplingNearest2d(scale_factor=2)", (2, 3, 4, 5)),
    ("UpsamplingBilinear2d(size=5)", (2, 3, 4, 3)),
    ("PixelShuffle(2)", (2, 8, 3, 4)), ("PixelUnshuffle(2)", (2, 2, 4, 6)),
    ("ChannelShuffle(2)", (2, 4, 3, 3)), ("Fold((4, 5), 2)", (2, 8, 12)),
    ("Unfold(2, dilation=2, padding=1, stride=(1, 2))", (2, 3, 4, 5)),
]


@pytest.mark.parametrize("spec,shape", MODULES)
def test_module_matches_torch(spec, shape):
    t = eval("torch.nn." + spec)
    e = eval("ember.nn." + spec)
    assert repr(e) == repr(t)
    public = {k: v for k, v in vars(t).items() if not k.startswith("_") and k != "training"}
    assert {k: getattr(e, k) for k in public} == public
    check(lambda m, x: eval("m.nn." + spec)(x), [R(*shape)])

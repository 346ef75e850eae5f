"""Convolutions vs torch: forward and gradients (float64), gradcheck and gradgradcheck."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

rng = np.random.default_rng(0)


def T(*shape):
    return rng.standard_normal(shape)


F = "nn.functional."
CASES = [
    ("conv2d_bias", lambda m, x, w, b: m.nn.functional.conv2d(x, w, b), (T(2, 3, 7, 6),
                                                                         T(4, 3, 3, 2), T(4))),
    ("conv2d_stride_pad_groups", lambda m, x, w: m.nn.functional.conv2d(
        x, w, stride=2, padding=1, groups=2), (T(2, 4, 7, 6), T(6, 2, 3, 3))),
    ("conv2d_same_dilation", lambda m, x, w: m.nn.functional.conv2d(
        x, w, padding="same", dilation=2), (T(2, 4, 7, 6), T(6, 4, 4, 3))),
    ("conv2d_valid", lambda m, x, w: m.nn.functional.conv2d(x, w, padding="valid"),
     (T(1, 2, 5, 5), T(3, 2, 2, 2))),
    ("conv1d", lambda m, x, w: m.nn.functional.conv1d(x, w, stride=3, padding=2),
     (T(2, 4, 11), T(5, 4, 3))),
    ("conv3d", lambda m, x, w: m.nn.functional.conv3d(x, w, stride=(1, 2, 1), padding=1),
     (T(1, 2, 5, 6, 4), T(3, 2, 3, 3, 2))),
    ("depthwise", lambda m, x, w: m.nn.functional.conv2d(x, w, groups=4),
     (T(2, 4, 5, 5), T(8, 1, 3, 3))),
    ("unbatched", lambda m, x, w: m.nn.functional.conv2d(x, w), (T(3, 5, 5), T(2, 3, 3, 3))),
    ("transpose2d", lambda m, x, w, b: m.nn.functional.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1), (T(2, 4, 5, 5), T(4, 3, 3, 3), T(3))),
    ("transpose1d_groups_dilation", lambda m, x, w: m.nn.functional.conv_transpose1d(
        x, w, stride=3, groups=2, dilation=2), (T(2, 4, 5), T(4, 2, 3))),
    ("transpose3d", lambda m, x, w: m.nn.functional.conv_transpose3d(x, w, stride=2),
     (T(1, 2, 3, 3, 2), T(2, 2, 2, 2, 2))),
    ("empty_batch", lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
     (T(0, 3, 5, 5), T(4, 3, 3, 3), T(4))),
    ("groups_bias_dilation", lambda m, x, w, b: m.nn.functional.conv2d(
        x, w, b, padding=2, dilation=2, groups=3), (T(2, 6, 7, 6), T(9, 2, 3, 3), T(9))),
    ("one_by_one_stride2", lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, stride=2),
     (T(3, 4, 7, 6), T(5, 4, 1, 1), T(5))),
    # stride 1: the rows-first col2im, with taps that fall wholly in the padding
    ("conv2d_padding_beyond_kernel", lambda m, x, w: m.nn.functional.conv2d(
        x, w, padding=(3, 1)), (T(2, 3, 4, 5), T(4, 3, 2, 3))),
    ("conv2d_tiny_maps_dilation", lambda m, x, w: m.nn.functional.conv2d(
        x, w, padding=(2, 1), dilation=(2, 1)), (T(3, 4, 2, 2), T(5, 4, 3, 3))),
    ("transpose2d_stride1_cropped", lambda m, x, w: m.nn.functional.conv_transpose2d(
        x, w, padding=(1, 2), dilation=2), (T(2, 3, 5, 6), T(3, 2, 3, 3))),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in CASES])
def test_conv_against_torch(fn, inputs):
    pytest.importorskip("torch")
    check(fn, list(inputs), rtol=1e-9, atol=1e-9)


def _small(inputs):
    """The batch cut to one sample (gradcheck costs two forwards per input element)."""
    x, w = inputs[:2]
    batched = x.ndim == w.ndim
    return (x[:1] if batched else x,) + tuple(inputs[1:])


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in CASES])
def test_conv_gradcheck(fn, inputs):
    xs = [ember.from_numpy(a.copy()).requires_grad_() for a in _small(inputs)]
    assert ember.autograd.gradcheck(lambda *a: fn(ember, *a), xs)
    assert ember.autograd.gradgradcheck(lambda *a: fn(ember, *a), xs, atol=1e-4)


def test_conv_float32_matches_torch():
    pytest.importorskip("torch")
    x, w = T(4, 8, 9, 9).astype(np.float32), T(16, 8, 3, 3).astype(np.float32)
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1), [x, w], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fn,inputs", [
    (lambda m, x, w: m.nn.functional.conv2d(x, w), (T(2, 4, 5, 5), T(6, 3, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), (T(1, 4, 2, 2), T(6, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, padding="same", stride=2),
     (T(1, 4, 5, 5), T(6, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), (T(4, 5), T(6, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), (T(1, 4, 5, 5), T(6, 4, 3))),
])
def test_conv_errors_like_torch(fn, inputs):
    pytest.importorskip("torch")
    check_raises(fn, list(inputs))


@pytest.mark.parametrize("bias,match", [
    (T(3), "expected bias to be 1-dimensional with 6 elements"),
    (T(6, 1), "but got bias of size [6, 1]"),
    (T(6).astype(np.float32), "bias type"),
])
def test_conv_bias_errors_like_torch(bias, match):
    pytest.importorskip("torch")
    check_raises(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b),
                 [T(2, 4, 5, 5), T(6, 4, 3, 3), bias], match=match)


def test_conv_results_do_not_depend_on_the_thread_count(monkeypatch):
    """Batch chunks run on worker threads; the result must equal the single-thread one."""
    from ember.ops.nn import conv

    monkeypatch.setattr(conv, "_CHUNK_ELEMENTS", 2000)  # several chunks for this small batch
    x = ember.randn(9, 4, 12, 11, requires_grad=True)
    w = ember.randn(6, 4, 3, 3, requires_grad=True)
    results = []
    threads = ember.get_num_threads()
    try:
        for n in (1, 3):
            ember.set_num_threads(n)
            x.grad = w.grad = None
            y = ember.nn.functional.conv2d(x, w, padding=1)
            (y * y).sum().backward()
            results.append((y.detach().numpy().copy(), x.grad.numpy().copy(),
                            w.grad.numpy().copy()))
    finally:
        ember.set_num_threads(threads)
    for a, b in zip(*results):  # the chunk count follows the thread count, so the weight
        # gradient's sum over chunks is added up in another order: equal up to its rounding
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * np.abs(b).max())


@pytest.mark.parametrize("batch,spatial,weight,threads,count", [
    (32, (4, 4), (512, 512, 3, 3), 2, 2),    # small maps: >= _MIN_COLUMNS (256) columns each
    (32, (8, 8), (256, 256, 3, 3), 2, 8),    # 4 images of 64 positions
    (32, (32, 32), (64, 64, 3, 3), 2, 32),   # large maps: one image's patches fill a chunk
    (5, (8, 8), (256, 256, 3, 3), 4, 4),     # 2 chunks, made 4 for 4 threads
    (0, (8, 8), (4, 4, 3, 3), 2, 0),
])
def test_conv_chunks_cover_the_batch_evenly_for_the_threads(batch, spatial, weight, threads,
                                                            count, monkeypatch):
    from ember.ops.nn import conv

    monkeypatch.setattr(conv, "get_num_threads", lambda: threads)
    chunks = conv._chunks(np, batch, spatial, weight)
    sizes = [c.stop - c.start for c in chunks]
    assert len(chunks) == count
    assert sum(sizes) == batch and all(a.stop == b.start for a, b in zip(chunks, chunks[1:]))
    assert not sizes or max(sizes) - min(sizes) <= 1

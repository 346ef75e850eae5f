"""The fast convolution paths against the plain ones and against torch: Winograd F(2x2, 3x3)
(ops/nn/conv.py) for the forward pass, the input gradient and the weight gradient of 3x3
stride-1 convolutions, at the sizes where it is taken (64 channels and up), with odd and tiny
maps, every padding it accepts, a bias, float64, double backward, and on several threads.
"""
import numpy as np
import pytest

import ember
from ember.ops.nn import conv as conv_ops

from .oracle import check

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _conv(m, x, w, b, padding):
    return m.nn.functional.conv2d(x, w, b, padding=padding)


CASES = [  # (batch, in channels, out channels, height, width, padding)
    (2, 64, 64, 8, 8, 1),
    (3, 64, 72, 5, 7, 1),      # odd sizes: ragged last tiles
    (2, 80, 64, 6, 9, 0),
    (2, 64, 64, 4, 5, 2),
    (1, 64, 64, 1, 1, 1),      # one pixel: a single tile, all but one tap in padding
    (5, 64, 64, 4, 4, (1, 2)),
]


def _arrays(batch, cin, cout, height, width, dtype=np.float32):
    x = rng.standard_normal((batch, cin, height, width)).astype(dtype)
    w = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(dtype)
    b = rng.standard_normal(cout).astype(dtype)
    return x, w, b


def _value_and_grads(x, w, b, padding, seed_grad):
    ex, ew, eb = (ember.from_numpy(a.copy()).requires_grad_() for a in (x, w, b))
    y = ember.nn.functional.conv2d(ex, ew, eb, padding=padding)
    y.backward(ember.from_numpy(seed_grad))
    return [t.numpy() for t in (y.detach(), ex.grad, ew.grad, eb.grad)]


def _fits(x, w, padding):
    pairs = conv_ops._padding_pairs(padding, 2, (3, 3), (1, 1), (1, 1))
    return conv_ops._winograd_fits(np, x, w.shape, (1, 1), pairs, (1, 1), 1)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_winograd_matches_the_plain_path(case, dtype, monkeypatch):
    """Value and the three gradients, Winograd against im2col + GEMM."""
    *shape, padding = case
    x, w, b = _arrays(*shape, dtype=dtype)
    assert _fits(x, w, padding)
    y_shape = ember.nn.functional.conv2d(ember.from_numpy(x), ember.from_numpy(w),
                                         padding=padding).shape
    seed_grad = rng.standard_normal(tuple(y_shape)).astype(dtype)
    fast = _value_and_grads(x, w, b, padding, seed_grad)
    monkeypatch.setattr(conv_ops, "_WINOGRAD_MIN_CHANNELS", 10 ** 9)
    assert not _fits(x, w, padding)
    plain = _value_and_grads(x, w, b, padding, seed_grad)
    # Winograd's transforms round differently: ~1e-6 of the result's scale in float32
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for name, got, want in zip(("value", "input grad", "weight grad", "bias grad"), fast, plain):
        assert got.dtype == want.dtype and got.shape == want.shape, name
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * scale, err_msg=name)


@pytest.mark.parametrize("case", CASES[:3])
def test_winograd_against_torch(case):
    *shape, padding = case
    x, w, b = _arrays(*shape)
    check(lambda m, x, w, b: _conv(m, x, w, b, padding), [x, w, b], rtol=1e-4, atol=1e-5)


def test_winograd_transposed_convolution_against_torch():
    """conv_transpose2d with stride 1 is the input gradient's path."""
    x = rng.standard_normal((2, 64, 6, 7)).astype(np.float32)
    w = (rng.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32)
    check(lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, padding=1), [x, w],
          rtol=1e-4, atol=1e-5)


def test_winograd_double_backward_against_torch():
    x, w, _ = _arrays(2, 64, 64, 5, 6, np.float64)

    def fn(m, x, w):
        y = m.nn.functional.conv2d(x, w, padding=1)
        gx, gw = m.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        return (gx * gx).sum() + (gw * gw).sum()
    check(fn, [x, w])


def test_winograd_on_threads_matches_one_thread():
    """The batch chunks split across threads, and the weight gradient's sum over them."""
    x, w, b = _arrays(7, 64, 64, 6, 6)
    seed_grad = rng.standard_normal((7, 64, 6, 6)).astype(np.float32)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        serial = _value_and_grads(x, w, b, 1, seed_grad)
        ember.set_num_threads(2)
        threaded = _value_and_grads(x, w, b, 1, seed_grad)
    finally:
        ember.set_num_threads(before)
    for got, want in zip(threaded, serial):  # the chunks' sums differ in rounding only
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())


def test_winograd_kernel_transforms_on_threads():
    """G g G^T of a layer's kernels, its columns shared out among two threads (each writes
    its part of the result in place), against the transform done in float64."""
    w = rng.standard_normal((256, 128, 3, 3)).astype(np.float32)
    g = np.asarray(conv_ops._G)
    expected = np.einsum("ai,ocij,bj->abo" "c", g, w.astype(np.float64), g).reshape(16, 256, 128)
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        got = conv_ops._winograd_weights(np, w)
    finally:
        ember.set_num_threads(before)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_winograd_weight_grad_is_an_array_of_its_own():
    """Not a view of a larger array: the engine then hands it to the weight as .grad without
    a copy (a view it must copy)."""
    x, w, _ = _arrays(2, 64, 64, 6, 6)
    dy = rng.standard_normal((2, 64, 6, 6)).astype(np.float32)
    dw = conv_ops._winograd_weight_grad(np, x, dy, ((1, 1), (1, 1)))
    assert dw.base is None and dw.shape == w.shape and dw.flags.c_contiguous


@pytest.mark.parametrize("kwargs", [dict(stride=2, padding=1), dict(dilation=2, padding=2),
                                    dict(groups=2, padding=1), dict(padding=3)])
def test_outside_winograd_falls_back(kwargs):
    """Strided, dilated, grouped or over-padded 3x3 convolutions keep the plain path."""
    groups = kwargs.get("groups", 1)
    x = rng.standard_normal((2, 128, 7, 7)).astype(np.float32)
    w = (rng.standard_normal((64, 128 // groups, 3, 3)) / 30).astype(np.float32)
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, **kwargs), [x, w], rtol=1e-4,
          atol=1e-5)

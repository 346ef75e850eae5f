"""The GPT kernels that write their results in row blocks (`_parallel.by_rows`): gelu (both
forms) and its backward, softmax and log_softmax and their backward, layer norm forward and
backward, and attention's masked, scaled softmax. Each is run split into row blocks on the
thread pool and as one block, the two compared, and both compared with torch (values and
gradients), with broadcast masks, half precision and double backward where the kernel has a
path for them.
"""
import numpy as np
import pytest

import ember
from ember import _parallel
from ember._parallel import by_rows
from ember.ops.nn import activation

from .oracle import assert_close, check

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


@pytest.fixture(params=["one block", "row blocks"])
def blocks(request, monkeypatch):
    """Run a test once on a single block and once split into row blocks on two threads (small
    inputs are split by lowering the threshold)."""
    if request.param == "row blocks":
        monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 4)
        threads = ember.get_num_threads()
        ember.set_num_threads(2)
        yield request.param
        ember.set_num_threads(threads)
    else:
        monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 1 << 40)
        yield request.param


def _normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _split_and_whole(fn, monkeypatch):
    """fn() once split into row blocks (two threads) and once as one block."""
    threads = ember.get_num_threads()
    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 4)
    ember.set_num_threads(2)
    try:
        split = fn()
    finally:
        ember.set_num_threads(threads)
    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 1 << 40)
    return split, fn()


def _values_and_grads(op, *arrays):
    inputs = [ember.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = op(*inputs)
    seed = ember.from_numpy(np.linspace(-1, 1, out.numel(), dtype=np.float32)
                            .reshape(out.shape))
    out.backward(seed.to(out.dtype))
    return [out.detach().numpy()] + [t.grad.numpy() for t in inputs]


# ----------------------------------------------------------------------------------------------
# row blocks against one block


SPLIT_CASES = {
    "gelu": lambda x: ember.nn.functional.gelu(x),
    "gelu tanh": lambda x: ember.nn.functional.gelu(x, approximate="tanh"),
    "softmax": lambda x: ember.softmax(x, -1),
    "softmax dim 1": lambda x: ember.softmax(x, 1),
    "log_softmax": lambda x: ember.log_softmax(x, -1),
    "log_softmax dim 1": lambda x: ember.log_softmax(x, 1),
    "layer_norm": lambda x: ember.nn.functional.layer_norm(x, (6,)),
    "layer_norm 2 dims": lambda x: ember.nn.functional.layer_norm(x, (5, 6)),
    "sdpa causal": lambda x: ember.nn.functional.scaled_dot_product_attention(
        x, x, x, is_causal=True),
}


@pytest.mark.parametrize("name", SPLIT_CASES)
def test_row_blocks_match_one_block(name, monkeypatch):
    x = _normal(7, 5, 6)
    split, whole = _split_and_whole(lambda: _values_and_grads(SPLIT_CASES[name], x),
                                    monkeypatch)
    for s, w in zip(split, whole):
        np.testing.assert_allclose(s, w, rtol=1e-6, atol=1e-7)


def test_by_rows_writes_the_callers_arrays(monkeypatch):
    """The results are the arrays the caller allocated; inputs with other row counts (a
    broadcast mask) and None go to every block whole."""
    seen = []

    def kernel(xp, outs, a, mask, nothing):
        seen.append((a.shape[0], mask.shape[0], nothing))
        np.add(a, mask, out=outs[0])

    a, mask = _normal(6, 3), _normal(1, 3)
    out = np.empty((6, 3), np.float32)
    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 4)
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        result = by_rows(kernel, np, (out,), a, mask, None)
    finally:
        ember.set_num_threads(threads)
    assert result[0] is out
    np.testing.assert_array_equal(out, a + mask)
    assert sorted(seen) == [(3, 1, None), (3, 1, None)]
    seen.clear()
    by_rows(kernel, np, (out,), a, mask, None, split=False)
    assert seen == [(6, 1, None)]


# ----------------------------------------------------------------------------------------------
# against torch, on both paths


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu(blocks, approximate, dtype):
    # its own generator, not the one seeded from the test's id (conftest.py): the tanh form's
    # slope near x = -5.4 is ~1.2e-6 where torch's tanh has rounded to -1 and its slope to 0,
    # which with the oracle's random upstream gradient some draws take past 3e-6
    x = np.random.default_rng(22).standard_normal((9, 33)).astype(dtype) * 3
    x[0, :4] = [-12.0, -6.0, 0.0, 9.0]
    # float32 erf is tanh of a fitted polynomial (activation.py): ~1e-7 of erf, so ~1e-6 of
    # gelu's tail at x = -6; float64 is held to the oracle's own tolerances
    atol = 3e-6 if dtype == np.float32 else None
    check(lambda m, x: m.nn.functional.gelu(x, approximate=approximate), [x], atol=atol)


def test_gelu_half_recomputes_its_saved_phi(blocks):
    x = _normal(8, 16).astype(np.float16)
    check(lambda m, x: m.nn.functional.gelu(x), [x])


def test_gelu_double_backward(blocks):
    def second(m, x):
        y = m.nn.functional.gelu(x)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        return (g * g).sum()
    check(second, [_normal(6, 10)])


@pytest.mark.parametrize("dim", [-1, 1])
def test_softmax(blocks, dim):
    check(lambda m, x: m.softmax(x, dim), [_normal(6, 5, 7) * 4])


@pytest.mark.parametrize("dim", [-1, 1])
def test_log_softmax(blocks, dim):
    check(lambda m, x: m.log_softmax(x, dim), [_normal(6, 5, 7) * 4])


@pytest.mark.parametrize("g_rows, y_rows", [(6, 1), (1, 6), (6, 6)])
def test_log_softmax_backward_broadcasts(blocks, g_rows, y_rows):
    """The fused backward of a vmapped log_softmax gets g and y lined up but not expanded."""
    g, x = _normal(g_rows, 5, 7), _normal(y_rows, 5, 7)
    y = x - np.log(np.exp(x).sum(-1, keepdims=True))
    expected = g - np.exp(y) * g.sum(-1, keepdims=True)
    dx = activation._log_softmax_backward(ember.from_numpy(g), ember.from_numpy(y), dim=2)
    np.testing.assert_allclose(dx.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(8, 12), (4, 3, 12), (2, 3, 3, 4)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(blocks, shape, affine):
    x = _normal(*shape) * 3 + 5
    w, b = _normal(shape[-1]), _normal(shape[-1])
    if affine:
        check(lambda m, x, w, b: m.nn.functional.layer_norm(x, (shape[-1],), w, b), [x, w, b])
    else:
        check(lambda m, x: m.nn.functional.layer_norm(x, (shape[-1],)), [x])


def test_layer_norm_weight_grad_only(blocks):
    """Backward without an input gradient (xhat then needs its own array)."""
    x, w = ember.from_numpy(_normal(8, 12)), ember.from_numpy(_normal(12)).requires_grad_()
    tx, tw = torch.from_numpy(x.numpy()), torch.from_numpy(w.detach().numpy()).requires_grad_()
    ember.nn.functional.layer_norm(x, (12,), w).sum().backward()
    torch.nn.functional.layer_norm(tx, (12,), tw).sum().backward()
    assert_close(w.grad, tw.grad, 1e-5, 1e-6)


def _sdpa(**kwargs):
    return lambda m, q, k, v, *mask: m.nn.functional.scaled_dot_product_attention(
        q, k, v, *mask, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"is_causal": True, "scale": 0.3},
                                    {"scale": 2.0}])
def test_sdpa_scaled_in_the_softmax(blocks, kwargs):
    q, k, v = _normal(3, 2, 5, 4), _normal(3, 2, 6, 4), _normal(3, 2, 6, 3)
    check(_sdpa(**kwargs), [q, k, v])


@pytest.mark.parametrize("mask_shape", [(5, 6), (1, 1, 5, 6), (3, 1, 5, 6), (3, 2, 5, 6),
                                        (2, 1, 6)])
def test_sdpa_bool_mask_broadcasts(blocks, mask_shape):
    q, k, v = _normal(3, 2, 5, 4), _normal(3, 2, 6, 4), _normal(3, 2, 6, 3)
    mask = rng.random(mask_shape) < 0.7
    if mask_shape[-2] > 1:
        mask[..., 1, :] = False  # a fully masked row gives zeros, not nan
    check(_sdpa(), [q, k, v, mask])


def test_sdpa_float_mask(blocks):
    q, k, v = _normal(3, 2, 5, 4), _normal(3, 2, 6, 4), _normal(3, 2, 6, 3)
    check(_sdpa(scale=0.5), [q, k, v, _normal(5, 6)])


def test_sdpa_double_backward(blocks):
    def second(m, q, k, v):
        y = m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.7)
        (g,) = m.autograd.grad((y * y).sum(), q, create_graph=True)
        return (g * g).sum()
    check(second, [_normal(2, 5, 4), _normal(2, 5, 4), _normal(2, 5, 3)])

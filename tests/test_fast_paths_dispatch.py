"""The tiny-op fast paths of dispatch, recording and the engine (issue 22) against their plain
forms.

- dispatch's one-pass promotion for tensors of one floating dtype beside Python numbers, against
  the cached promotion table it skips;
- `record_one` (nodes made without calling the class) against `Node.__init__` through the class;
- a node's `metadata` and a tensor's version counter, both made on first use;
- the saved-input unpacking shortcut, the two-operand `needs_input_grad` table;
- the whole-tensor sum through `np.add.reduce`, and the 0-d expand made as an ndarray directly.
"""
import numpy as np
import pytest

import ember
from ember import _dtype as dt
from ember.autograd import graph
from ember.ops import _dispatch
from ember.ops import reduce as reduce_ops
from ember.ops import shape as shape_ops
from ember.ops.pointwise import _add, _mul

torch = pytest.importorskip("torch")

FLOATS = [ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64]
NUMBERS = [2, -3, 1.5, 2 ** 40, -0.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("number", NUMBERS)
def test_uniform_promotion_matches_the_table(dtype, number):
    """The fast case (one floating dtype, Python numbers) gives what `_promotion` would."""
    x = ember.ones(3, dtype=dtype)
    for args in ((x, number), (number, x), (x, x)):
        for kind, op in (("arith", _add), ("arith", _mul)):
            compute, out = _dispatch._promotion(kind, args)
            result = op(*args)
            assert result.dtype is out
            expected = _dispatch._as_arrays(args, compute.np)
            want = op.kernel(np, *expected).astype(out.np)
            np.testing.assert_array_equal(result.numpy(), want)


def test_fast_promotion_agrees_with_torch():
    for dtype in ("float16", "float32", "float64"):
        e = ember.ones(2, dtype=getattr(ember, dtype)) * 3 + 2.5
        t = torch.ones(2, dtype=getattr(torch, dtype)) * 3 + 2.5
        assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert (ember.ones(2) < 1.5).dtype is ember.bool


def _slots(node):
    names = [n for cls in type(node).__mro__ for n in getattr(cls, "__slots__", ())
             if n not in ("__weakref__", "__dict__", "_metadata")]
    return {n: getattr(node, n) for n in names if n != "_seq"}


def test_record_one_builds_the_node_the_class_builds():
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    fast = (a * b).grad_fn
    plain = type(fast)(fast.op, fast.next_functions, fast._meta, fast._saved, 1)
    assert _slots(fast) == _slots(plain)
    assert fast._seq < plain._seq


def test_metadata_is_made_on_first_use():
    node = (ember.randn(2, requires_grad=True) * 2).grad_fn
    node.metadata["note"] = 1
    assert node.metadata == {"note": 1}
    leaf = graph.accumulator(ember.randn(2, requires_grad=True))
    assert leaf.metadata == {}


def test_version_counter_is_made_on_first_use_and_shared():
    x = ember.randn(4) * 2  # an op result: no counter yet
    assert x._version == 0
    v = x[1:]
    v.add_(1)
    assert x._version == v._version == 1
    d = x.detach()
    x.mul_(2)
    assert d._version == 2


def test_saved_input_shortcut_still_checks_versions():
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3) * 1
    c = a * b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_needs_input_grad_table():
    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3)
    for x, y in ((a, b), (b, a), (a, a), (a, 2.0)):
        args = (x, y)
        saved = graph._save(_mul, args, {}, ())
        want = tuple(isinstance(t, ember.Tensor) and t.requires_grad for t in args)
        assert saved[-1] == want


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int8,
                                   np.bool_, np.complex64])
@pytest.mark.parametrize("dims,keepdim", [((0, 1), False), ((1,), True), ((0,), False)])
def test_sum_through_the_ufunc_matches_the_method(dtype, dims, keepdim):
    a = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    result_dtype = reduce_ops._result_dtype(a, None)
    fast = reduce_ops._sum_kernel(np, a, dims=dims, keepdim=keepdim, dtype=None)
    plain = a.sum(axis=dims, keepdims=keepdim, dtype=reduce_ops._accumulate_dtype(a)
                  or result_dtype.np).astype(result_dtype.np)
    assert fast.dtype == plain.dtype == result_dtype.np
    np.testing.assert_array_equal(fast, plain)


def test_expand_of_a_0d_array_matches_broadcast_to():
    a = np.array(2.5, dtype=np.float32)
    fast = shape_ops._expand_kernel(np, a, shape=(2, 3))
    plain = np.broadcast_to(a, (2, 3))
    np.testing.assert_array_equal(fast, plain)
    assert fast.strides == plain.strides == (0, 0)
    assert not fast.flags.writeable and np.shares_memory(fast, a)
    a[()] = 1.0
    assert (fast == 1.0).all()


def test_tiny_loop_matches_torch():
    """The issue's loop, forward and backward, through every fast path above."""
    values = np.random.default_rng(0).standard_normal((2, 16)).astype(np.float32)
    ea, eb = (ember.tensor(v, requires_grad=True) for v in values)
    ta, tb = (torch.tensor(v, requires_grad=True) for v in values)
    for _ in range(3):
        ec = (ea * eb + ea).sum()
        tc = (ta * tb + ta).sum()
        ec.backward()
        tc.backward()
        assert type(ec.grad_fn).__name__ == type(tc.grad_fn).__name__
    np.testing.assert_allclose(ec.item(), tc.item(), rtol=1e-6)
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
    with ember.no_grad():
        assert not (ea * eb + ea).sum().requires_grad
    assert dt.float32 is ec.dtype

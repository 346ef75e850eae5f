"""The tiny-op fast paths of dispatch, recording and the engine (issue 22) against their plain
forms.

- dispatch's one-pass promotion for tensors of one floating dtype beside Python numbers, against
  the cached promotion table it skips;
- the compiled recorder (nodes made without calling the class) against `Node.__init__`
  through the class;
- a node's `metadata` and a tensor's version counter, both made on first use;
- the saved-input unpacking shortcut, the two-operand `needs_input_grad` table;
- the whole-tensor sum through `np.add.reduce`, and the expand of a 0-d or contiguous array
  made as an ndarray directly;
- `call_unary` / `call_binary` (elementwise ops and sums of floating CPU tensors, without the
  generic passes of `call`) against `call` itself: results, dtypes, nodes, gradients, errors,
  and every case they hand to `call`.
"""
import math
import re
import warnings

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


def test_recorder_builds_the_node_the_class_builds():
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


@pytest.mark.parametrize("a_shape, shape", [
    ((4, 1), (4, 4)), ((4, 1), (2, 4, 4)), ((1, 3), (1, 3)), ((3,), (1, 1, 3)),
    ((1, 1), (0, 5)), ((0, 1), (0, 3)), ((2, 1, 3), (2, 5, 3)), ((1,), (7,))])
def test_expand_of_a_contiguous_array_matches_torch(a_shape, shape):
    values = np.arange(math.prod(a_shape), dtype=np.float32).reshape(a_shape)
    fast = shape_ops._expand_kernel(np, values, shape=shape)
    np.testing.assert_array_equal(fast, np.broadcast_to(values, shape))
    assert fast.size == 0 or np.shares_memory(fast, values)
    assert fast.flags.writeable == (a_shape == shape)  # only a true broadcast is read-only
    want = torch.from_numpy(values).expand(shape)
    got = ember.from_numpy(values).expand(shape)
    assert got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_expand_of_a_strided_array_keeps_the_general_path():
    values = np.arange(8, dtype=np.float32).reshape(4, 2)[:, :1]  # not contiguous
    got = ember.from_numpy(values).expand(4, 3)
    want = torch.from_numpy(values.copy()).expand(4, 3)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.stride()[1] == 0


@pytest.mark.parametrize("a_shape, shape", [
    ((4, 4), (16,)), ((4, 4), (2, 1, 8)), ((2, 3, 4), (6, 4)), ((1,), (1, 1)), ((), (1,)),
    ((0, 3), (3, 0)), ((0, 3), (0, 1, 3))])
def test_view_of_a_contiguous_array_matches_the_checked_reshape(a_shape, shape):
    values = np.arange(math.prod(a_shape), dtype=np.float32).reshape(a_shape)
    fast = shape_ops._view_kernel(np, values, shape=shape)
    plain = values.reshape(shape, copy=False)
    np.testing.assert_array_equal(fast, plain)
    assert fast.size == 0 or np.shares_memory(fast, values)
    want = torch.from_numpy(values).view(shape)
    assert ember.from_numpy(values).view(shape).stride() == want.stride()


def test_view_of_a_contiguous_array_with_a_wrong_size_raises_torchs_error():
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        shape_ops._view_kernel(np, np.zeros((4, 4), np.float32), shape=(5,))


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


# ----------------------------------------------------------------------------------------------
# call_unary / call_binary against call

from ember.ops import pointwise  # noqa: E402
from ember.ops._op import REGISTRY  # noqa: E402

UNARY = ["exp", "neg", "tanh", "sigmoid", "abs", "sqrt", "relu"]
BINARY = ["add", "sub", "mul", "div", "maximum", "eq", "lt", "atan2"]
FAST_DTYPES = [ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.complex64]


def _operands(dtype, shape, seed, requires_grad=False):
    values = np.random.default_rng(seed).uniform(0.5, 2.0, shape)
    return ember.tensor(values, dtype=dtype, requires_grad=requires_grad)


def _both_ways(fast, plain):
    """Run the fast entry and `call` on the same operands: the same result, or the same error."""
    try:
        want = plain()
    except Exception as e:  # noqa: BLE001  (whatever call raises, the fast entry must too)
        with pytest.raises(type(e), match=re.escape(str(e))):
            fast()
        return None, None
    got = fast()
    assert type(got) is type(want) and got.dtype is want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    assert got.requires_grad == want.requires_grad
    assert type(got.grad_fn) is type(want.grad_fn)
    return got, want


@pytest.mark.parametrize("dtype", FAST_DTYPES + [ember.int32, ember.bool])
@pytest.mark.parametrize("name", UNARY)
def test_call_unary_matches_call(name, dtype):
    op = REGISTRY[name]
    x = _operands(dtype, (2, 3), 0)
    _both_ways(lambda: _dispatch.call_unary(op, x), lambda: _dispatch.call(op, x))


@pytest.mark.parametrize("dtype", FAST_DTYPES + [ember.int64])
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("other", ["same", "row", "0-d", "int", "float", "bool", "float64",
                                   "int32"])
def test_call_binary_matches_call(name, dtype, other):
    op = REGISTRY[name]
    x = _operands(dtype, (2, 3), 0)
    y = {"same": lambda: _operands(dtype, (2, 3), 1), "row": lambda: _operands(dtype, (3,), 1),
         "0-d": lambda: _operands(dtype, (), 1), "int": lambda: 3, "float": lambda: 0.75,
         "bool": lambda: True, "float64": lambda: _operands(ember.float64, (2, 3), 1),
         "int32": lambda: _operands(ember.int32, (2, 3), 1)}[other]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        _both_ways(lambda: _dispatch.call_binary(op, x, y), lambda: _dispatch.call(op, x, y))


@pytest.mark.parametrize("name", ["mul", "div", "sub", "atan2"])
def test_call_binary_records_the_node_call_records(name):
    op = REGISTRY[name]
    grads = []
    for entry in (_dispatch.call_binary, _dispatch.call):
        a = _operands(ember.float64, (2, 3), 0, requires_grad=True)
        b = _operands(ember.float64, (3,), 1, requires_grad=True)
        out = entry(op, a, b)
        assert out.grad_fn.name() == f"{name.capitalize()}Backward0"
        out.sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
        scaled = entry(op, a, 2.5)
        scaled.sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_array_equal(grads[0][0], grads[2][0])
    np.testing.assert_array_equal(grads[0][1], grads[2][1])
    np.testing.assert_array_equal(grads[1], grads[3])
    with ember.no_grad():
        assert not _dispatch.call_binary(REGISTRY[name], a, b).requires_grad


@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), ((0, 1), True)])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64, ember.bfloat16, ember.int64,
                                   ember.bool])
def test_sums_through_call_unary_match_call(dtype, dim, keepdim):
    x = _operands(dtype, (2, 3), 0, requires_grad=dtype.is_floating_point)
    op = reduce_ops._sum if dim is None else reduce_ops._sum_dim
    dims = reduce_ops._reduce_dims(dim, 2)
    got, want = _both_ways(lambda: ember.sum(x, dim, keepdim),
                           lambda: _dispatch.call(op, x, dims=dims, keepdim=keepdim, dtype=None))
    assert got._data.ndim == want._data.ndim and type(got._data) is np.ndarray
    if dtype.is_floating_point:
        got.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3), dtype=x.grad.numpy().dtype))


def test_the_fast_entries_hand_other_cases_to_call():
    """Observers (vmap, the profiler), autocast, parameters, numbers first: all still right."""
    x = _operands(ember.float32, (4, 3), 0)
    doubled = ember.func.vmap(lambda row: row * 2.0 + row.exp())(x)
    np.testing.assert_allclose(doubled.numpy(), x.numpy() * 2 + np.exp(x.numpy()), rtol=1e-6)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert (x * x).dtype is ember.float32  # mul is not on autocast's list: unchanged
        assert ember.mm(x, x.t()).dtype is ember.bfloat16
    w = ember.nn.Parameter(_operands(ember.float32, (3,), 1))
    assert (x * w).grad_fn.name() == "MulBackward0" and (w * 2).grad_fn.name() == "MulBackward0"
    assert ember.add(2, x).dtype is ember.float32
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        ember.exp(3)


def test_the_fast_entries_keep_calls_errors_and_silence():
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 0"):
        ember.ones(3) * ember.ones(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's overflow warning would be an error here
        big = ember.tensor([3e38], dtype=ember.float32)
        assert ember.isinf(big * 10.0).all() and ember.isinf(big.exp()).all()
        assert ember.isinf((big * 10.0).sum())


def test_view_and_writing_ops_may_not_take_the_fast_entries():
    for name in ("t", "index_put", "to_device"):  # a view, a writer, a move
        with pytest.raises(TypeError, match="may not write, move or view"):
            pointwise._check_plain(REGISTRY[name])
    pointwise._check_plain(REGISTRY["mul"])  # an elementwise op passes


def _plain_call_unary(op, a, attrs=None):
    return _dispatch.call(op, a, **attrs) if attrs else _dispatch.call(op, a)


@pytest.mark.parametrize("dtype", [ember.float32, ember.int64, ember.bool, ember.bfloat16])
@pytest.mark.parametrize("make", [lambda x: x.view(3, 2), lambda x: x.reshape(6),
                                  lambda x: x.unsqueeze(1), lambda x: x.transpose(0, 1),
                                  lambda x: x.select(1, -1), lambda x: x.t(),
                                  lambda x: x[1], lambda x: x[-2]])
def test_views_through_call_unary_are_the_views_call_makes(make, dtype, monkeypatch):
    """The same strides, memory, version counter and base as through `call`; a write into the
    base shows in the view, and the gradient through an in-place op on a view (which replays
    the view) is the same."""
    from ember.ops import index as index_module
    from ember.ops import shape as shape_module

    def run(fast, x):
        with monkeypatch.context() as patch:
            if not fast:
                patch.setattr(shape_module, "call_unary", _plain_call_unary)
                patch.setattr(index_module, "call_unary", _plain_call_unary)
            return make(x)
    x = _operands(dtype, (2, 3), 0)
    view, plain = run(True, x), run(False, x)
    assert view._data.strides == plain._data.strides and view.shape == plain.shape
    assert np.shares_memory(view._data, x._data) and view._base is x is plain._base
    x.add_(1) if dtype is not ember.bool else x.logical_not_()
    assert view._version == plain._version == x._version == 1
    np.testing.assert_array_equal(view.numpy(), plain.numpy())
    if dtype is ember.float32:
        grads = []
        for fast in (True, False):
            leaf = _operands(dtype, (2, 3), 1, requires_grad=True)
            y = leaf * 1.0
            run(fast, y).mul_(3)  # y's history now goes through the view (CopySlices)
            (y * y).sum().backward()
            grads.append(leaf.grad.numpy())
        np.testing.assert_array_equal(grads[0], grads[1])


def test_pow_and_functional_relu_through_the_fast_entries_match_torch():
    values = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)
    ours, theirs = (ember.tensor(values, requires_grad=True),
                    torch.tensor(values, requires_grad=True))
    for fn in (lambda m, x: x.pow(2), lambda m, x: x ** 3.0, lambda m, x: m.pow(x, x.detach()),
               lambda m, x: m.nn.functional.relu(x), lambda m, x: m.square(x)):
        e, t = fn(ember, ours), fn(torch, theirs)
        assert e.grad_fn.name() == t.grad_fn.name().replace("torch::autograd::", "")
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-6)
        ge, = ember.autograd.grad(e.sum(), ours)
        gt, = torch.autograd.grad(t.sum(), theirs)
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-5, atol=1e-6)
    assert (ember.arange(4) ** 2).dtype is ember.int64  # integers take `call`

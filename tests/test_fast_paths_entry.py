"""The entry-path fast paths of the tiny-op loop (issue 22) against their plain forms and torch.

- the public wrapper's call without keywords (`x.sum()`, `ember.sum(x, 1)`), against the same
  call with keywords, which takes the alias / out= path;
- `_reduce_dims`' table of all dims and its one-int fast path, against the checked path
  (`wrap_dims`) it skips, including out-of-range dims and 0-d tensors;
- `sum` and `mean` calling dispatch directly (`run`), seen by the observers as before: vmap,
  forward-mode AD, the profiler, autocast.
"""
import re

import numpy as np
import pytest

import ember
from ember import _utils
from ember.ops import _dispatch, _op
from ember.ops import reduce as reduce_ops

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int32", "int64", "bool", "float16"]


def _pair(dtype, shape=(3, 4), seed=0):
    values = np.random.default_rng(seed).standard_normal(shape) * 3
    data = values.astype(dtype) if dtype != "bool" else values > 0
    return ember.tensor(data), torch.tensor(data)


def _same(ours, theirs):
    assert str(ours.dtype).replace("ember", "torch") == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy().astype(np.float64),
                               theirs.detach().numpy().astype(np.float64), rtol=1e-3, atol=1e-3)


def _agree(ours, theirs, errors=(RuntimeError, TypeError)):
    """(ours(), theirs()), or (None, None) when torch raises one of `errors` and ember raises
    the same type."""
    try:
        expected = theirs()
    except errors as e:
        with pytest.raises(type(e)):
            ours()
        return None, None
    return ours(), expected


def test_run_is_op_call():
    assert _op.run is _dispatch.call is _op.Op.__call__


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 64])
def test_reduce_dims_fast_paths_match_the_checked_path(ndim):
    assert reduce_ops._reduce_dims(None, ndim) == tuple(range(ndim))
    for dim in range(-ndim - 2, ndim + 2):
        try:
            want = tuple(range(ndim)) if reduce_ops._every_dim(dim) else \
                _utils.wrap_dims(dim, ndim)
        except IndexError as e:
            with pytest.raises(IndexError, match=re.escape(str(e))):
                reduce_ops._reduce_dims(dim, ndim)
            continue
        assert reduce_ops._reduce_dims(dim, ndim) == want
    for dim in ((), [], [0] if ndim else [], np.int64(0)):
        want = tuple(range(ndim)) if reduce_ops._every_dim(dim) else _utils.wrap_dims(dim, ndim)
        assert reduce_ops._reduce_dims(dim, ndim) == want


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_forms_agree_with_each_other_and_torch(dtype):
    e, t = _pair(dtype)
    _same(e.sum(), t.sum())
    _same(ember.sum(e), torch.sum(t))
    _same(e.sum(dim=None), t.sum())
    for dim in (0, 1, -1, -2):
        for keepdim in (False, True):
            want = t.sum(dim, keepdim)
            _same(e.sum(dim, keepdim), want)               # the fast paths
            _same(ember.sum(e, dim, keepdim), want)
            _same(e.sum((dim,), keepdim=keepdim), want)     # the checked path
            _same(e.sum(dim=dim, keepdim=keepdim), want)    # the keyword path
            _same(e.sum(axis=dim, keepdims=keepdim), want)  # torch's NumPy aliases
            _same(e.sum(np.int64(dim), keepdim), want)


def test_sum_dtype_and_out_keep_working():
    e, t = _pair("int32")
    _same(e.sum(dtype=ember.float64), t.sum(dtype=torch.float64))
    _same(e.sum(1, dtype=ember.float32), t.sum(1, dtype=torch.float32))
    out, out_t = ember.empty(3, dtype=ember.float64), torch.empty(3, dtype=torch.float64)
    assert ember.sum(e, 1, out=out) is out
    torch.sum(t, 1, out=out_t)
    _same(out, out_t)
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        ember.sum(e, dim=0, axis=1)


def test_sum_errors_match_torch_on_0d_and_out_of_range_dims():
    scalar_e, scalar_t = ember.tensor(2.5), torch.tensor(2.5)
    for dim in (0, -1):
        _same(scalar_e.sum(dim), scalar_t.sum(dim))
    e, t = _pair("float32")
    for x, y, dim in ((scalar_e, scalar_t, 1), (e, t, 2), (e, t, -3)):
        with pytest.raises(IndexError) as want:
            y.sum(dim)
        with pytest.raises(IndexError, match=re.escape(str(want.value))):
            x.sum(dim)
        with pytest.raises(IndexError, match=re.escape(str(want.value))):
            x.mean(dim)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_mean_forms_agree_with_torch(dtype):
    e, t = _pair(dtype)
    _same(e.mean(), t.mean())
    for dim in (0, -1):
        _same(e.mean(dim), t.mean(dim))
        _same(e.mean(dim, True), t.mean(dim, True))
        _same(ember.mean(e, axis=dim, keepdims=True), torch.mean(t, dim, keepdim=True))
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        ember.ones(3, dtype=ember.int64).mean()


def test_sum_and_mean_record_torchs_nodes_and_gradients():
    e, t = _pair("float64")
    e.requires_grad_(True)
    t.requires_grad_(True)
    for f in (lambda x: x.sum(), lambda x: x.sum(1), lambda x: x.sum(-1, True),
              lambda x: x.mean(), lambda x: x.mean(0)):
        ours, theirs = f(e), f(t)
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
        (g,), (h,) = ember.autograd.grad(ours.sum(), e), torch.autograd.grad(theirs.sum(), t)
        _same(g, h)


def test_observers_still_see_sum_and_mean():
    x = ember.randn(5, 3, 4)
    # vmap: the batch dim is not the sample's dim 0
    np.testing.assert_allclose(ember.vmap(lambda s: s.sum(0))(x).numpy(), x.sum(1).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(ember.vmap(lambda s: s.mean(-1))(x).numpy(),
                               x.mean(-1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ember.vmap(lambda s: s.sum())(x).numpy(),
                               x.sum((1, 2)).numpy(), rtol=1e-5)
    # forward-mode AD: sum is linear, so the tangent is the sum of the tangent
    v = ember.randn(5, 3, 4)
    _, tangent = ember.func.jvp(lambda s: s.sum(1), (x,), (v,))
    np.testing.assert_allclose(tangent.numpy(), v.sum(1).numpy(), rtol=1e-6)
    # the profiler
    from ember.profiler import profile
    with profile() as prof:
        x.sum()
        x.sum(1)
        x.mean(0)
    names = {e.key for e in prof.key_averages()}
    assert {"ember::sum", "ember::sum_dim", "ember::mean_dim"} <= names


def test_autocast_still_sees_sum():
    e, t = _pair("float32")
    with ember.autocast("cpu", dtype=ember.bfloat16):
        ours = e.sum(1)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        theirs = t.sum(1)
    assert str(ours.dtype).replace("ember", "torch") == str(theirs.dtype)


def test_wrapper_without_keywords_is_the_keyword_call():
    x = ember.randn(2, 3)
    np.testing.assert_array_equal(x.reshape(3, 2).numpy(), x.reshape(shape=(3, 2)).numpy())
    np.testing.assert_array_equal(ember.transpose(x, 0, 1).numpy(),
                                  ember.transpose(input=x, dim0=0, dim1=1).numpy())
    with pytest.raises(TypeError):
        ember.sum()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims,keepdim",
                         [((0, 1), False), ((0,), True), ((1,), False), ((), False)])
def test_small_float_sum_kernel_matches_the_general_path(dtype, dims, keepdim):
    """Small float32/float64 sums skip the dtype work; an explicit dtype takes the general
    path, which must give the same array (values, dtype, shape)."""
    a = np.random.default_rng(1).standard_normal((3, 5)).astype(dtype)
    assert a.size < reduce_ops._BLAS_SUM_MIN
    fast = reduce_ops._sum_kernel(np, a, dims=dims, keepdim=keepdim, dtype=None)
    plain = reduce_ops._sum_kernel(np, a, dims=dims, keepdim=keepdim,
                                   dtype=getattr(ember, dtype))
    assert np.asarray(fast).dtype == np.asarray(plain).dtype == a.dtype
    np.testing.assert_array_equal(fast, plain)
    e, t = _pair(dtype, (3, 5))
    _same(e.sum(dims, keepdim) if dims else e.sum(), t.sum(dims, keepdim) if dims else t.sum())


def test_bad_arguments_raise_torchs_type_errors():
    """A number for the tensor, or a bare bool for dim (torch takes one inside a tuple)."""
    x_ours, x_theirs = _pair("float32")
    cases = [("sum", lambda m, x: m.sum(3)), ("mean", lambda m, x: m.mean(3)),
             ("exp", lambda m, x: m.exp(3)), ("bool dim", lambda m, x: x.sum(True)),
             ("bool dim", lambda m, x: x.mean(False)), ("bool dim", lambda m, x: x.amax(True)),
             ("bool dim", lambda m, x: x.logsumexp(True))]
    for name, call in cases:
        with pytest.raises(TypeError) as theirs:
            call(torch, x_theirs)
        with pytest.raises(TypeError) as ours:
            call(ember, x_ours)
        if name != "bool dim":
            assert str(ours.value) == str(theirs.value)
        else:
            assert "bool" in str(ours.value) and "bool" in str(theirs.value)
    _same(x_ours.sum([0, True]), x_theirs.sum([0, True]))


SMALL_SUM_CASES = {
    "vector": lambda m: m.tensor(np.linspace(-3, 5, 16)),
    "matrix_transposed": lambda m: m.tensor(np.linspace(-3, 5, 12).reshape(3, 4)).t(),
    "scalar": lambda m: m.tensor(2.5),
    "empty": lambda m: m.ones(0, 3),
    "just_below_blas": lambda m: m.tensor(np.linspace(-1, 1, reduce_ops._BLAS_SUM_MIN - 1)),
    "large_takes_general_path": lambda m: m.tensor(np.linspace(-1, 1, reduce_ops._BLAS_SUM_MIN)),
}


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", list(SMALL_SUM_CASES))
def test_small_float_total_matches_the_general_path_and_torch(case, dtype, reduction):
    """`x.sum()` and `x.mean()` of a small float tensor (reduce.py's _small_float_total): the
    same value, dtype, node and gradient as the general path (the reduction over every dim
    named) and as torch; a mean of nothing (nan) keeps the general path."""
    e = SMALL_SUM_CASES[case](ember).to(getattr(ember, dtype)).requires_grad_()
    t = SMALL_SUM_CASES[case](torch).to(getattr(torch, dtype)).requires_grad_()
    fast, theirs = getattr(e, reduction)(), getattr(t, reduction)()
    plain = getattr(e, reduction)(tuple(range(e.ndim))) if e.ndim else \
        getattr(e, reduction)(dtype=e.dtype)
    assert isinstance(fast._data, np.ndarray) and fast.shape == ()
    assert fast.dtype is plain.dtype
    np.testing.assert_array_equal(fast.detach().numpy(), plain.detach().numpy())
    _same(fast, theirs)
    assert type(fast.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert type(fast.grad_fn).__name__ in ("SumBackward0", "MeanBackward0")
    (g,), (h,) = ember.autograd.grad(fast * 3, e), torch.autograd.grad(theirs * 3, t)
    _same(g, h)
    with ember.no_grad():
        quiet = getattr(e, reduction)()
    assert quiet.grad_fn is None and not quiet.requires_grad
    np.testing.assert_array_equal(quiet.numpy(), fast.detach().numpy())


@pytest.mark.parametrize("mean", [False, True])
def test_small_float_total_leaves_other_reductions_to_the_general_path(mean):
    """Integer, bool and half tensors, empty ones for a mean, and reductions under an
    observer, do not take the fast path."""
    for dtype in ("int32", "bool", "float16"):
        assert reduce_ops._small_float_total(_pair(dtype)[0], mean) is None
    assert reduce_ops._small_float_total(ember.ones(0), True) is None
    x = ember.randn(5, 4)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        assert reduce_ops._small_float_total(x, mean) is None
    from ember.profiler import profile
    name = "mean" if mean else "sum"
    with profile() as prof:
        getattr(x, name)()
    assert f"ember::{name}" in {e.key for e in prof.key_averages()}
    _, tangent = ember.func.jvp(lambda s: getattr(s, name)(), (x,), (ember.ones(5, 4),))
    assert tangent.item() == pytest.approx(1 if mean else 20)


def test_small_float_total_overflow_is_silent_even_with_warnings_as_errors():
    """torch gives inf silently; NumPy's overflow report must not escape, even as an error."""
    import warnings
    x = ember.full((4,), 3e38)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="warn"):  # a state that is not ember's: NumPy warns
            assert x.sum().item() == float("inf")
            assert x.mean().item() == float("inf")


BINARY = ["add", "sub", "mul", "div"]
OPERANDS = {  # other operand of a float32 / int64 / bool tensor
    "tensor": lambda dtype: _pair(dtype, seed=1),
    "row": lambda dtype: _pair(dtype, shape=(4,), seed=2),
    "float": lambda dtype: (1.5, 1.5),
    "int": lambda dtype: (3, 3),
    "bool": lambda dtype: (True, True),
    "float64 tensor": lambda dtype: _pair("float64", seed=3),
    "0-d int tensor": lambda dtype: (ember.tensor(2), torch.tensor(2)),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("other", sorted(OPERANDS))
def test_binary_functions_fast_path_matches_torch(name, dtype, other):
    """`ember.add(a, b)`, `a.mul(b)`, ... hand a tensor and a tensor or float / int straight
    to `call_binary`: the same results, dtypes and errors as torch's for every operand kind
    (bool operands, which `sub` refuses, and mixed dtypes take the checked path)."""
    a, ta = _pair(dtype)
    b, tb = OPERANDS[other](dtype)
    for ours, theirs in ((getattr(ember, name), getattr(torch, name)),
                         (getattr(ember.Tensor, name), getattr(torch.Tensor, name))):
        result, expected = _agree(lambda: ours(a, b), lambda: theirs(ta, tb))
        if expected is not None:
            _same(result, expected)


@pytest.mark.parametrize("name", BINARY)
def test_binary_functions_fast_path_records_torchs_nodes_and_gradients(name):
    a, ta = _pair("float32")
    b, tb = _pair("float32", seed=1)
    for other, t_other in ((b, tb), (2.5, 2.5)):
        x, tx = a.clone().requires_grad_(), ta.clone().requires_grad_()
        y, ty = getattr(ember, name)(x, other), getattr(torch, name)(tx, t_other)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        y.sum().backward()
        ty.sum().backward()
        _same(x.grad, tx.grad)


def test_binary_functions_keep_alpha_and_rounding_mode():
    a, ta = _pair("float32")
    b, tb = _pair("float32", seed=1)
    for alpha in (2, 0.5, True):
        if alpha is True:  # torch: a bool alpha for float tensors is refused
            with pytest.raises(RuntimeError):
                torch.add(ta, tb, alpha=alpha)
            with pytest.raises(RuntimeError):
                ember.add(a, b, alpha=alpha)
            continue
        _same(ember.add(a, b, alpha=alpha), torch.add(ta, tb, alpha=alpha))
        _same(a.sub(b, alpha=alpha), ta.sub(tb, alpha=alpha))
    for mode in ("trunc", "floor"):
        _same(ember.div(a, b, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))


CAT_CASES = {
    "0-d": lambda m: [m.ones(2), m.tensor(1.0)],
    "0-d first": lambda m: [m.tensor(1.0), m.ones(2)],
    "ndim": lambda m: [m.ones(2, 3), m.ones(2, 3, 1)],
    "fewer dims": lambda m: [m.ones(2, 3), m.ones(2)],
    "size": lambda m: [m.ones(2, 3), m.ones(4, 3), m.ones(2, 4)],
    "legacy empty": lambda m: [m.ones(0), m.ones(2, 3), m.ones(0), m.ones(1, 3)],
    "only empty": lambda m: [m.ones(0), m.ones(0)],
    "empty list": lambda m: [],
    "along dim 1": lambda m: [m.ones(2, 3), m.ones(2, 1)],
    "dim out of range": lambda m: [m.ones(2, 3), m.ones(2, 3)],
}


@pytest.mark.parametrize("case", sorted(CAT_CASES))
@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_cat_checks_numpy_shapes_as_torch_checks_sizes(case, dim):
    """cat compares its inputs' NumPy shape tuples (no Size objects): the same results, and
    the same errors and messages, as torch."""
    try:
        expected = torch.cat(CAT_CASES[case](torch), dim)
    except (RuntimeError, ValueError, IndexError) as e:
        with pytest.raises(type(e)) as caught:
            ember.cat(CAT_CASES[case](ember), dim)
        first_line = str(e).splitlines()[0]
        assert str(caught.value).splitlines()[0].replace("ember", "torch") == first_line
        return
    _same(ember.cat(CAT_CASES[case](ember), dim), expected)


CLAMP_BOUNDS = [(0.0, 1.0), (0, 1), (-1.5, None), (None, 0.25), (2, -2), (True, None),
                (float("nan"), None), (float("-inf"), float("inf"))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "bool"])
@pytest.mark.parametrize("bounds", CLAMP_BOUNDS, ids=str)
def test_clamp_with_number_bounds_matches_the_general_path_and_torch(dtype, bounds):
    """clamp / clamp_min / clamp_max with Python-number bounds enter through `call_numbers`:
    the same values, dtypes and errors as `call` (the op called directly) and as torch, for
    every dtype, 0-d inputs, nan and inf bounds, and min > max."""
    lo, hi = bounds
    for shape in ((3, 4), ()):
        a, ta = _pair(dtype, shape=shape)
        if dtype.startswith("float") and shape:
            a[0, 0] = ta[0, 0] = float("nan")
        forms = [lambda m, x: m.clamp(x, lo, hi)]
        if hi is None and lo is not None:
            forms.append(lambda m, x: m.clamp_min(x, lo))
        if lo is None and hi is not None:
            forms.append(lambda m, x: x.clamp_max(hi))
        for form in forms:
            ours, expected = _agree(lambda: form(ember, a), lambda: form(torch, ta))
            if expected is None:
                continue
            _same(ours, expected)
            np.testing.assert_array_equal(np.isnan(ours.numpy().astype(np.float64)),
                                          np.isnan(expected.numpy().astype(np.float64)))
    from ember.ops import pointwise

    if dtype == "float32" and lo is not None and hi is not None:
        general = pointwise._clamp_scalar(a, lo, hi)  # Op.__call__: dispatch's `call`
        np.testing.assert_array_equal(ember.clamp(a, lo, hi).numpy(), general.numpy())


def test_clamp_fast_path_records_torchs_nodes_and_is_seen_by_observers():
    x, tx = (lib.tensor([-2.0, 0.5, 3.0], requires_grad=True) for lib in (ember, torch))
    for form in (lambda m, t: m.clamp(t, -1.0, 1.0), lambda m, t: t.clamp(min=0.0),
                 lambda m, t: t.clamp_max(1), lambda m, t: m.clamp(t, m.tensor(-1.0), None)):
        y, ty = form(ember, x), form(torch, tx)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        y.sum().backward()
        ty.sum().backward()
        _same(x.grad, tx.grad)
        x.grad = tx.grad = None
    # vmap is an observer: it sees the op and batches it
    batched = ember.func.vmap(lambda t: t.clamp(0.0, 1.0))(ember.tensor([[-1.0, 2.0], [0.5, 3.0]]))
    np.testing.assert_array_equal(batched.numpy(), [[0.0, 1.0], [0.5, 1.0]])


@pytest.mark.parametrize("shape", [(), (4,), (3, 2), (2, 0, 3), (2, 3, 4)])
@pytest.mark.parametrize("count", [1, 3])
def test_stack_as_one_concatenate_matches_numpy_and_torch(shape, count):
    """stack along a dim before the last new one is one concatenate into the result viewed
    with that dim merged into the next; along the new last dim it stays np.stack. Every dim,
    empty and 0-d tensors, strided inputs, and the gradient, against NumPy and torch."""
    rng = np.random.default_rng(count)
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(count)]
    for dim in range(-len(shape) - 1, len(shape) + 1):
        for strided in (False, True):
            data = [a.T.copy().T if strided else a for a in arrays]  # (F-ordered when strided)
            ours = [ember.tensor(a).requires_grad_() for a in data]
            theirs = [torch.tensor(a).requires_grad_() for a in data]
            y, ty = ember.stack(ours, dim), torch.stack(theirs, dim)
            np.testing.assert_array_equal(y.detach().numpy(), np.stack(data, dim))
            assert y.is_contiguous() and tuple(y.shape) == tuple(ty.shape)
            weights = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
            (y * ember.tensor(weights)).sum().backward()
            (ty * torch.tensor(weights)).sum().backward()
            for a, ta in zip(ours, theirs):
                np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())


FLAT_DATA = [[1.0, 2.0], [1, 2], [True, False], [True, 2], [1, 2.5], [True, 0.5], (3, 4.0),
             [2 ** 62, 1], [2 ** 63], [-2 ** 63 - 1], [1e300], [float("nan"), float("inf")],
             3.0, 7, False, 2 ** 64, [0.1] * 40]


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "int32", "uint8", "bool",
                                   "float16"])
@pytest.mark.parametrize("data", FLAT_DATA, ids=str)
def test_tensor_of_flat_python_numbers_matches_torch(data, dtype):
    """`tensor()` of one Python number or a flat list/tuple of them skips the walk over
    nested data: the same dtype, values and errors as torch, with and without dtype=, and
    under another default dtype."""
    for default in ("float32", "float64"):
        previous = torch.get_default_dtype()
        torch.set_default_dtype(getattr(torch, default))
        ember.set_default_dtype(getattr(ember, default))
        try:
            ours, expected = _agree(
                lambda: ember.tensor(data, **({} if dtype is None else
                                              {"dtype": getattr(ember, dtype)})),
                lambda: torch.tensor(data, **({} if dtype is None else
                                              {"dtype": getattr(torch, dtype)})),
                (RuntimeError, TypeError, ValueError, OverflowError))
            if expected is None:
                continue
            assert str(ours.dtype).replace("ember", "torch") == str(expected.dtype)
            assert tuple(ours.shape) == tuple(expected.shape)
            np.testing.assert_array_equal(ours.numpy(), expected.numpy())
        finally:
            torch.set_default_dtype(previous)
            ember.set_default_dtype(getattr(ember, str(previous).split(".")[1]))

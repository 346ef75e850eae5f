"""Indexing beyond the op table: random index expressions against torch (values and
gradients), writes through `x[...] = v` and the `_` methods, node names, and torch's errors.

The rows of tests/specs/index.py cover each op once; here a hypothesis strategy builds index
expressions from ints, slices with steps, None, Ellipsis, int lists/tensors/arrays and bool
masks, and every one must give torch's result and gradient, read or written.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

# ----------------------------------------------------------------------------------------------
# random index expressions
#
# A component is described by plain data, then built for each library by `_build`, so the
# same expression runs as ember and as torch:
#   ("int", i)  ("slice", start, stop, step)  ("none",)  ("ellipsis",)
#   ("list", [..])  ("tensor", [..])  ("array", [..])  ("mask", nested bools)  ("bool", b)


@st.composite
def _component(draw, size, length):
    kind = draw(st.sampled_from(["int", "slice", "slice", "list", "tensor", "array"]))
    if kind == "int":
        return ("int", draw(st.integers(-size, size - 1)))
    if kind == "slice":
        bound = st.none() | st.integers(-size - 2, size + 2)
        return ("slice", draw(bound), draw(bound), draw(st.none() | st.integers(1, 3)))
    values = draw(st.lists(st.integers(-size, size - 1), min_size=length, max_size=length))
    return (kind, values)


@st.composite
def index_cases(draw):
    """(shape, index description). One part per dim (a mask may cover two), then: trailing
    parts dropped, a run of single-dim parts replaced by an Ellipsis, None and bools inserted.
    All advanced parts share one length so they broadcast; a mask is the only advanced part
    when it is used (its count of True values is not controlled)."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    length = draw(st.integers(0, 3))
    mask_at = draw(st.none() | st.integers(0, len(shape) - 1))
    parts, d = [], 0
    while d < len(shape):
        if d == mask_at:
            k = draw(st.integers(1, min(2, len(shape) - d)))
            mask = draw(st.lists(st.booleans(), min_size=_prod(shape[d:d + k]),
                                 max_size=_prod(shape[d:d + k])))
            parts.append(("mask", np.reshape(mask, shape[d:d + k]).tolist()))
            d += k
            continue
        part = _component(shape[d], length)
        if mask_at is not None:
            part = part.filter(lambda c: c[0] in ("int", "slice"))
        parts.append(draw(part))
        d += 1
    if draw(st.booleans()):  # trailing dims left out (an Ellipsis would then shift the rest)
        parts = parts[:draw(st.integers(0, len(parts)))]
    elif draw(st.booleans()):
        singles = [i for i, p in enumerate(parts) if p[0] != "mask"] + [len(parts)]
        start = draw(st.sampled_from(singles))
        stop = start
        while stop < len(parts) and parts[stop][0] != "mask" and draw(st.booleans()):
            stop += 1
        parts[start:stop] = [("ellipsis",)]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), ("none",))
    if draw(st.integers(0, 5)) == 0:  # x[False] has 0 rows, which only broadcasts with 0 or 1
        advanced = any(p[0] in ("list", "tensor", "array", "mask") for p in parts)
        flag = True if advanced else draw(st.booleans())
        parts.insert(draw(st.integers(0, len(parts))), ("bool", flag))
    return shape, parts


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _build(m, parts):
    built = []
    for part in parts:
        kind = part[0]
        if kind == "int":
            built.append(part[1])
        elif kind == "slice":
            built.append(slice(*part[1:]))
        elif kind == "none":
            built.append(None)
        elif kind == "ellipsis":
            built.append(Ellipsis)
        elif kind == "bool":
            built.append(part[1])
        elif kind == "list":
            built.append(list(part[1]))
        elif kind == "tensor":
            built.append(m.tensor(part[1], dtype=m.int64))
        elif kind == "array":
            built.append(np.asarray(part[1], dtype=np.int64))
        else:
            built.append(m.tensor(part[1], dtype=m.bool))
    return tuple(built)


DTYPES = ["float32", "float32", "float64", "int64", "bool", "float16", ml_dtypes.bfloat16]
SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@SETTINGS
@given(index_cases(), st.booleans(), st.sampled_from(DTYPES))
def test_random_getitem_matches_torch(case, transposed, dtype):
    shape, parts = case
    rng = np.random.default_rng(len(parts))
    a = (rng.standard_normal(shape[::-1] if transposed else shape) * 3).astype(dtype)
    a = a.T if transposed else a
    check(lambda m, x: x[_build(m, parts)], [a])


@SETTINGS
@given(index_cases(), st.sampled_from(["full", "row", "scalar", "number"]))
def test_random_setitem_matches_torch(case, value_kind):
    """x[index] = v for the same random expressions: values, and gradients w.r.t. both x
    and v (a write hides what it overwrote; v's gradient counts every read)."""
    shape, parts = case
    rng = np.random.default_rng(len(parts))
    a = rng.standard_normal(shape).astype(np.float32)
    result_shape = tuple(torch.from_numpy(a)[_build(torch, parts)].shape)
    if value_kind == "full":
        v = rng.standard_normal(result_shape).astype(np.float32)
    elif value_kind == "row":
        v = rng.standard_normal(result_shape[-1:]).astype(np.float32)
    else:
        v = np.asarray(rng.standard_normal(), dtype=np.float32)

    def write(m, x, value):
        out = x * 1
        out[_build(m, parts)] = 0.5 if value_kind == "number" else value
        return out

    check(write, [a, v])


# ----------------------------------------------------------------------------------------------
# node names, views and copies


NAMED = ["x[1]", "x[:, 1:3]", "x[None]", "x[...]", "x[:]", "x[1, :]", "x[:, :]", "x[0:3]",
         "x[1, ..., None]", "x[None, 1]", "x[m.tensor(1)]", "x[True]", "x[[0, 1]]",
         "x[x > 0]", "x[0, [1, 2]]", "x[[0, 1], 1:3]", "x[np.array(1)]"]


@pytest.mark.parametrize("expr", NAMED)
def test_node_names_match_torch(expr):
    names = []
    for m in (ember, torch):
        x = m.ones(3, 4, requires_grad=True)
        names.append(eval(expr, {"x": x, "m": m, "np": np}).grad_fn.name())
    assert names[0] == names[1]


def test_basic_index_is_a_view_and_advanced_a_copy():
    x = ember.zeros(3, 4)
    x[1][2] = 5.0          # basic: writes reach x
    x[[1]][0, 0] = 7.0     # advanced: a copy, x is unchanged
    assert x[1, 2].item() == 5.0 and x[1, 0].item() == 0.0
    version = x._version
    x[[0, 0], [1, 1]] = 1.0
    assert x._version == version + 1


def test_shape_mixes_like_torch():
    """Ints are applied first (as torch does), so x[0, :, idx] keeps the sliced dim in front,
    where NumPy's rules would put the index dim first."""
    for expr in ["x[0, :, [0, 1]]", "x[[0, 1], :, 0]", "x[[0, 1], None, [1, 2]]",
                 "x[:, [0, 1], None]", "x[True, [0, 1]]", "x[:, True, [0, 1]]",
                 "x[[0, 1], ..., [1, 2]]"]:
        check(lambda m, x: eval(expr, {"x": x}), [np.arange(60, dtype=np.float32)
                                                  .reshape(3, 4, 5)])


def test_legacy_list_index_is_a_tuple():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    with pytest.warns(UserWarning):
        check(lambda m, x: x[[[0, 1], [1, 2]]], [a])
    check(lambda m, x: x[[0, 1], [1, 2]], [a])


SECOND_ORDER = {
    "index": lambda m, x: x[[0, 0, 2]],
    "basic": lambda m, x: x[1:, 0],
    "gather": lambda m, x: x.gather(1, m.tensor([[1, 1], [0, 1], [0, 0]])),
    "index_select": lambda m, x: x.index_select(0, m.tensor([2, 2])),
    "masked_select": lambda m, x: x.masked_select(x > 0),
    "take": lambda m, x: x.take(m.tensor([5, 0, 5])),
    "scatter_add": lambda m, x: x.scatter_add(0, m.tensor([[1, 1]]), x[:1] ** 2),
    "index_put": lambda m, x: x.index_put((m.tensor([1, 1]),), x[0] ** 2, accumulate=True),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    """The rules are written with differentiable ops, so create_graph=True gives the gradient
    of a gradient (the rule of `index` is index_backward, whose own rule is `index` again)."""
    def fn(m, x):
        y = (SECOND_ORDER[name](m, x) ** 3).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        return g * x
    check(fn, [np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)])


# ----------------------------------------------------------------------------------------------
# writes


def test_setitem_through_a_view_reaches_the_base():
    def fn(m, x, v):
        base = x * 1
        view = base[1:]
        view[[0, 0], 1] = v
        view[:, 0] += v.sum()
        return base
    rng = np.random.default_rng(0)
    check(fn, [rng.standard_normal((3, 4)).astype(np.float32),
               rng.standard_normal(2).astype(np.float32)])


def test_setitem_casts_numbers_and_basic_tensor_values():
    def fn(m, x, v):
        y = x * 1
        y[0] = 2  # an int into a float tensor
        y[1, :2] = v.double()  # basic writes cast tensors (copy_)
        return y
    check(fn, [np.zeros((2, 3), np.float32), np.ones(2, np.float32)])
    check(lambda m, x: _write(x.long(), [0, 1], 1.7), [np.zeros(3, np.float32)], grad=False)
    check(lambda m, x: _write(x.bool(), x > -1, 0), [np.zeros(3, np.float32)], grad=False)


def _write(x, index, value):
    x[index] = value
    return x


def test_setitem_with_repeats_last_write_wins():
    def fn(m, x, v):
        y = x * 1
        y[m.tensor([0, 0, 1])] = v
        return y
    rng = np.random.default_rng(0)
    check(fn, [np.zeros((3, 2), np.float32), rng.standard_normal((3, 2)).astype(np.float32)])


def test_inplace_methods_match_torch():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)

    def fn(m, x, src):
        y = x * 1
        y.index_put_((m.tensor([0, 0]), m.tensor([1, 1])), src[0, :2], accumulate=True)
        y.index_put_((m.tensor(1), m.tensor([0, 2])), src[1, 1])  # a 0-d index tensor
        y.index_add_(1, m.tensor([3, 3, 0]), src[:, :3], alpha=0.5)
        y.index_copy_(0, m.tensor([2]), src[:1])
        y.index_fill_(1, m.tensor([1]), -1.0)
        y.put_(m.tensor([0, 11, 0]), src[0, :3], accumulate=True)
        y.scatter_reduce_(1, m.tensor([[0, 0], [1, 1]]), src[:2, :2], "amax")
        return y
    check(fn, [a, rng.standard_normal((3, 4)).astype(np.float32)])


def test_writing_over_a_saved_result_is_detected():
    """scatter_reduce_ (amax) saves its result; writing over it before backward must fail."""
    def fn(m, x):
        y = x.detach().clone().requires_grad_() * 1
        y.scatter_reduce_(1, m.tensor([[0, 0]]), y[:1, 2:].detach(), "amax")
        y[[0], [1]] = 5.0
        y.sum().backward()
    check_raises(fn, [A])


def test_inplace_on_non_contiguous_target():
    """Repeated positions still add up when the target's memory is not contiguous."""
    rng = np.random.default_rng(0)

    def fn(m, x, src):
        y = (x * 1).t()
        y.index_add_(0, m.tensor([1, 1, 0]), src)
        y.index_put_((m.tensor([2, 2]),), src[:2], accumulate=True)
        return y
    check(fn, [rng.standard_normal((3, 4)).astype(np.float32),
               rng.standard_normal((3, 3)).astype(np.float32)])


def test_scatter_with_a_larger_src_reads_its_corner():
    """torch's own backward rejects a src larger than the index; the gradient is the gathered
    g in src's leading corner and zero elsewhere."""
    x = ember.zeros(3, 4, requires_grad=True)
    src = ember.ones(2, 5, requires_grad=True)
    index = ember.tensor([[0, 1], [2, 0]])
    out = x.scatter_add(1, index, src)
    g = ember.arange(12.0).reshape(3, 4)
    out.backward(g)
    expected = np.zeros((2, 5), np.float32)
    expected[:, :2] = np.take_along_axis(g.numpy()[:2], index.numpy(), axis=1)
    np.testing.assert_array_equal(src.grad.numpy(), expected)
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy())


def test_legacy_scatter_reduce_has_no_derivative():
    x = ember.zeros(3, requires_grad=True)
    y = x.scatter(0, ember.tensor([0, 0]), 2.0, reduce="add")
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="not implemented"):
        y.sum().backward()


def test_where_with_only_a_condition_is_nonzero_as_tuple():
    """pointwise.where hands the one-argument form to index.where_condition."""
    a = np.array([[0, 1, 2], [3, 0, 0]], np.int64)
    check(lambda m, x: m.where(x != 0), [a])
    check(lambda m, x: m.where(x[0, 0] == 0), [a])


def test_searchsorted_batched_matches_numpy_rows():
    rng = np.random.default_rng(0)
    seq = np.sort(rng.integers(0, 20, (4, 33)), axis=1)
    values = rng.integers(-1, 21, (4, 7))
    for right in (False, True):
        got = ember.searchsorted(ember.tensor(seq), ember.tensor(values), right=right).numpy()
        side = "right" if right else "left"
        for row in range(4):
            np.testing.assert_array_equal(got[row], np.searchsorted(seq[row], values[row], side))


# ----------------------------------------------------------------------------------------------
# errors: the same exception type as torch


A = np.arange(12, dtype=np.float32).reshape(3, 4)
I0 = np.array([0, 2, 0])
ERRORS = {
    "int out of range": lambda m, x: x[5],
    "negative out of range": lambda m, x: x[-4],
    "second dim out of range": lambda m, x: x[0, 5],
    "too many indices": lambda m, x: x[0, 0, 0],
    "index of a 0-d tensor": lambda m, x: x[0, 0][0],
    "slice of a 0-d tensor": lambda m, x: x[0, 0][0:1],
    "float index": lambda m, x: x[1.5],
    "float tensor index": lambda m, x: x[m.tensor([1.0])],
    "int8 tensor index": lambda m, x: x[m.tensor([1], dtype=m.int8)],
    "tensor index out of range": lambda m, x: x[m.tensor([5])],
    "list index out of range": lambda m, x: x[:, [0, 4]],
    "mask shape": lambda m, x: x[m.tensor([True, False, True, False])],
    "2-d mask shape": lambda m, x: x[m.ones(3, 3, dtype=m.bool)],
    "indices do not broadcast": lambda m, x: x[[0, 1], [0, 1, 2]],
    "zero step": lambda m, x: x[::0],
    "negative step": lambda m, x: x[::-1],
    "string index": lambda m, x: x["a"],
    "object index": lambda m, x: x[object()],
    "setitem out of range": lambda m, x: _write(x, 5, 1.0),
    "setitem shape mismatch": lambda m, x: _write(x, [0, 1], m.ones(3)),
    "setitem dtype mismatch": lambda m, x: _write(x, [0, 1], m.ones(4, dtype=m.float64)),
    "setitem a list": lambda m, x: _write(x, 0, [1, 2, 3, 4]),
    "setitem mask count": lambda m, x: _write(x, x > 5, m.ones(3)),
    "setitem on a leaf": lambda m, x: _write(x.requires_grad_(), [0], 1.0),
    "index_put values": lambda m, x: x.index_put((m.tensor([0]),), 1.0),
    "index_put None": lambda m, x: x.index_put((None, m.tensor([0])), m.tensor(1.0)),
    "index_put too many": lambda m, x: x.index_put((m.tensor([0]),) * 3, m.tensor(1.0)),
    "setitem into an unbind output": lambda m, x: _write(
        (x.requires_grad_() * 1).unbind(0)[0], [0], 1.0),
    "index_select float index": lambda m, x: x.index_select(0, m.tensor([0.0])),
    "index_select 2-d index": lambda m, x: x.index_select(0, m.tensor([[0]])),
    "index_select out of range": lambda m, x: x.index_select(0, m.tensor([5])),
    "index_select bad dim": lambda m, x: x.index_select(2, m.tensor([0])),
    "index_add count": lambda m, x: x.index_add(0, m.tensor([0, 1]), m.ones(3, 4)),
    "index_add shape": lambda m, x: x.index_add(0, m.tensor([0, 1, 2]), m.ones(3, 5)),
    "index_add dtype": lambda m, x: x.index_add(0, m.tensor([0]), m.ones(1, 4,
                                                                      dtype=m.float64)),
    "index_add range": lambda m, x: x.index_add(0, m.tensor([5]), m.ones(1, 4)),
    "index_copy int32 index": lambda m, x: x.index_copy(0, m.tensor([0]).int(), m.ones(1, 4)),
    "index_copy range": lambda m, x: x.index_copy(0, m.tensor([7]), m.ones(1, 4)),
    "index_fill 1-d value": lambda m, x: x.index_fill(0, m.tensor([0]), m.tensor([1.0])),
    "index_fill range": lambda m, x: x.index_fill(0, m.tensor([7]), 1.0),
    "gather ndim": lambda m, x: x.gather(1, m.tensor([0, 1])),
    "gather range": lambda m, x: x.gather(1, m.tensor([[0, 9]])),
    "gather index too large": lambda m, x: x.gather(1, m.zeros(4, 1, dtype=m.int64)),
    "gather float index": lambda m, x: x.gather(1, m.tensor([[0.0]])),
    "scatter dtype": lambda m, x: x.scatter(1, m.tensor([[0]]), m.ones(1, 1,
                                                                      dtype=m.float64)),
    "scatter src too small": lambda m, x: x.scatter(1, m.tensor([[0, 1]]), m.ones(1, 1)),
    "scatter bad reduce": lambda m, x: x.scatter(1, m.tensor([[0]]), 2.0, reduce="mean"),
    "scatter_reduce bad reduce": lambda m, x: x.scatter_reduce(1, m.tensor([[0]]),
                                                               m.ones(1, 1), "max2"),
    "masked_fill float mask": lambda m, x: x.masked_fill((x > 0).float(), 1.0),
    "masked_fill 1-d value": lambda m, x: x.masked_fill(x > 0, m.tensor([1.0])),
    "masked_fill broadcast": lambda m, x: x.masked_fill(m.tensor([True] * 5), 1.0),
    "masked_fill_ broadcast": lambda m, x: x[0].masked_fill_(x > 0, 1.0),
    "masked_fill overflow": lambda m, x: x.byte().masked_fill(x > 0, 300),
    "masked_select float mask": lambda m, x: x.masked_select(x),
    "masked_scatter too few": lambda m, x: x.masked_scatter(x > 0, m.ones(2)),
    "masked_scatter dtype": lambda m, x: x.masked_scatter(x > 0, m.ones(20,
                                                                       dtype=m.float64)),
    "take range": lambda m, x: x.take(m.tensor([12])),
    "take int32": lambda m, x: x.take(m.tensor([1]).int()),
    "put_ count": lambda m, x: x.put_(m.tensor([1, 2]), m.ones(1)),
    "put_ range": lambda m, x: x.put_(m.tensor([-13]), m.ones(1)),
    "take_along_dim ndim": lambda m, x: m.take_along_dim(x, m.tensor([0, 1]), 1),
    "take_along_dim dtype": lambda m, x: m.take_along_dim(x, m.tensor([[0]]).int(), 1),
    "searchsorted shapes": lambda m, x: m.searchsorted(x, m.tensor([1.0, 2.0])),
    "searchsorted side": lambda m, x: m.searchsorted(x[0], x[0], side="middle"),
    "searchsorted side and right": lambda m, x: m.searchsorted(x[0], x[0], side="left",
                                                               right=True),
    "searchsorted 0-d": lambda m, x: m.searchsorted(x[0, 0], x[0]),
    "bucketize 2-d boundaries": lambda m, x: m.bucketize(x[0], x),
}


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")  # torch reads "a" as a list
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    check_raises(ERRORS[name], [A])


def test_error_messages_name_the_problem():
    x = ember.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not "
                                         r"match the shape of the indexed tensor \[4\] at index 0"):
        x[0, ember.tensor([True, False, True])]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors"):
        x[ember.tensor([0.0])]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 0 with size 4"):
        x[:, [4]]


def test_ufunc_at_in_rounds_combines_repeated_positions_like_ufunc_at():
    """The fallback for array libraries without `multiply.at` (CuPy) equals NumPy's own."""
    from ember.ops.index import _ufunc_at_in_rounds

    rng = np.random.default_rng(0)
    positions = rng.integers(0, 7, 40)
    values = rng.uniform(0.5, 1.5, 40)
    target = rng.uniform(size=7)
    expected = target.copy()
    np.multiply.at(expected, positions, values)
    _ufunc_at_in_rounds(np, np.multiply, target, positions, values)
    np.testing.assert_allclose(target, expected, rtol=1e-12)

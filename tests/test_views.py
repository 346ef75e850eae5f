"""Views against torch: memory sharing, version counters, strides, in-place autograd, errors.

The op table (tests/specs/shape.py) checks values and gradients; this file checks what a view
*is*: the same memory as its base (writes show through both ways), the same version counter,
and the same layout numbers torch reports (stride, storage_offset, is_contiguous, data_ptr).
A hypothesis test runs random chains of view ops in both libraries and compares layouts.
"""
import warnings

import numpy as np
import pytest

import ember

from .oracle import as_numpy, check, check_raises, to_ember, to_torch

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


def _pair(shape=(2, 3, 4), permuted=False, dtype=np.float32):
    """The same data as an ember and a torch tensor (same memory layout in both)."""
    size = int(np.prod(shape))
    if permuted:  # a transposed block: a non-contiguous base, as torch.from_numpy(a.T) gives
        array = np.arange(size, dtype=dtype).reshape(shape[::-1]).T
    else:
        array = np.arange(size, dtype=dtype).reshape(shape)
    return to_ember(array, False), to_torch(array, False)


def _layout(t, base):
    """Everything torch reports about a view's memory, relative to its base. (Empty tensors:
    ember reports storage_offset() 0, torch the offset the view would have.)"""
    if not t.numel():
        return (tuple(t.shape), tuple(t.stride()), t.is_contiguous())
    offset = t.data_ptr() - base.data_ptr()
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t.is_contiguous(), offset)


# (name, view function, writable): each takes the library and a (2, 3, 4) tensor
VIEWS = [
    ("view", lambda m, x: x.view(2, 3, 2, 2), True),
    ("view_size1", lambda m, x: x.view(2, 1, 3, 4, 1), True),
    ("reshape", lambda m, x: x.reshape(2, 3, 2, 2), True),
    ("unflatten", lambda m, x: x.unflatten(2, (2, -1)), True),
    ("transpose", lambda m, x: x.transpose(0, 2), True),
    ("swapaxes", lambda m, x: m.swapaxes(x, -1, 1), True),
    ("t", lambda m, x: x.select(0, 1).t(), True),
    ("t_1d", lambda m, x: x.select(0, 1).select(0, 1).t(), True),
    ("T", lambda m, x: x.select(2, 1).T, True),
    ("mT", lambda m, x: x.mT, True),
    ("mH", lambda m, x: x.mH, True),
    ("adjoint", lambda m, x: x.adjoint(), True),
    ("permute", lambda m, x: x.permute(2, 0, 1), True),
    ("movedim", lambda m, x: x.movedim(0, -1), True),
    ("unsqueeze", lambda m, x: x.unsqueeze(1), True),
    ("unsqueeze_end", lambda m, x: x.unsqueeze(-1), True),
    ("squeeze", lambda m, x: x.narrow(1, 1, 1).squeeze(1), True),
    ("squeeze_all", lambda m, x: x.unsqueeze(0).unsqueeze(3).squeeze(), True),
    ("atleast_3d", lambda m, x: m.atleast_3d(x.select(0, 1).select(0, 2)), True),
    ("narrow", lambda m, x: x.narrow(2, 1, 2), True),
    ("select", lambda m, x: x.select(1, -1), True),
    ("split", lambda m, x: x.split(2, 2)[1], True),
    ("chunk", lambda m, x: x.chunk(3, 1)[2], True),
    ("tensor_split", lambda m, x: x.tensor_split([1], 1)[1], True),
    ("hsplit", lambda m, x: x.hsplit(3)[1], True),
    ("unbind", lambda m, x: x.unbind(2)[3], True),
    ("diagonal", lambda m, x: x.diagonal(1, 1, 2), True),
    ("diagonal_neg", lambda m, x: x.diagonal(-1, 2, 1), True),
    ("unfold", lambda m, x: x.unfold(2, 2, 2), True),
    ("as_strided", lambda m, x: x.as_strided((2, 2), (3, 1), 2), True),
    ("as_strided_of_view", lambda m, x: x.select(0, 1).as_strided((3,), (4,), 1), True),
    ("view_dtype", lambda m, x: x.view(m.int32), True),
    ("expand", lambda m, x: x.unsqueeze(0).expand(2, 2, 3, 4), False),
    ("expand_new_ones", lambda m, x: x.select(1, 0).expand(1, 2, 4), True),
    ("broadcast_to", lambda m, x: m.broadcast_to(x.narrow(1, 0, 1), (2, 3, 4)), False),
    ("unfold_overlap", lambda m, x: x.unfold(2, 3, 1), False),
    ("meshgrid", lambda m, x: m.meshgrid(x.select(0, 0).select(0, 0),
                                         x.select(0, 1).select(0, 1), indexing="xy")[0], False),
    ("flatten_self", lambda m, x: x.flatten(1, 1), True),
]
VIEW_PARAMS = [pytest.param(fn, writable, permuted, id=f"{name}-{'perm' if permuted else 'c'}")
               for name, fn, writable in VIEWS for permuted in (False, True)]


@pytest.mark.parametrize("fn,writable,permuted", VIEW_PARAMS)
def test_view_layout_matches_torch(fn, writable, permuted):
    eb, tb = _pair(permuted=permuted)
    ev, tv = fn(ember, eb), fn(torch, tb)
    assert _layout(ev, eb) == _layout(tv, tb)
    np.testing.assert_array_equal(as_numpy(ev), as_numpy(tv))
    if ev.dtype is eb.dtype:  # torch leaves `_base` unset on dtype views; ember needs it
        assert (ev._base is eb) == (tv._base is tb)
    assert (ev is eb) == (tv is tb)


@pytest.mark.parametrize("fn,writable,permuted", VIEW_PARAMS)
def test_view_shares_memory_and_version(fn, writable, permuted):
    eb, tb = _pair(permuted=permuted)
    ev, tv = fn(ember, eb), fn(torch, tb)
    # a write into the base shows in the view
    eb.add_(100)
    tb.add_(100)
    np.testing.assert_array_equal(as_numpy(ev), as_numpy(tv))
    assert ev._version == eb._version == tv._version == tb._version
    if not writable:
        return
    # a write into the view shows in the base
    ev.mul_(-1)
    tv.mul_(-1)
    np.testing.assert_array_equal(as_numpy(eb), as_numpy(tb))
    assert ev._version == eb._version == tv._version


@pytest.mark.parametrize("fn", [
    lambda m, x: x.unsqueeze(0).expand(2, 2, 3, 4),
    lambda m, x: m.broadcast_to(x.narrow(1, 0, 1), (2, 3, 4)),
])
def test_writing_into_overlapping_view_fails_like_torch(fn):
    def write(m):
        x = to_torch(np.zeros((2, 3, 4), np.float32), False) if m is torch else \
            ember.zeros(2, 3, 4)
        fn(m, x).add_(1)
    check_raises(write)


def test_views_made_under_no_grad_share_version():
    eb, tb = _pair()
    with ember.no_grad():
        ev = eb.transpose(0, 1)
    with torch.no_grad():
        tv = tb.transpose(0, 1)
    ev.add_(1)
    tv.add_(1)
    assert ev._base is eb and tv._base is tb
    assert eb._version == ev._version == tb._version == tv._version


COPIES = [
    lambda m, x: x.flip(0),
    lambda m, x: x.roll(1, 2),
    lambda m, x: x.repeat(1, 1, 1),
    lambda m, x: x.tile((1,)),
    lambda m, x: x.repeat_interleave(1, 0),
    lambda m, x: m.cat([x]),
    lambda m, x: m.stack([x]),
    lambda m, x: x.tril(),
    lambda m, x: x.rot90(0),
    lambda m, x: x.select(0, 0).diag(),
    lambda m, x: x.diag_embed(),
    lambda m, x: x.mT.ravel(),
]


@pytest.mark.parametrize("fn", COPIES)
@pytest.mark.parametrize("permuted", [False, True])
def test_copying_ops_do_not_share_memory(fn, permuted):
    eb, tb = _pair(permuted=permuted)
    ec, tc = fn(ember, eb), fn(torch, tb)
    before = as_numpy(ec).copy()
    eb.add_(1)
    tb.add_(1)
    np.testing.assert_array_equal(as_numpy(ec), before)
    np.testing.assert_array_equal(as_numpy(ec), as_numpy(tc))
    assert tuple(ec.stride()) == tuple(tc.stride())


def test_ravel_and_reshape_view_only_when_contiguous():
    for permuted in (False, True):
        eb, tb = _pair(permuted=permuted)
        for fn in (lambda x: x.ravel(), lambda x: x.reshape(-1), lambda x: x.flatten()):
            ev, tv = fn(eb), fn(tb)
            eb.add_(1)
            tb.add_(1)
            np.testing.assert_array_equal(as_numpy(ev), as_numpy(tv))
            assert _layout(ev, ev) == _layout(tv, tv)


# ----------------------------------------------------------------------------------------------
# view() and its errors


@pytest.mark.parametrize("prefix,target,shape,permuted", [
    (lambda x: x, (-1,), (2, 3, 4), True),
    (lambda x: x, (6, 4), (2, 3, 4), True),
    (lambda x: x.mT, (2, 12), (2, 3, 4), False),
    (lambda x: x.narrow(1, 0, 2), (-1,), (3, 4), False),
    (lambda x: x.t().unsqueeze(1), (12,), (3, 4), False),
])
def test_view_fails_on_incompatible_strides_like_torch(prefix, target, shape, permuted):
    eb, tb = _pair(shape, permuted)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        prefix(tb).view(*target)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        prefix(eb).view(*target)
    # reshape copies instead: the result no longer follows the base
    er, tr = prefix(eb).reshape(*target), prefix(tb).reshape(*target)
    assert _layout(er, er) == _layout(tr, tr)
    eb.add_(1)
    tb.add_(1)
    np.testing.assert_array_equal(as_numpy(er), as_numpy(tr))


@pytest.mark.parametrize("fn", [
    lambda m, x: x.view(5, -1),
    lambda m, x: x.view(-1, -1),
    lambda m, x: x.view(-2, 12),
    lambda m, x: x.view(0, -1),
    lambda m, x: x.view(m.float16).view(m.float64).narrow(-1, 0, 1).view(m.float16).t()
    .view(m.float32),
    lambda m, x: x.narrow(2, 1, 2).view(m.float64),
    lambda m, x: x.narrow(2, 1, 3).view(m.float64),
    lambda m, x: x.select(0, 0).select(0, 0).select(0, 0).view(m.float16),
    lambda m, x: x.t().view(m.int16),
])
def test_view_errors(fn):
    check_raises(fn, [np.zeros((2, 3, 4), np.float32)])


def test_view_dtype_is_not_differentiable_and_shares_memory():
    def fn(m, a):
        v = a.view(m.int32)
        return v, v.requires_grad, v._version
    check(fn, [np.ones((2, 3), np.float32)])


# ----------------------------------------------------------------------------------------------
# in-place writes through views, with autograd, against torch


def _through(m, a, write, *extra):
    """y = a * 2 (not a leaf), write into a view of y, then use y and a.y-dependent value."""
    y = a * 2
    write(y, *extra)
    return y * y, y.sum()


INPLACE = [
    ("transpose_index_mul", lambda m, a: _through(m, a, lambda y: y.transpose(0, 1)[0].mul_(2))),
    ("diagonal_add", lambda m, a: _through(m, a, lambda y: y.diagonal().add_(1))),
    ("diagonal_offset_mul", lambda m, a: _through(m, a, lambda y: y.diagonal(1).mul_(a[0, 0]))),
    ("tensor_split_zero", lambda m, a: _through(m, a, lambda y: y.tensor_split(2)[1].zero_())),
    ("narrow_mul", lambda m, a: _through(m, a, lambda y: y.narrow(1, 1, 2).mul_(3))),
    ("select_t_add", lambda m, a: _through(m, a, lambda y: y.t().select(0, 2).add_(y[:, 1]))),
    ("view_chain", lambda m, a: _through(m, a, lambda y: y.view(12).narrow(0, 2, 5).mul_(-1))),
    ("unsqueeze_squeeze", lambda m, a: _through(
        m, a, lambda y: y.unsqueeze(0).movedim(0, 2).squeeze(2).mT.mul_(2))),
    ("unfold_windows", lambda m, a: _through(m, a, lambda y: y.unfold(1, 2, 2).mul_(5))),
    ("as_strided", lambda m, a: _through(m, a, lambda y: y.as_strided((2,), (5,), 1).mul_(4))),
    ("permute_copy", lambda m, a: _through(m, a, lambda y: y.permute(1, 0).copy_(-y.t()))),
    ("t_then_write", lambda m, a: _through(m, a, lambda y: y.narrow(0, 0, 2).t_().mul_(3))),
    ("scatter_functions", lambda m, a: (m.diagonal_scatter(a, a[0, :3] * 2),
                                        m.slice_scatter(a, a[:, :1], 1, 2, 3))),
]


def test_inplace_through_views_second_derivative():
    def fn(a):
        y = a * a
        y.diagonal().mul_(a.diagonal())
        y.narrow(0, 1, 1).t().add_(a[2:].t())
        return y
    a = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradgradcheck(fn, [a])


@pytest.mark.parametrize("fn", [pytest.param(f, id=name) for name, f in INPLACE])
def test_inplace_through_views_autograd(fn):
    check(fn, [np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)])


def test_inplace_with_other_operand_through_view():
    def fn(m, a, b):
        y = a * 1
        y.narrow(1, 0, 2).copy_(b)
        y.select(0, 1).mul_(b[0, 0])
        return y
    rng = np.random.default_rng(1)
    check(fn, [rng.standard_normal((3, 4)).astype(np.float32),
               rng.standard_normal((3, 2)).astype(np.float32)])


def test_view_grad_fn_regenerates_after_base_changes():
    def fn(m, a):
        y = a * 1
        v = y.diagonal()
        w = y.narrow(0, 1, 2)
        y.mul_(2)  # the base changes: both views must now see the new history
        w.add_(1)  # and a write through one view changes the other's history too
        return v * v, w * 3
    check(fn, [np.random.default_rng(2).standard_normal((3, 3)).astype(np.float32)])


def test_inplace_view_of_leaf_fails_like_torch():
    def fn(m, a):
        a.requires_grad_()
        a.diagonal().add_(1)
    check_raises(fn, [np.ones((3, 3), np.float32)])


@pytest.mark.parametrize("write", [
    lambda y: y.split(2)[1].zero_(),
    lambda y: y.chunk(2, 1)[0].mul_(2),
    lambda y: y.unbind(0)[1].add_(1),
    lambda y: y.split(1)[0].select(1, 0).add_(1),
])
def test_inplace_on_multi_output_views_fails_like_torch(write):
    def fn(m, a):
        write(a.requires_grad_() * 1)
    check_raises(fn, [np.ones((4, 3), np.float32)])


def test_inplace_on_multi_output_views_allowed_without_grad():
    eb, tb = _pair((4, 3))
    eb.split(2)[1].zero_()
    tb.split(2)[1].zero_()
    np.testing.assert_array_equal(as_numpy(eb), as_numpy(tb))


# ----------------------------------------------------------------------------------------------
# in-place view ops (t_, transpose_, squeeze_, unsqueeze_, as_strided_)


@pytest.mark.parametrize("op", [
    lambda x: x.t_(), lambda x: x.transpose_(0, 1), lambda x: x.unsqueeze_(1),
    lambda x: x.unsqueeze_(0).squeeze_(0), lambda x: x.swapdims_(1, 0),
    lambda x: x.as_strided_((3, 2), (1, 3), 0),
])
def test_inplace_view_ops_change_layout_and_version(op):
    eb, tb = _pair((2, 3))
    ev, tv = eb.narrow(0, 0, 2), tb.narrow(0, 0, 2)
    assert op(eb) is eb and op(ev) is ev
    op(tb)
    op(tv)
    assert _layout(eb, eb) == _layout(tb, tb) and _layout(ev, eb) == _layout(tv, tb)
    assert eb._version == tb._version and ev._base is eb
    np.testing.assert_array_equal(as_numpy(ev), as_numpy(tv))


def test_inplace_view_op_invalidates_saved_tensor_like_torch():
    def fn(m, a):
        y = a * 1
        z = y * y
        y.t_()
        z.sum().backward()
    check_raises(fn, [np.ones((2, 3), np.float32)])


def test_inplace_view_op_on_leaf_fails_like_torch():
    check_raises(lambda m, a: a.requires_grad_().t_(), [np.ones((2, 3), np.float32)])


# ----------------------------------------------------------------------------------------------
# properties, warnings, helpers


@pytest.mark.parametrize("name", ["T", "mT", "H", "mH"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_transpose_properties(name, shape):
    inputs = [np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            getattr(to_torch(inputs[0], False), name)
        except RuntimeError:
            check_raises(lambda m, a: getattr(a, name), inputs)
            return
        check(lambda m, a: getattr(a, name), inputs)


@pytest.mark.parametrize("name,shape", [("T", ()), ("T", (3,)), ("T", (2, 3, 4)), ("mT", ()),
                                        ("mH", ()), ("H", ())])
def test_transpose_properties_warn_where_torch_deprecates(name, shape):
    with pytest.warns(UserWarning, match="deprecated"):
        getattr(ember.zeros(shape), name)


def test_adjoint():
    check(lambda m, a: (a.adjoint(), m.adjoint(a)), [np.ones((2, 3, 4), np.float32)])
    check_raises(lambda m, a: a.adjoint(), [np.ones(3, np.float32)])
    with pytest.warns(UserWarning, match="deprecated"):
        ember.zeros(()).adjoint()


def test_meshgrid_warns_without_indexing():
    with pytest.warns(UserWarning, match="indexing"):
        ember.meshgrid(ember.zeros(2), ember.zeros(3))


@pytest.mark.parametrize("shapes", [[(2, 3), (3,)], [2, (3, 1)], [()], [], [(0, 1), (2,)],
                                    [(1, 4), (3, 1), (2, 1, 1)]])
def test_broadcast_shapes(shapes):
    assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))
    assert isinstance(ember.broadcast_shapes(*shapes), ember.Size)


@pytest.mark.parametrize("fn", [
    lambda m: m.broadcast_shapes((2, 3), (3, 2)),
    lambda m: m.broadcast_tensors(m.zeros(2, 3), m.zeros(2)),
])
def test_broadcast_errors(fn):
    check_raises(fn)


# ----------------------------------------------------------------------------------------------
# errors of the whole family: same exception type as torch


ERRORS = [
    lambda m, x: x.permute(0, 1), lambda m, x: x.permute(0, 0, 1),
    lambda m, x: x.transpose(0, 3), lambda m, x: x.t(),
    lambda m, x: x.movedim((0, 1), (2,)), lambda m, x: x.movedim((0, 0), (1, 2)),
    lambda m, x: x.expand(3, 4), lambda m, x: x.expand(3, 3, 4), lambda m, x: x.expand(-1, 2, 3, 4),
    lambda m, x: x.squeeze((0, 0)), lambda m, x: x.unsqueeze(4),
    lambda m, x: x.flatten(2, 1), lambda m, x: x.unflatten(1, (2, 2)),
    lambda m, x: x.unflatten(1, ()),
    lambda m, x: x.narrow(0, 3, 0), lambda m, x: x.narrow(0, 1, 5), lambda m, x: x.narrow(0, 0, -1),
    lambda m, x: x.select(1, 3), lambda m, x: x.select(3, 0), lambda m, x: x.sum().select(0, 0),
    lambda m, x: x.split(-1), lambda m, x: x.split(0), lambda m, x: x.split([1, 1], 1),
    lambda m, x: x.split([4, -1], 1), lambda m, x: x.sum().split(1),
    lambda m, x: x.chunk(0), lambda m, x: x.sum().chunk(1),
    lambda m, x: x.tensor_split(0), lambda m, x: x.sum().tensor_split(1),
    lambda m, x: x.tensor_split(m.zeros(2, 2, dtype=m.int64)),
    lambda m, x: x.tensor_split(m.zeros(2)),
    lambda m, x: x.hsplit(2), lambda m, x: x.vsplit(0), lambda m, x: x.select(0, 0).dsplit(2),
    lambda m, x: x.sum().hsplit(1), lambda m, x: x.unbind(3), lambda m, x: x.sum().unbind(),
    lambda m, x: x.diagonal(0, 1, 1), lambda m, x: x.diagonal(0, 0, 3),
    lambda m, x: x.diag_embed(0, 1, 1), lambda m, x: x.sum().diag_embed(), lambda m, x: x.diag(),
    lambda m, x: x.sum().diag(),
    lambda m, x: x.unfold(1, 5, 1), lambda m, x: x.unfold(1, 2, 0), lambda m, x: x.unfold(3, 1, 1),
    lambda m, x: x.as_strided((2, 2), (1, 2), 30), lambda m, x: x.as_strided((2,), (1, 1)),
    lambda m, x: x.as_strided((2,), (-1,)), lambda m, x: x.as_strided((2,), (1,), -1),
    lambda m, x: x.as_strided((-1,), (1,)), lambda m, x: x.as_strided((25,), (1,)),
    lambda m, x: m.cat([]), lambda m, x: m.cat([x, x.sum()]), lambda m, x: m.cat([x, x[0]]),
    lambda m, x: m.cat([x, x.narrow(1, 0, 2)], 2), lambda m, x: m.cat([x, x], 3),
    lambda m, x: m.cat([x, 1]),
    lambda m, x: m.stack([]), lambda m, x: m.stack([x, x[0]]), lambda m, x: m.stack([x], 4),
    lambda m, x: m.hstack([]), lambda m, x: m.vstack([]), lambda m, x: m.dstack([]),
    lambda m, x: m.column_stack([]),
    lambda m, x: x.repeat(2), lambda m, x: x.repeat(1, 2, -1),
    lambda m, x: x.repeat_interleave(-1), lambda m, x: x.repeat_interleave(2, output_size=3),
    lambda m, x: x.repeat_interleave(m.tensor([1, 2]), dim=1),
    lambda m, x: x.repeat_interleave(m.tensor([1, -2, 1]), dim=1),
    lambda m, x: x.repeat_interleave(m.ones(2, 2, dtype=m.int64), dim=1),
    lambda m, x: x.sum().repeat_interleave(2, dim=0),
    lambda m, x: x.flip(0, 0), lambda m, x: x.flip(3), lambda m, x: x.select(0, 0).select(0, 0)
    .fliplr(), lambda m, x: x.sum().flipud(),
    lambda m, x: x.roll((1, 2), 0), lambda m, x: x.roll(1, (0, 1)), lambda m, x: x.roll(()),
    lambda m, x: x.sum().roll(1, 0), lambda m, x: x.roll(1, 3),
    lambda m, x: x.rot90(1, (0, 0)), lambda m, x: x.rot90(1, (0,)),
    lambda m, x: x.select(0, 0).select(0, 0).rot90(),
    lambda m, x: x.select(0, 0).select(0, 0).tril(), lambda m, x: x.select(0, 0).select(0, 0)
    .triu_(), lambda m, x: x.sum().diagflat(1).t().view(-1, 3),
    lambda m, x: m.meshgrid(x, indexing="ij"), lambda m, x: m.meshgrid(indexing="ij"),
    lambda m, x: m.meshgrid(x[0, 0], x[0, 0].long(), indexing="ij"),
    lambda m, x: m.meshgrid(x[0, 0], indexing="yx"),
    lambda m, x: x.mT.view(-1), lambda m, x: x.sum().view(2),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_like_torch(fn):
    check_raises(fn, [np.zeros((2, 3, 4), np.float32)])


# ----------------------------------------------------------------------------------------------
# random chains of view ops: values and layouts equal torch's at every step


def _draw_step(data, shape):
    """One view op valid for `shape`, as (name, function of (library, tensor))."""
    n = len(shape)
    choices = ["unsqueeze", "reshape", "view", "expand", "squeeze", "permute", "movedim"]
    if n >= 1:
        choices += ["transpose", "narrow", "select", "unfold", "split", "chunk", "unbind"]
    if n >= 2:
        choices += ["diagonal", "mT"]
    if n <= 2:
        choices += ["t"]
    kind = data.draw(st.sampled_from(choices))
    dim = st.integers(-n, n - 1) if n else st.just(0)
    if kind == "unsqueeze":
        d = data.draw(st.integers(-n - 1, n))
        return kind, lambda m, x: x.unsqueeze(d)
    if kind in ("reshape", "view"):
        target = _draw_shape(data, shape)
        return kind, lambda m, x: getattr(x, kind)(target)
    if kind == "expand":
        lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
        sizes = [data.draw(st.sampled_from([1, 2, 3, -1])) if s == 1 else
                 data.draw(st.sampled_from([s, -1])) for s in shape]
        return kind, lambda m, x: x.expand(tuple(lead + sizes))
    if kind == "squeeze":
        d = data.draw(st.none() | dim)
        return kind, lambda m, x: x.squeeze() if d is None else x.squeeze(d)
    if kind == "permute":
        order = data.draw(st.permutations(range(n)))
        return kind, lambda m, x: x.permute(tuple(order))
    if kind == "movedim":
        src, dst = (data.draw(dim), data.draw(dim)) if n else (0, 0)
        return kind, lambda m, x: x.movedim(src, dst)
    if kind == "transpose":
        d0, d1 = data.draw(dim), data.draw(dim)
        return kind, lambda m, x: x.transpose(d0, d1)
    if kind == "t":
        return kind, lambda m, x: x.t()
    if kind == "mT":
        return kind, lambda m, x: x.mT
    d = data.draw(dim)
    size = shape[d]
    if kind == "narrow":
        start = data.draw(st.integers(0, size))
        length = data.draw(st.integers(0, size - start))
        return kind, lambda m, x: x.narrow(d, start, length)
    if kind == "select":
        if size == 0:
            return "t", lambda m, x: x.movedim(0, 0)
        index = data.draw(st.integers(-size, size - 1))
        return kind, lambda m, x: x.select(d, index)
    if kind in ("split", "chunk", "unbind"):
        if size == 0:
            return "t", lambda m, x: x.movedim(0, 0)
        k = data.draw(st.integers(1, size))
        i = data.draw(st.integers(0, -(-size // k) - 1))
        if kind == "unbind":
            return kind, lambda m, x: x.unbind(d)[k - 1]
        return kind, lambda m, x: getattr(x, kind)(k, d)[i]
    if kind == "unfold":
        width = data.draw(st.integers(0, size))
        step = data.draw(st.integers(1, 3))
        return kind, lambda m, x: x.unfold(d, width, step)
    d2 = data.draw(dim.filter(lambda k: k % n != d % n))
    offset = data.draw(st.integers(-3, 3))
    return kind, lambda m, x: x.diagonal(offset, d, d2)


def _draw_shape(data, shape):
    """A shape with the same number of elements: dims merged, split, or 1s added/removed."""
    sizes = list(shape)
    for _ in range(data.draw(st.integers(1, 3))):
        move = data.draw(st.sampled_from(["merge", "split", "one", "drop", "flat"]))
        if move == "merge" and len(sizes) >= 2:
            i = data.draw(st.integers(0, len(sizes) - 2))
            sizes[i:i + 2] = [sizes[i] * sizes[i + 1]]
        elif move == "split" and sizes:
            i = data.draw(st.integers(0, len(sizes) - 1))
            divisors = [k for k in range(1, sizes[i] + 1) if sizes[i] % k == 0] or [1]
            k = data.draw(st.sampled_from(divisors))
            sizes[i:i + 1] = [k, sizes[i] // k] if sizes[i] else [0, 1]
        elif move == "one":
            sizes.insert(data.draw(st.integers(0, len(sizes))), 1)
        elif move == "drop" and 1 in sizes:
            sizes.remove(1)
        elif move == "flat":
            sizes = [-1] if 0 not in sizes else [int(np.prod(sizes))]
    return tuple(sizes)


@hypothesis.settings(max_examples=100, deadline=None)
@hypothesis.given(st.data())
def test_random_view_chains_match_torch(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 4), max_size=4)))
    order = data.draw(st.permutations(range(len(shape))))
    array = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape).transpose(order)
    e, t = to_ember(array, False), to_torch(array, False)
    eb, tb = e, t
    for _ in range(data.draw(st.integers(1, 6))):
        name, step = _draw_step(data, tuple(t.shape))
        try:
            t_next = step(torch, t)
        except (RuntimeError, IndexError) as error:
            with pytest.raises(type(error)):
                step(ember, e)
            continue
        e = step(ember, e)
        t = t_next
        copied = t.untyped_storage().data_ptr() != tb.untyped_storage().data_ptr()
        assert copied == (e.untyped_storage().data_ptr() != eb.untyped_storage().data_ptr())
        if copied:  # reshape had to copy: later layouts are relative to the new memory
            eb, tb = e, t
        assert _layout(e, eb) == _layout(t, tb), name
        np.testing.assert_array_equal(as_numpy(e), as_numpy(t), err_msg=name)
        assert e._version == t._version


@pytest.mark.parametrize("shape", [(0, 3, 5, 5), (3, 0), (0,), (2, 0, 4)])
def test_empty_tensors_report_contiguous_strides_like_torch(shape):
    """NumPy gives an empty array zero strides; torch reports contiguous ones."""
    assert ember.zeros(*shape).stride() == torch.zeros(*shape).stride()
    assert ember.zeros(*shape).stride(-1) == torch.zeros(*shape).stride(-1)


def test_writes_into_expanded_arrays_are_refused_without_a_writeable_flag():
    """CuPy arrays have no read-only flag: there a stride of 0 over a dim longer than 1 is what
    marks an expanded tensor. A NumPy array seen without its flag stands in for one here."""
    import types

    from ember.ops._dispatch import _check_writeable

    def flagless(a):
        return types.SimpleNamespace(flags=types.SimpleNamespace(), shape=a.shape,
                                     strides=a.strides, size=a.size)

    expanded = np.broadcast_to(np.ones((1, 3)), (4, 3))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        _check_writeable(flagless(expanded))
    for fine in (np.ones((4, 3)), np.broadcast_to(np.ones((1, 3)), (1, 3)), np.ones((0, 3))):
        _check_writeable(flagless(fine))

"""Rows for ember/ops/index.py.

Index tensors are built inside the lambdas (`m.tensor([...])`) so each row controls repeats:
most rows hit the same position twice, which is where scatter-style gradients must add up.
Behaviour beyond these rows (errors, in-place forms, random index expressions) is in
tests/test_indexing.py.
"""
import numpy as np

from ._spec import B, I, Spec, T


def _idx(m, *values):
    return m.tensor(list(values))


def _setitem(index):
    """A function writing v into a copy of a at `index(m)` (x[idx] = v is index_put_)."""
    def fn(m, a, v):
        out = a * 1
        out[index(m)] = v
        return out
    return fn


def _iadd(m, a, v):
    out = a * 1
    out[_idx(m, 0, 2, 0)] += v  # getitem, add_, then setitem: repeats read then write once
    return out


def _put(m, a, v):
    out = a * 1
    out.put_(_idx(m, 0, 5, -1), v)
    return out


def _scatter_inplace(m, a, src):
    out = a * 1
    out.scatter_(1, _idx(m, [0, 1], [2, 0]), src)
    out.scatter_add_(0, _idx(m, [1, 1]), src[:1])
    return out


def _masked_inplace(m, a, v):
    out = a * 1
    out.masked_fill_(a > 0, v[0])
    return out.masked_scatter_(a < 0, v.expand(12) * 2)


DUP = {"gradcheck": False}  # see the setitem rows
REDUCE_CASES = [(T(3, 4), T(2, 3)), (T(3, 4, dtype="float64"), T(2, 3, dtype="float64"))]


def _scatter_reduce(reduce, include_self=True):
    return lambda m, a, src: a.scatter_reduce(1, _idx(m, [0, 1, 0], [2, 2, 2]), src, reduce,
                                              include_self=include_self)


SPECS = [
    # basic indexing: views named after the last view torch applies
    Spec("getitem", lambda m, a: (a[1], a[:, 1:3], a[None, ..., ::2], a[-1, -1], a[...],
                                  a[1:, None], a[-3:-1, ::3], a[True], a[False]),
         [(T(3, 4),), (T(4, 3, t=True),), (T(3, 4, dtype="int32"),)],
         ops=["getitem", "getitem_select", "getitem_unsqueeze", "getitem_alias",
              "basic_index_backward"]),
    Spec("getitem_0d", lambda m, a: (a[None], a[...], a[True], a[None, None]), [(T(),)],
         ops=["getitem_unsqueeze"]),
    # advanced indexing (copies); repeated indices accumulate in the gradient
    Spec("index", lambda m, a: (a[_idx(m, 0, 2, 0)], a[:, [1, 1, 3]], a[a > 0],
                                a[[0, 2], ..., [1, 1]], a[0, :, _idx(m, [0, 1], [1, 1])],
                                a[_idx(m, -1, 0), 1:, None], a[None, [True, False, True]],
                                a[_idx(m, 1).int(), [0, 0]], a[_idx(m, 0, 1), True]),
         [(T(3, 4, 2),), (T(3, 4, 2, t=True),), (T(3, 4, 2, dtype="bfloat16"),)],
         ops=["index", "index_backward"]),
    Spec("index_mask", lambda m, a, mask: (a[mask], a[:, mask[0]], a[mask[:, 0], 1:]),
         [(T(3, 4), B(3, 4)), (I(3, 4), B(3, 4))], ops=["index"]),
    Spec("index_mask_empty", lambda m, a, mask: (a[mask], a[mask[:, 0]]), [(T(0, 4), B(0, 4))],
         ops=["index"]),
    Spec("index_empty", lambda m, a: (a[[]], a[_idx(m, 1)[:0]], a[False, 0]), [(T(3, 4),)],
         ops=["index"]),
    # writes: x[idx] = v is index_put_. On repeats the last write wins, yet torch gives every
    # written element of v the gradient of its position -- finite differences see only the
    # last one, so rows with repeated writes skip gradcheck (`DUP`).
    Spec("setitem", _setitem(lambda m: (_idx(m, 0, 2, 0),)), [(T(3, 4), T(3, 4)),
                                                             (T(3, 4), T(4)), (T(3, 4), T())],
         ops=["index_put"], **DUP),
    Spec("setitem_mixed", _setitem(lambda m: (slice(1, None), _idx(m, 2, 0))),
         [(T(3, 4), T(2, 2)), (T(3, 4), T(1))], ops=["index_put"]),
    Spec("setitem_mask", lambda m, a, v: _setitem(lambda m: a > 0)(m, a, v),
         [(T(3, 4), T())], ops=["index_put"]),
    Spec("setitem_scalar", lambda m, a: _setitem(lambda m: ([1, 1], slice(None, 2)))(m, a, 2.5),
         [(T(3, 4),), (I(3, 4),)], ops=["index_put"]),
    Spec("setitem_basic", _setitem(lambda m: (1, slice(None, None, 2))), [(T(3, 4), T(2))],
         ops=["copy"]),
    Spec("setitem_iadd", _iadd, [(T(3, 4), T(4))], ops=["index_put", "index"], **DUP),
    Spec("index_put", lambda m, a, v: (m.index_put(a, (_idx(m, 0, 2, 0),), v),
                                       a.index_put((_idx(m, 1, 1), _idx(m, 3, 3)), v[:1, 0],
                                                   accumulate=True)),
         [(T(3, 4), T(3, 4))], ops=["index_put"], **DUP),
    # along one dim
    Spec("index_select", lambda m, a: (m.index_select(a, 1, _idx(m, 2, 0, 2)),
                                       a.index_select(0, _idx(m, 1).int()),
                                       a.index_select(-1, _idx(m, 1)[:0])),
         [(T(3, 4),), (T(4, 3, t=True),), (I(3, 4),)]),
    Spec("index_add", lambda m, a, s: (a.index_add(0, _idx(m, 0, 2, 0), s),
                                       m.index_add(a, 0, _idx(m, 1, 1, 1), s, alpha=-2)),
         [(T(3, 4), T(3, 4)), (T(3, 4, dtype="float64"), T(3, 4, dtype="float64"))]),
    Spec("index_copy", lambda m, a, s: a.index_copy(1, _idx(m, 3, 0), s),
         [(T(3, 4), T(3, 2)), (T(3, 4, t=True), T(3, 2))]),
    Spec("index_fill", lambda m, a: (a.index_fill(1, _idx(m, 3, 0, 3), -1.5),
                                     m.index_fill(a, 0, _idx(m, 1), 2)),
         [(T(3, 4),), (I(3, 4),)]),
    Spec("index_fill_tensor", lambda m, a, v: a.index_fill(1, _idx(m, 3, 0, 3), v),
         [(T(3, 4), T())]),
    # gather / scatter
    Spec("gather", lambda m, a: (a.gather(1, _idx(m, [0, 0, 3], [1, 2, 2])),
                                 m.gather(a, 0, _idx(m, [2, 2, 2, 2]))),
         [(T(3, 4),), (T(3, 4, t=True),), (I(3, 4),)]),
    Spec("scatter", lambda m, a, s: (a.scatter(1, _idx(m, [0, 1], [2, 0]), s),
                                     m.scatter(a, 0, _idx(m, [1, 0]), s[:1])),
         [(T(3, 4), T(2, 2)), (T(3, 4, t=True), T(2, 2))]),
    # a src larger than the index: only its leading corner is read (torch's own backward
    # rejects this case, so only the forward is compared; test_indexing checks the gradient)
    Spec("scatter_large_src", lambda m, a, s: (a.scatter(1, _idx(m, [0, 1], [2, 0]), s),
                                               a.scatter_add(0, _idx(m, [1, 0, 2]), s)),
         [(T(3, 4), T(2, 5))], ops=["scatter", "scatter_add"], grad=False),
    Spec("scatter_value", lambda m, a: (a.scatter(1, _idx(m, [0, 1], [2, 0]), 1.5),
                                        a.scatter(0, _idx(m, [1, 1]), value=-2)),
         [(T(3, 4),), (I(3, 4),)]),
    Spec("scatter_add", lambda m, a, s: a.scatter_add(1, _idx(m, [0, 0, 3], [1, 1, 1]), s),
         [(T(3, 4), T(2, 3)), (T(3, 4, t=True), T(2, 3)), (I(3, 4), I(2, 3))]),
    Spec("scatter_legacy_reduce", lambda m, a, s: (
        a.scatter(1, _idx(m, [0, 0, 3]), s, reduce="add"),
        a.scatter(1, _idx(m, [0, 0, 3]), 2.0, reduce="multiply")),
         [(T(3, 4), T(1, 3))], grad=False),
    Spec("scatter_inplace", _scatter_inplace, [(T(3, 4), T(2, 2))],
         ops=["scatter", "scatter_add"]),
    Spec("scatter_reduce_sum", _scatter_reduce("sum"), REDUCE_CASES, ops=["scatter_reduce"]),
    Spec("scatter_reduce_mean", _scatter_reduce("mean"), REDUCE_CASES + [(I(3, 4), I(2, 3))],
         ops=["scatter_reduce"]),
    Spec("scatter_reduce_prod", _scatter_reduce("prod"), REDUCE_CASES, ops=["scatter_reduce"]),
    Spec("scatter_reduce_prod_zeros", lambda m, a, src: _scatter_reduce("prod")(
        m, a.masked_fill(a > 1, 0), src.masked_fill(src > 1, 0)),
         [(T(3, 4), T(2, 3))], ops=["scatter_reduce"], gradcheck=False),
    Spec("scatter_reduce_amax", _scatter_reduce("amax"), REDUCE_CASES, ops=["scatter_reduce"]),
    Spec("scatter_reduce_amin", _scatter_reduce("amin"), REDUCE_CASES, ops=["scatter_reduce"]),
    Spec("scatter_reduce_ties", lambda m, a, s: (
        a.scatter_reduce(0, _idx(m, [0, 0], [0, 0]), s, "amax"),
        a.scatter_reduce(0, _idx(m, [0, 0], [0, 0]), -s, "amin", include_self=False)),
         [(np.array([[2.0, 1.0]], np.float32), np.array([[2.0, 3.0], [2.0, 3.0]], np.float32))],
         ops=["scatter_reduce"], gradcheck=False),
    Spec("scatter_reduce_exclude",
         lambda m, a, src: tuple(_scatter_reduce(r, include_self=False)(m, a, src)
                                 for r in ("sum", "mean", "prod", "amax", "amin")),
         REDUCE_CASES + [(I(3, 4), I(2, 3)), (T(3, 4, dtype="bfloat16"), T(2, 3, dtype="bfloat16")),
                         (T(3, 4, dtype="float16"), T(2, 3, dtype="float16"))],
         ops=["scatter_reduce"]),
    # masked ops
    Spec("masked_fill", lambda m, a, mask: (a.masked_fill(mask, -1.5), m.masked_fill(a, mask, 2)),
         [(T(3, 4), B(3, 4)), (T(3, 4), B(4)), (T(4), B(3, 4)), (I(3, 4), B(3, 4))]),
    Spec("masked_fill_tensor", lambda m, a, mask, v: a.masked_fill(mask, v),
         [(T(3, 4), B(3, 4), T()), (T(3, 4), B(4), T(dtype="float64"))]),
    Spec("masked_select", lambda m, a, mask: m.masked_select(a, mask),
         [(T(3, 4), B(3, 4)), (T(4), B(3, 4)), (T(3, 4), B(4)), (T(0, 4), B(4))]),
    Spec("masked_scatter", lambda m, a, mask, s: a.masked_scatter(mask, s),
         [(T(3, 4), B(3, 4), T(13)), (T(3, 4), B(4), T(4, 3)), (T(4), B(2, 4), T(9))]),
    Spec("masked_inplace", _masked_inplace, [(T(3, 4), T(1))],
         ops=["masked_fill_tensor", "masked_scatter"]),
    # flat positions
    Spec("take", lambda m, a: (a.take(_idx(m, 0, 5, 5, -1)), m.take(a, _idx(m, [1, 1]))),
         [(T(3, 4),), (T(4, 3, t=True),), (I(2, 3),)]),
    Spec("put", lambda m, a, v: (a.put(_idx(m, 0, 5, -1), v),
                                 a.put(_idx(m, 1, 1, 1), v, accumulate=True)),
         [(T(3, 4), T(3)), (T(3, 4), T(1, 3))]),
    Spec("put_", _put, [(T(2, 3), T(3))], ops=["put"], **DUP),
    Spec("take_along_dim", lambda m, a: (m.take_along_dim(a, _idx(m, [0], [3], [3]), 1),
                                         m.take_along_dim(a, _idx(m, 5, 5, 0)),
                                         a.take_along_dim(_idx(m, [2, 0, 1, 1]), 0)),
         [(T(3, 4),)], ops=["gather"]),
    # positions and search (not differentiable)
    Spec("nonzero", lambda m, a: (m.nonzero(a), a.nonzero(as_tuple=True), m.argwhere(a)),
         [(I(3, 4, low=0, high=2),), (B(2, 3, 2),), (T(0, 2),), (I(low=0, high=2),),
          (T(5),)], ops=["nonzero", "nonzero_tuple"], grad=False),
    Spec("searchsorted", lambda m, s, v: (m.searchsorted(s.sort()[0], v),
                                          m.searchsorted(s.sort()[0], v, right=True),
                                          m.searchsorted(s.sort()[0], v, side="right",
                                                         out_int32=True)),
         [(T(6), T(3, 4)), (T(2, 5), T(2, 3)), (I(6), I(4)), (T(6), 0.5)], grad=False),
    Spec("searchsorted_sorter", lambda m, s, v: m.searchsorted(s, v, sorter=s.argsort()),
         [(T(6), T(3, 4)), (T(2, 5), T(2, 3))], ops=["searchsorted"], grad=False),
    Spec("bucketize", lambda m, v, b: (m.bucketize(v, b.sort()[0]),
                                       m.bucketize(v, b.sort()[0], right=True)),
         [(T(3, 4), T(5)), (I(7, high=9), I(4, high=9)), (0.5, T(5))], ops=["searchsorted"],
         grad=False),
    Spec("isin", lambda m, a, b: (m.isin(a, b), m.isin(a, b, invert=True)),
         [(I(3, 4), I(3)), (I(5), 2), (3, I(4))], grad=False),
]

SPECS += [
    Spec("index_reduce", lambda m, a, s: tuple(
        a.index_reduce(0, m.tensor([0, 4, 2, 0]), s, mode, include_self=include)
        for mode in ("prod", "mean", "amax", "amin") for include in (True, False)),
         [(T(5, 3), T(4, 3)), (T(5, 3, dtype="float64"), T(4, 3, dtype="float64"))], ops=[]),
    Spec("index_reduce_dim1", lambda m, a, s: (
        m.index_reduce(a, 1, m.tensor([0, 2], dtype=m.int32), s, "amax"),
        a.clone().index_reduce_(-1, m.tensor([2, 2]), s, "mean", include_self=False)),
         [(T(4, 3), T(4, 2))], ops=[]),
    Spec("index_reduce_ints", lambda m, a, s: a.index_reduce(0, m.tensor([0, 1, 0]), s, "mean"),
         [(I(2, 3, high=9), I(3, 3, high=9))], ops=[], grad=False),
    Spec("nonzero_static", lambda m, a: (m.nonzero_static(a, size=2),
                                         a.nonzero_static(size=10, fill_value=7),
                                         m.nonzero_static(a[0, 0], size=2)),
         [(I(3, 4, high=2),), (B(2, 5),)], ops=["nonzero"], grad=False),
    Spec("fill_diagonal_", lambda m, a: (
        (a * 1).fill_diagonal_(5.0), (a * 1).fill_diagonal_(-1, wrap=True),
        (a.mT * 1).fill_diagonal_(2.0, wrap=True), (a * 1).fill_diagonal_(m.tensor(3.0))),
         [(T(7, 3),), (T(3, 3),), (T(3, 7, t=True),)], ops=[]),
    Spec("fill_diagonal_cube", lambda m, a: (a * 1).fill_diagonal_(0.5), [(T(3, 3, 3),)], ops=[]),
    Spec("unravel_index", lambda m, i: (m.unravel_index(i, (3, 4)), m.unravel_index(i, 7),
                                        m.unravel_index(i.int(), m.Size([2, 3, 2])),
                                        m.unravel_index(i - 20, (3, 4)),
                                        m.unravel_index(i, ())),
         [(I(5, high=12),), (I(2, 3, high=12),), (I(high=12),)], ops=[], grad=False),
]

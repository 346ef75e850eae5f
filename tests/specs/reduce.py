"""Rows for ember/ops/reduce.py.

Broadcasting does not apply to reductions; the rows cover dims given as int, negative int, tuple
and None, keepdim, 0-d and empty inputs, transposed (non-contiguous) inputs and several dtypes.
Ops that pick elements (max(dim), sort, topk, median, mode, cummax, ...) get inputs without ties
(`D`: a shuffled range), so the picked index -- and the gradient -- is unambiguous; ties, NaNs,
errors, double backward and grad_fn names are in tests/test_reduce.py.
"""
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ._spec import B, I, Maker, Spec, T


@dataclass
class _Distinct(Maker):
    """Distinct values: a shuffled range around 0, in steps of 1/4 for floats (exact in
    float16 too) and of 1 for integers."""

    def build(self, rng):
        shape = self.shape[::-1] if self.transposed else self.shape
        n = int(np.prod(shape))
        a = (rng.permutation(n) - n // 2).reshape(shape)
        if not self.dtype.startswith("int"):
            a = a / 4
        a = a.astype(ml_dtypes.bfloat16 if self.dtype == "bfloat16" else self.dtype)
        return a.T if self.transposed else a


def D(*shape, dtype="float32", t=False):  # noqa: N802
    return _Distinct(shape, dtype, 0, 0, t)


def _with(shape, value, positions, seed=0):
    """Random float32 data in [0.5, 2) with `value` (0 or NaN) at the given positions."""
    a = np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(np.float32)
    for p in positions:
        a[p] = value
    return a


# slices along dim 1 with no zero, one zero and two zeros (prod/cumprod gradients)
ZEROS = _with((3, 4), 0.0, [(1, 2), (2, 0), (2, 3)])
NANS = _with((3, 4), np.nan, [(0, 1), (2, 0), (2, 3)])
INT_TIES = np.array([[1, 3, 3, 0, 3], [2, 2, 1, 1, 0], [4, 4, 4, 4, 4]])

FLOATS = [(T(2, 3, 4),), (T(2, 3, 4, t=True),), (T(2, 3, 4, dtype="float64"),)]
DISTINCT = [(D(2, 3, 4),), (D(2, 3, 4, t=True),), (D(2, 3, 4, dtype="float64"),)]

SPECS = [
    # ---------------------------------------------------------------- sums
    Spec("sum", lambda m, a: a.sum(),
         [(T(3, 4),), (T(),), (T(0, 3),), (I(3),), (B(4),), (I(3, dtype="int32"),),
          (T(4, 3, t=True),), (T(3, 5, dtype="float16"),), (T(3, dtype="float64"),)]),
    Spec("sum_dim", lambda m, a: (a.sum(1), a.sum((0, -1), keepdim=True), m.sum(a, -2),
                                  a.sum(()), a.sum([2, 0])),
         FLOATS + [(T(0, 3, 2),), (I(2, 3, 4, dtype="int32"),), (B(2, 3, 4),)]),
    Spec("sum_0d", lambda m, a: (a.sum(0), a.sum(-1, keepdim=True)), [(T(),)], ops=["sum_dim"]),
    Spec("sum_dtype", lambda m, a: (a.sum(dtype=m.float64), m.sum(a, 0, dtype=m.float16)),
         [(T(3, 4),), (I(3, 4),)], ops=["sum", "sum_dim"], gradcheck=False),
    Spec("mean", lambda m, a: a.mean(),
         [(T(3, 4),), (T(),), (T(0, 3),), (T(4, 3, t=True),), (T(3, 5, dtype="float16"),),
          (T(3, dtype="float64"),)]),
    Spec("mean_dim", lambda m, a: (a.mean(1), a.mean((0, -1), keepdim=True), m.mean(a, -2)),
         FLOATS + [(T(0, 3, 2),)]),
    Spec("mean_dtype", lambda m, a: (a.mean(dtype=m.float64), a.mean(0, dtype=m.float32)),
         [(I(3, 4),), (T(3, 4, dtype="float16"),)], ops=["mean", "mean_dim"], gradcheck=False),
    Spec("nansum", lambda m, a: (a.nansum(), m.nansum(a, 1), a.nansum((0, 1), keepdim=True)),
         [(T(2, 3, 4),), (NANS[None],), (T(2, 3, 4, dtype="float16"),), (I(2, 3, 4),),
          (T(0, 3, 2),)]),
    Spec("nanmean", lambda m, a: (a.nanmean(), m.nanmean(a, 1), a.nanmean(-1, keepdim=True)),
         [(T(2, 3, 4),), (NANS[None],), (T(2, 3, 4, dtype="float64"),)]),
    Spec("prod", lambda m, a: a.prod(),
         [(T(3, 4, low=0.5),), (T(),), (T(0, 3),), (ZEROS,), (ZEROS[1],), (ZEROS[2],),
          (I(3, 4, high=3),), (B(4),)]),
    Spec("prod_dim", lambda m, a: (a.prod(1), a.prod(-1, keepdim=True), m.prod(a, 0)),
         [(T(3, 4, low=0.5),), (ZEROS,), (T(4, 3, t=True),), (T(3, 4, dtype="float64"),),
          (I(3, 4, high=3, dtype="int32"),), (T(0, 3),)]),
    Spec("prod_0d_dtype", lambda m, a: (a.prod(0), a.prod(dtype=m.float64)), [(T(),)],
         ops=["prod", "prod_dim"]),

    # ---------------------------------------------------------------- extremes
    Spec("max", lambda m, a: (a.max(), m.min(a)),
         [(D(3, 4),), (T(),), (D(4, 3, t=True),), (I(3, 4),), (B(5),),
          (D(3, 4, dtype="float16"),), (D(3, dtype="float64"),)], ops=["max", "min"]),
    Spec("max_dim", lambda m, a: (a.max(1), m.max(a, -1, keepdim=True), a.min(0),
                                  m.min(a, dim=-2, keepdim=True)),
         DISTINCT + [(D(2, 3, 4, dtype="int64"),), (B(2, 3, 4),), (INT_TIES[None],)],
         ops=["max_dim", "min_dim"]),
    Spec("max_dim_empty", lambda m, a: (a.max(1), a.min(0, True)), [(T(2, 3, 0),)],
         ops=["max_dim", "min_dim"]),
    Spec("max_dim_0d", lambda m, a: (a.max(0), a.min(-1, True)), [(T(),)],
         ops=["max_dim", "min_dim"]),
    Spec("amax", lambda m, a: (a.amax(), a.amax(1), m.amax(a, (0, -1), keepdim=True),
                               a.amin(-1), m.amin(a, ())),
         DISTINCT + [(I(2, 3, 4),), (B(2, 3, 4),)], ops=["amax", "amin"]),
    Spec("amax_empty_0d", lambda m, a: (a.amax(0), a.amin(0, keepdim=True)),
         [(T(),), (T(3),), (T(3, 0),)], ops=["amax", "amin"]),
    Spec("argmax", lambda m, a: (a.argmax(), m.argmax(a, 1), a.argmin(-1, keepdim=True),
                                 m.argmin(a), a.argmax(keepdim=True)),
         DISTINCT[:2] + [(I(2, 3, 4),), (INT_TIES[None],)], ops=["argmax", "argmin"]),
    Spec("argmax_0d", lambda m, a: (a.argmax(), a.argmin(0)), [(T(),)],
         ops=["argmax", "argmin"]),
    Spec("aminmax", lambda m, a: (m.aminmax(a), m.aminmax(a, dim=1),
                                  a.aminmax(dim=-1, keepdim=True)),
         DISTINCT + [(I(2, 3, 4),)]),

    # ---------------------------------------------------------------- moments and norms
    Spec("var", lambda m, a: (a.var(), a.var(1), m.var(a, (0, -1), keepdim=True),
                              a.var(0, False), a.var(1, correction=0), a.var(unbiased=False)),
         FLOATS),
    Spec("std", lambda m, a: (a.std(), a.std(1), m.std(a, (0, -1), keepdim=True),
                              a.std(0, False), a.std(1, correction=2)), FLOATS),
    Spec("var_std_0d", lambda m, a: (a.var(correction=0), a.std(0, correction=0)), [(T(),)],
         ops=["var", "std"], gradcheck=False),
    Spec("var_mean", lambda m, a: (m.var_mean(a), m.var_mean(a, 1, keepdim=True),
                                   m.var_mean(a, (0, 2), correction=0)), FLOATS),
    Spec("std_mean", lambda m, a: (m.std_mean(a), m.std_mean(a, -1, False),
                                   m.std_mean(a, dim=(0, 1), keepdim=True)), FLOATS),
    Spec("logsumexp", lambda m, a: (a.logsumexp(1), m.logsumexp(a, (0, -1), keepdim=True),
                                    m.logsumexp(a, -1)),
         FLOATS + [(T(2, 3, 4, low=-90, high=90),), (I(2, 3, 4),), (T(2, 0, 3),)]),
    Spec("logsumexp_0d", lambda m, a: (a.logsumexp(0), a.logsumexp(-1, keepdim=True)), [(T(),)],
         ops=["logsumexp"]),
    Spec("norm", lambda m, a: tuple(m.norm(a, p) for p in ("fro", 1, 2, 3, 0.5, -1, 0,
                                                           float("inf"), float("-inf"))),
         [(T(3, 4),), (T(4, 3, t=True),), (T(3, 4, dtype="float64"),),
          (T(3, 4, dtype="float16", low=0.5),), (T(),)]),
    Spec("norm_dim", lambda m, a: (a.norm(dim=1), m.norm(a, 1, (0, -1), keepdim=True),
                                   m.norm(a, float("inf"), -1), m.norm(a, 3, dim=0),
                                   m.norm(a, "fro", (0, 1)), a.norm(2, 1, dtype=m.float64)),
         FLOATS + [(ZEROS[None],), (T(2, 0, 3),)], ops=["norm"]),

    # ---------------------------------------------------------------- order statistics
    Spec("sort", lambda m, a: (a.sort(), m.sort(a, 1, True), a.sort(dim=0, descending=False)),
         DISTINCT + [(I(2, 3, 4),), (B(2, 3, 4),), (T(2, 0, 3),), (INT_TIES,)]),
    Spec("sort_stable", lambda m, a: (m.sort(a, stable=True), m.sort(a, dim=0, stable=False),
                                      a.sort(stable=True, dim=1, descending=True)),
         DISTINCT[:2] + [(INT_TIES,), (B(3, 7),)]),
    Spec("sort_0d", lambda m, a: (a.sort(), m.sort(a, stable=True, dim=0), a.argsort()),
         [(T(),)], ops=["sort", "sort_stable", "argsort"]),
    Spec("argsort", lambda m, a: (a.argsort(), m.argsort(a, 0, descending=True),
                                  m.argsort(a, dim=1, stable=True)),
         DISTINCT[:2] + [(INT_TIES,), (I(2, 3, 4),)]),
    Spec("msort", lambda m, a: m.msort(a), DISTINCT[:2] + [(INT_TIES,)], ops=["sort"]),
    Spec("topk", lambda m, a: (a.topk(2), m.topk(a, 3, 1, largest=False), a.topk(1, dim=0),
                               m.topk(a, 0)), DISTINCT + [(D(2, 3, 4, dtype="int32"),)]),
    Spec("topk_unsorted", lambda m, a: a.topk(3, sorted=False).values.sort().values,
         [(D(3, 6),)], ops=["topk"]),
    Spec("topk_0d", lambda m, a: a.topk(1), [(T(),)], ops=["topk"]),
    Spec("kthvalue", lambda m, a: (a.kthvalue(1), m.kthvalue(a, 2, 0), a.kthvalue(2, 1, True)),
         DISTINCT + [(D(3, 3, 4, dtype="int64"),)]),
    Spec("median", lambda m, a: (a.median(), m.median(a)),
         [(D(3, 4),), (D(3, 5),), (T(),), (T(0, 3),), (D(4, 3, t=True),),
          (D(3, 4, dtype="float16"),), (I(3, 5, high=100),), (NANS,)]),
    Spec("median_dim", lambda m, a: (a.median(1), m.median(a, -1, keepdim=True), a.median(0)),
         DISTINCT + [(D(2, 3, 4, dtype="int64"),), (NANS[None],)]),
    Spec("nanmedian", lambda m, a: (a.nanmedian(), m.nanmedian(a)),
         [(D(3, 4),), (NANS,), (T(),), (T(0, 3),), (np.full(3, np.nan, np.float32),)]),
    Spec("nanmedian_dim", lambda m, a: (a.nanmedian(1), m.nanmedian(a, 0, keepdim=True)),
         [(D(3, 4),), (NANS,), (D(3, 4, dtype="float64"),), (D(3, 4, dtype="int64"),)]),
    Spec("median_0d", lambda m, a: (a.median(0), a.nanmedian(-1, True)), [(T(),)],
         ops=["median_dim", "nanmedian_dim"]),
    Spec("mode", lambda m, a: (a.mode(), m.mode(a, 0), a.mode(1, keepdim=True)),
         DISTINCT + [(I(3, 4, 5, high=3),), (INT_TIES[None],)]),
    Spec("mode_0d", lambda m, a: a.mode(), [(T(),)], ops=["mode"]),

    # ---------------------------------------------------------------- scans
    Spec("cumsum", lambda m, a: (a.cumsum(1), m.cumsum(a, -1), a.cumsum(dim=0)),
         FLOATS + [(I(2, 3, 4, dtype="int32"),), (B(2, 3, 4),), (T(2, 0, 3),)]),
    Spec("cumsum_dtype_0d", lambda m, a: (a.cumsum(0, dtype=m.float64), a.cumsum(-1)),
         [(T(),), (I(3),)], ops=["cumsum"]),
    Spec("cumprod", lambda m, a: (a.cumprod(1), m.cumprod(a, -1), a.cumprod(dim=0)),
         [(T(2, 3, 4, low=0.5),), (ZEROS[None],), (T(2, 3, 4, t=True),),
          (T(2, 3, 4, dtype="float64"),),
          (I(2, 3, 4, high=3),), (B(2, 3, 4),)]),
    Spec("cumprod_0d", lambda m, a: (a.cumprod(0), a.cumprod(-1, dtype=m.float64)), [(T(),)],
         ops=["cumprod"]),
    Spec("cummax", lambda m, a: (a.cummax(1), m.cummin(a, -1), a.cummax(0), m.cummin(a, 0)),
         DISTINCT + [(I(2, 3, 4),), (B(2, 3, 4),), (T(2, 0, 3),), (INT_TIES,)],
         ops=["cummax", "cummin"]),
    Spec("cummax_0d", lambda m, a: (a.cummax(0), a.cummin(-1)), [(T(),)],
         ops=["cummax", "cummin"]),
    Spec("logcumsumexp", lambda m, a: (a.logcumsumexp(1), m.logcumsumexp(a, -1)),
         FLOATS + [(T(2, 3, 4, low=-90, high=90),), (T(2, 0, 3),)]),
    Spec("logcumsumexp_0d", lambda m, a: (a.logcumsumexp(0), a.logcumsumexp(-1)), [(T(),)],
         ops=["logcumsumexp"]),

    # ---------------------------------------------------------------- logical, counting
    Spec("any_all", lambda m, a: (a.any(), a.all(0), m.any(a, (0, -1), keepdim=True),
                                  m.all(a, -1, True), a.any(())),
         [(B(3, 4),), (I(3, 4, high=2),), (T(3, 4),), (I(3, 4, dtype="uint8", high=2),),
          (B(0, 3),), (Maker((4, 3), "bool", 0, 1, True),)], ops=["any", "all"]),
    Spec("any_all_0d", lambda m, a: (a.any(), a.all(0), m.any(a, -1, keepdim=True)),
         [(B(),), (T(),)], ops=["any", "all"]),
    Spec("count_nonzero", lambda m, a: (m.count_nonzero(a), a.count_nonzero(1),
                                        m.count_nonzero(a, (0, -1))),
         [(I(2, 3, 4, high=3),), (B(2, 3, 4),), (ZEROS[None],), (T(2, 0, 3),)]),
    Spec("unique", lambda m, a: (m.unique(a), a.unique(return_inverse=True),
                                 m.unique(a, return_counts=True, return_inverse=True),
                                 m.unique(a, sorted=False, return_counts=True)),
         [(I(3, 4),), (B(5),), (I(0),), (I(),), (np.array([1.5, 0.5, 1.5, -2.0]),),
          (I(4, 3, dtype="int32"),)], grad=False),  # torch: derivative not implemented
    Spec("unique_dim", lambda m, a: (m.unique(a, dim=0), a.unique(dim=1, return_inverse=True),
                                     m.unique(a, dim=-1, return_counts=True)),
         [(I(4, 3, high=2),), (np.array([[1, 2, 1], [0, 1, 0], [1, 2, 1]]),),
          (T(3, 2, high=0),)], ops=["unique"], grad=False),
    Spec("unique_consecutive",
         lambda m, a: (m.unique_consecutive(a),
                       a.unique_consecutive(return_inverse=True, return_counts=True),
                       m.unique_consecutive(a, dim=0, return_counts=True)),
         [(I(6, 2, high=2),), (np.array([[1, 1], [1, 1], [2, 3], [1, 1]]),), (I(0, 2),),
          (np.array([[0.5, 1], [0.5, 1], [2, 3]]),)], grad=False),
    Spec("unique_consecutive_1d", lambda m, a: m.unique_consecutive(a, return_inverse=True),
         [(np.array([1, 1, 2, 2, 3, 1, 1]),), (B(6),)], ops=["unique_consecutive"],
         grad=False),
    Spec("bincount", lambda m, a, w: (m.bincount(a), a.bincount(minlength=7),
                                      m.bincount(a, w), m.bincount(a, w.double(), 9)),
         [(I(6), T(6)), (I(6, dtype="int32", high=4), T(6))], grad=False),
    Spec("bincount_empty", lambda m, a: (m.bincount(a), m.bincount(a, minlength=3)),
         [(I(0),)], ops=["bincount"]),
    Spec("histc", lambda m, a: (m.histc(a), a.histc(4), m.histc(a, bins=5, min=-1, max=1)),
         [(T(3, 4),), (T(20, dtype="float64"),), (T(0),), (T(),), (T(4, 3, t=True),),
          (T(3, 4, dtype="float16"),)], grad=False),
    Spec("diff", lambda m, a: (m.diff(a), a.diff(2, 0), m.diff(a, n=1, dim=1), a.diff(n=0)),
         [(T(3, 4),), (T(4, 3, t=True),), (I(3, 4),), (T(3, 4, dtype="float64"),),
          (T(3, 0),)]),
    Spec("diff_bool", lambda m, a: (m.diff(a), a.diff(2)), [(B(6),)], ops=["diff"]),
    Spec("bfloat16", lambda m, a: (a.sum(1), a.mean(), a.prod(0), a.max(1), a.amin(0),
                                   a.argmax(), a.var(1), a.logsumexp(0), m.norm(a, 3, 1),
                                   a.sort(1), a.topk(2), a.median(1), a.mode(0), a.cumsum(1),
                                   a.cummax(0), a.logcumsumexp(1), m.unique(a).detach()),
         [(D(3, 4, dtype="bfloat16"),)], ops=[], gradcheck=False, grad_rtol=2e-2,
         grad_atol=2e-2),
    Spec("sum_to_size", lambda m, a: (a.sum_to_size(3, 1), a.sum_to_size(1, 3, 4)),
         [(T(2, 3, 4),)]),
]


# float16 twins of the rows above: torch and ember round float16 intermediate results in
# different places, so gradients get float16-sized tolerances (forward values keep the default)
_F16, _D16 = [(T(2, 3, 4, dtype="float16"),)], [(D(2, 3, 4, dtype="float16"),)]
_HALF = {
    "prod": [(T(5, dtype="float16", low=0.5),)], "sum_dim": _F16, "mean_dim": _F16,
    "max_dim": _D16, "amax": _D16, "aminmax": _D16, "var": _F16, "std": _F16, "var_mean": _F16,
    "std_mean": _F16, "logsumexp": _F16, "norm_dim": [(T(2, 3, 4, dtype="float16", low=0.5),)],
    "sort": _D16, "topk": _D16, "kthvalue": [(D(3, 3, 4, dtype="float16"),)],
    "median_dim": _D16, "mode": _D16, "cumsum": _F16, "cumprod": _F16, "cummax": _D16,
    "logcumsumexp": _F16,
}
SPECS += [Spec(s.name + "_float16", s.fn, _HALF[s.name], ops=s.ops, grad=s.grad,
               gradcheck=False, grad_rtol=1e-2, grad_atol=1e-2)
          for s in SPECS if s.name in _HALF]

SPECS += [
    Spec("hash_tensor", lambda m, a, i: (m.hash_tensor(a), a.hash_tensor(1),
                                         m.hash_tensor(a, (0, 1), keepdim=True),
                                         m.hash_tensor(i), m.hash_tensor(i > 2, 0),
                                         m.hash_tensor(a.half())),
         [(T(3, 4), I(3, 4)), (T(2, 3, dtype="float64"), I(2, 3, dtype="int32"))], grad=False),
]

SPECS += [
    Spec("segment_reduce", lambda m, d: tuple(
        m.segment_reduce(d, reduce, lengths=m.tensor([2, 0, 4]), initial=initial)
        for reduce in ("sum", "mean", "max", "min", "prod") for initial in (None, 2.0)),
         [(T(6),), (T(6, dtype="float64"),)], ops=["segment_ids", "scatter_reduce"],
         gradcheck=False),  # empty segments give -inf and nan: no finite differences there
    Spec("segment_reduce_full", lambda m, d: tuple(
        m.segment_reduce(d, reduce, lengths=m.tensor([2, 4])) for reduce in
        ("sum", "mean", "max", "min", "prod")), [(T(6),)], ops=["segment_ids",
                                                                 "scatter_reduce"]),
    Spec("segment_reduce_axes", lambda m, d: (
        m.segment_reduce(d, "sum", offsets=m.tensor([0, 1, 4]), axis=0),
        m.segment_reduce(d.mT, "mean", lengths=m.tensor([[1, 3], [2, 2], [3, 1]]), axis=1)),
         [(T(4, 3),)], ops=["segment_ids", "scatter_reduce"]),
]

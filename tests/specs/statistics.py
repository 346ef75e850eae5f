"""Rows for ember/ops/statistics.py: quantile, cov, corrcoef, histograms, trapezoid, gradient.

These functions are compositions of other ops (no ops of their own but the histogram), so the
rows list the ops they exercise only where a new one is involved.
"""
from ._spec import B, I, Spec, T

_Q = [0.0, 0.1, 0.25, 0.5, 0.8, 1.0]

SPECS = [
    Spec("quantile", lambda m, a: (
        m.quantile(a, 0.3), a.quantile(m.tensor(_Q, dtype=a.dtype)),
        m.quantile(a, m.tensor(_Q, dtype=a.dtype), dim=0, keepdim=True),
        m.quantile(a, 0.7, dim=-1), m.quantile(a, 0.5, keepdim=True)),
         [(T(5, 4),), (T(3, 4, dtype="float64"),), (T(4, 3, t=True),)], ops=[]),
    Spec("quantile_interpolation", lambda m, a: tuple(
        m.quantile(a, m.tensor(_Q + [0.3, 0.7], dtype=a.dtype), dim=1, interpolation=mode)
        for mode in ("linear", "lower", "higher", "midpoint", "nearest")),
         [(T(3, 6),), (T(2, 5),)], ops=[]),
    Spec("quantile_0d", lambda m, a: (m.quantile(a, 0.5), m.quantile(a, 0.5, dim=0),
                                      m.quantile(a, 0.2, dim=0, keepdim=True)),
         [(T(),)], ops=[]),
    Spec("nanquantile", lambda m, a, b: (
        m.nanquantile(a.where(b, float("nan")), 0.4, dim=1),
        a.where(b, float("nan")).nanquantile(m.tensor(_Q, dtype=a.dtype)),
        m.quantile(a.where(b, float("nan")), 0.4, dim=1)),
         [(T(4, 5), B(4, 5))], ops=[], gradcheck=False),  # NaN results: no finite differences
    Spec("cov", lambda m, a: (m.cov(a), m.cov(a, correction=0), a.cov(correction=2),
                              m.cov(a[0])),
         [(T(3, 5),), (T(2, 6, dtype="float64"),), (T(4, 3, t=True),)], ops=[]),
    Spec("cov_weights", lambda m, a, f, w: (
        m.cov(a, fweights=f), m.cov(a, aweights=w.abs()),
        m.cov(a, fweights=f, aweights=w.abs(), correction=0),
        m.cov(a, fweights=f, aweights=w.abs())),
         [(T(3, 5), I(5, low=1, high=4), T(5))], ops=[]),
    Spec("cov_ints", lambda m, i: (m.cov(i), m.corrcoef(i)), [(I(2, 5, high=9),)], ops=[],
         grad=False),
    Spec("corrcoef", lambda m, a: (m.corrcoef(a), a.corrcoef(), m.corrcoef(a[0])),
         [(T(3, 5),), (T(4, 6, dtype="float64"),)], ops=[]),
    Spec("histogramdd", lambda m, a: (
        tuple(m.histogram(a, 4)), tuple(m.histogram(a, 3, range=(-1.0, 1.0))),
        tuple(m.histogram(a, m.tensor([-2.0, -0.5, 0.0, 1.5], dtype=a.dtype),
                          weight=a.abs(), density=True)),
        tuple(a.histogram(5, density=True)),
        m.histogramdd(a.reshape(-1, 2), bins=[3, 2]),
        m.histogramdd(a.reshape(-1, 2), bins=3, range=[-1.0, 1.0, 0.0, 2.0], density=True),
        m.histogramdd(a.reshape(-1, 2), bins=[m.tensor([-2.0, 0.0, 2.0], dtype=a.dtype),
                                              m.tensor([-1.0, 0.5], dtype=a.dtype)],
                      weight=a.reshape(-1, 2)[:, 0].abs())),
         [(T(6, 4),), (T(10, dtype="float64"),), (T(0, 2),)], grad=False),
    Spec("trapezoid", lambda m, y, x: (
        m.trapezoid(y), m.trapezoid(y, dx=0.5), m.trapezoid(y, x), m.trapezoid(y, x, dim=-1),
        m.trapz(y, x), m.trapz(y, dx=2), m.trapezoid(y, dim=0)),
         [(T(3, 4), T(4)), (T(2, 3, 4, dtype="float64"), T(2, 3, 4, dtype="float64")),
          (T(4, 3, t=True), T(4, 3))], ops=[]),
    Spec("trapezoid_ints", lambda m, y, x: (m.trapezoid(y), m.trapezoid(y, x),
                                            m.cumulative_trapezoid(y, dx=2)),
         [(I(3, 4), I(4))], grad=False, ops=[]),
    Spec("cumulative_trapezoid", lambda m, y, x: (
        m.cumulative_trapezoid(y), m.cumulative_trapezoid(y, x), m.cumulative_trapezoid(
            y, dx=0.5, dim=0)),
         [(T(3, 4), T(4)), (T(1, 2), T(2))], ops=[]),
    Spec("gradient", lambda m, f: (
        m.gradient(f), m.gradient(f, spacing=2.0), m.gradient(f, spacing=[0.5, 3.0]),
        m.gradient(f, dim=1, edge_order=2), m.gradient(f, spacing=(2.0,), dim=[0]),
        m.gradient(f, spacing=(m.tensor([0.0, 1.0, 1.5, 3.5], dtype=f.dtype),
                               m.tensor([-1.0, 0.0, 0.5, 2.0, 2.5], dtype=f.dtype))),
        m.gradient(f, spacing=(m.tensor([0.0, 1.0, 1.5, 3.5], dtype=f.dtype),
                               m.tensor([-1.0, 0.0, 0.5, 2.0, 2.5], dtype=f.dtype)),
                   edge_order=2)),
         [(T(4, 5),), (T(4, 5, dtype="float64"),)], ops=[]),
    Spec("gradient_ints", lambda m, f: m.gradient(f), [(I(3, 4),)], grad=False, ops=[]),
]

"""ember/ops/statistics.py beyond the op table: torch's errors and warnings."""
import warnings

import numpy as np
import pytest

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7


@pytest.mark.parametrize("fn, match", [
    (lambda m, x: m.quantile(x[:0], 0.5), "input tensor must be non-empty"),
    (lambda m, x: m.quantile(x.long(), 0.5), "must be either float or double dtype"),
    (lambda m, x: m.quantile(x.half(), 0.5), "must be either float or double dtype"),
    (lambda m, x: m.quantile(x, 1.5), "q must be in the range [0, 1] but got 1.5"),
    (lambda m, x: m.quantile(x, m.tensor([0.5], dtype=m.float64)), "same dtype"),
    (lambda m, x: m.quantile(x, m.tensor([[0.5]])), "q must be a scalar or 1D tensor"),
    (lambda m, x: m.quantile(x, 0.5, interpolation="bad"), "interpolation must be one of"),
    (lambda m, x: m.nanquantile(x, 0.5, dim=3), "Dimension out of range"),
    (lambda m, x: m.cov(x.reshape(1, 3, 4)), "two or fewer dimensions"),
    (lambda m, x: m.cov(x, fweights=m.ones(4)), "fweights to have integral dtype"),
    (lambda m, x: m.cov(x, aweights=m.ones(4, dtype=m.int64)), "floating point dtype"),
    (lambda m, x: m.cov(x, fweights=m.ones(3, dtype=m.int64)), "same numel"),
    (lambda m, x: m.cov(x, fweights=-m.ones(4, dtype=m.int64)), "cannot be negative"),
    (lambda m, x: m.histogram(x.long(), 3), "not implemented for 'Long'"),
    (lambda m, x: m.histogram(x, 0), "bins must be > 0"),
    (lambda m, x: m.histogram(x, 2, range=(3.0, 1.0)), "min should not exceed max"),
    (lambda m, x: m.histogram(x / 0, 2), "is not finite"),
    (lambda m, x: m.histogramdd(x[0], 2), "at least 2 dimensions"),
    (lambda m, x: m.histogramdd(x, [2, 2]), "expected 4 sequences of bin edges"),
    (lambda m, x: m.trapezoid(x, 2.0), ""),
    (lambda m, x: m.trapezoid(x, x[0, :2]), "one `x` value for each sample point"),
    (lambda m, x: m.trapezoid(x[0, 0]), "has no dimensions"),
    (lambda m, x: m.gradient(x[0, :1]), "at least edge_order+1"),
    (lambda m, x: m.gradient(x[0, :2], edge_order=2), "at least edge_order+1"),
    (lambda m, x: m.gradient(x, edge_order=3), "only supports edge_order=1 and edge_order=2"),
    (lambda m, x: m.gradient(x, spacing=[1.0, 2.0, 3.0]), "list of length 3"),
])
def test_errors_match_torch(fn, match):
    check_raises(fn, [X], match=match)


def test_cov_warns_without_degrees_of_freedom():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(lambda m, x: m.cov(x[:, :1]), [X], grad=False)
    for m in (torch, __import__("ember")):
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            m.cov(m.tensor(X[:, :2]), correction=2)


def test_histogram_edges_and_points_outside():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy RuntimeWarning on NaN or inf input
        check(lambda m, x: tuple(m.histogram(x, 2, range=(0.0, 1.0))),
              [np.array([0.0, 0.5, 1.0, 1.5, -1.0, np.nan, np.inf], np.float32)], grad=False)
    check(lambda m, x: tuple(m.histogram(x, 2)), [np.array([3.0, 3.0], np.float32)], grad=False)
    check(lambda m, x: tuple(m.histogram(x, 2)), [np.zeros(0, np.float32)], grad=False)
    check(lambda m, x: tuple(m.histogram(x, m.tensor([0.0, 1.0, 1.0, 2.0]))),
          [np.array([1.0, 2.0], np.float32)], grad=False)


@pytest.mark.parametrize("fn, match", [
    (lambda m, x: m.segment_reduce(x[0], "bad", lengths=m.tensor([4])),
     "reduce argument must be either sum, prod, mean, amax or amin, got bad"),
    (lambda m, x: m.segment_reduce(x[0], "sum", lengths=m.tensor([2, 1])),
     "Expected all rows of lengths along axis to sum"),
    (lambda m, x: m.segment_reduce(x[0], "sum", indices=m.tensor([0, 0, 1, 1])),
     "indices based reduction is not supported yet"),
    (lambda m, x: m.segment_reduce(x[0].long(), "sum", lengths=m.tensor([4])),
     "not implemented for 'Long'"),
])
def test_segment_reduce_errors(fn, match):
    check_raises(fn, [X], match=match)

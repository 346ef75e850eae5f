"""Statistics and numerical calculus: quantile/nanquantile, cov/corrcoef, histogram/histogramdd,
trapezoid/trapz/cumulative_trapezoid and gradient.

Everything but the histograms is a composition of ember ops (sort, gather, lerp, matmul,
slicing), so it differentiates -- and differentiates again -- with no rules of its own, just
as torch writes most of these in terms of other ops. The histograms count, so they have no
gradient; they are one kernel each.

Read next: `shape.py`.
"""
import builtins
import math
import numbers
import warnings

import numpy as np  # dtypes only: kernels use `xp`

from .. import _creation, return_types
from .. import _dtype as dt
from .._tensor import Tensor
from .._utils import wrap_dim
from ._op import defop, export
from .shape import cat

__all__ = ["quantile", "nanquantile", "cov", "corrcoef", "histogram", "histogramdd",
           "trapezoid", "trapz", "cumulative_trapezoid", "gradient"]

histogram_result = return_types._structseq("histogram", ["hist", "bin_edges"])
histogramdd_result = return_types._structseq("histogramdd", ["hist", "bin_edges"])
return_types.histogram = histogram_result
return_types.histogramdd = histogramdd_result


def _expect_tensor(fn_name, value, name="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn_name}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _slice(x, dim, start, stop):
    index = [builtins.slice(None)] * x.ndim
    index[dim] = builtins.slice(start, stop)
    return x[tuple(index)]


def _as_float(x):
    """Integers and bools compute in the default float dtype (torch's promotion for these)."""
    return x if x.dtype.is_floating_point else x.to(dt.get_default_dtype())


# ==============================================================================================
# quantile
#
# The q-th quantile of n sorted values sits at rank q (n - 1): linear interpolation between
# the values at floor and ceil of the rank (or one of them, their midpoint, or the nearest,
# rounding halves to even as torch does). NaN sorts last: quantile answers NaN for a slice with
# one (its rank moves onto the NaN); nanquantile ranks among the non-NaN values only.

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(name, input, q, interpolation):
    _expect_tensor(name, input)
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.numel() and builtins.bool(((q < 0) | (q > 1)).any()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    _check_quantile(name, input, q, interpolation)
    if dim is None or input.ndim == 0:
        x = input.reshape(-1)
    else:
        x = input.movedim(wrap_dim(dim, input.ndim), -1)
    values = x.sort(-1).values
    n = values.shape[-1]
    if ignore_nan:
        valid = (~values.isnan()).sum(-1, keepdim=True)
    else:
        valid = _creation.full(values.shape[:-1] + (1,), n, device=x.device)
    qs = q if isinstance(q, Tensor) else _creation.tensor(q, dtype=x.dtype, device=x.device)
    if qs.ndim == 1:  # one result per q, in a leading dim
        qs = qs.reshape((-1,) + (1,) * values.ndim)
        values = values.expand((qs.shape[0],) + values.shape)
    rank = qs * (valid - 1).to(x.dtype)
    # a NaN in the slice (quantile), or nothing but NaNs (nanquantile): point at the last value
    hopeless = (valid == 0) if ignore_nan else values[..., -1:].isnan()
    rank = rank.where(~hopeless, float(n - 1))
    result = _interpolate(values, rank, interpolation).squeeze(-1)
    return _quantile_shape(result, input, dim, keepdim, qs.ndim > 0)


def _interpolate(values, rank, interpolation):
    """The values at fractional `rank` (last dim), by torch's interpolation rules."""
    if interpolation == "nearest":
        return values.gather(-1, rank.round().long())
    low, high = rank.floor().long(), rank.ceil().long()
    below, above = values.gather(-1, low), values.gather(-1, high)
    if interpolation == "lower":
        return below
    if interpolation == "higher":
        return above
    weight = 0.5 if interpolation == "midpoint" else rank - low.to(rank.dtype)
    return below.lerp(above, weight)


def _quantile_shape(result, input, dim, keepdim, q_dim):
    """Put back the reduced dim (keepdim) after the q dim that leads when q is 1-D."""
    if not keepdim:
        return result
    lead = 1 if q_dim else 0
    if dim is None:
        return result.reshape(result.shape[:lead] + (1,) * input.ndim)
    return result.unsqueeze(lead + wrap_dim(dim, input.ndim)) if input.ndim else result


@export(method=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q a float or a 1-D tensor, whose dim then leads the result) of all
    elements or along `dim`; a slice containing NaN gives NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@export(method=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile() ignoring NaNs (a slice of nothing but NaNs gives NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)


# ==============================================================================================
# cov, corrcoef


def _check_weights(name, weights, observations, integral):
    if weights is None:
        return
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {weights.ndim} dimensions")
    if weights.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {weights.numel()} != "
                           f"{observations}")
    if integral and (weights.dtype.is_floating_point or weights.dtype is dt.bool):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{dt.scalar_name(weights.dtype)} dtype")
    if not integral and not weights.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{name} with {dt.scalar_name(weights.dtype)} dtype")
    if weights.numel() and builtins.bool((weights < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def _degrees_of_freedom(n, w_sum, w, aweights, correction):
    """numpy's and torch's normalisation of the weighted covariance."""
    if w is None:
        return n - correction
    if correction == 0:
        return w_sum
    if aweights is None:
        return w_sum - correction
    return w_sum - correction * (w * aweights).sum() / w_sum


@export(method=True)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in input's rows (observations in its columns),
    weighted by integer frequencies and/or float observation weights; divided by the number of
    observations minus `correction` (Bessel's 1 by default)."""
    _expect_tensor("cov", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    _check_weights("fweights", fweights, n, integral=True)
    _check_weights("aweights", aweights, n, integral=False)
    x = _as_float(x)
    w = fweights if aweights is None else (aweights if fweights is None else fweights * aweights)
    if w is None:
        mean = x.mean(1, keepdim=True)
        w_sum = n
    else:
        w_sum = w.sum()
        mean = (x * w).sum(1, keepdim=True) / w_sum
    dof = _degrees_of_freedom(n, w_sum, w, aweights, correction)
    if builtins.bool(dof <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        dof = dof * 0 if isinstance(dof, Tensor) else 0
    centred = x - mean
    weighted = centred if w is None else centred * w
    result = (weighted @ centred.mT) / dof
    return result.squeeze() if x.shape[0] == 1 else result


@export(method=True)
def corrcoef(input):
    """Pearson correlation coefficients of the variables in input's rows: cov / (std_i std_j),
    clamped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    return (c / std.unsqueeze(1) / std.unsqueeze(0)).clamp(-1, 1)


# ==============================================================================================
# histograms: counts (or summed weights) per bin, no gradient
#
# Equal-width bins have edges linspace(min, max, bins + 1) in the input's dtype; a value's bin
# is the number of edges at or below it, less one, with the last edge closing the last bin --
# what torch's interpolation-plus-local-search finds. Values outside, and NaNs, are left out.


def _edges_of(xp, column, bins, low, high):
    """The bin edges of one dimension: given, or equal widths over [low, high] (the data's
    range when not given; a point range widens by 0.5 each way, an empty one is [0, 1])."""
    if not isinstance(bins, numbers.Integral):
        return bins
    if low is None:
        finite = column.size > 0
        low = builtins.float(column.min()) if finite else 0.0
        high = builtins.float(column.max()) if finite else 1.0
    if low == high:
        low, high = low - 0.5, high + 0.5
    return xp.linspace(low, high, bins + 1).astype(column.dtype)


def _bin_index(xp, column, edges):
    """Each value's bin, or -1 outside the edges (and for NaN)."""
    index = xp.searchsorted(edges, column, side="right") - 1
    index = xp.where(column == edges[-1], edges.shape[0] - 2, index)
    outside = (column < edges[0]) | (column > edges[-1]) | xp.isnan(column)
    return xp.where(outside, -1, index)


def _histogramdd_kernel(xp, points, weight, *edge_arrays, bins, ranges, density):
    d = points.shape[-1]
    points = points.reshape(-1, d)
    given = iter(edge_arrays)  # the edges of the dims whose `bins` entry is None, in order
    edges = []
    for k in range(d):
        low, high = (None, None) if ranges is None else ranges[k]
        edges.append(_edges_of(xp, points[:, k], next(given) if bins[k] is None else bins[k],
                               low, high))
    counts = tuple(e.shape[0] - 1 for e in edges)
    index = xp.zeros(points.shape[0], dtype=np.int64)
    keep = xp.ones(points.shape[0], dtype=bool)
    for k in range(d):
        bin_k = _bin_index(xp, points[:, k], edges[k])
        keep &= bin_k >= 0
        index = index * counts[k] + xp.maximum(bin_k, 0)
    w = None if weight is None else weight.reshape(-1)[keep]
    hist = xp.bincount(index[keep], weights=w, minlength=math.prod(counts))
    hist = hist.astype(points.dtype).reshape(counts)
    if density:
        hist = _density(xp, hist, edges)
    return (hist,) + tuple(edges)


def _density(xp, hist, edges):
    """Counts divided by the total and by each bin's volume (integrates to 1)."""
    total = hist.sum()
    with np.errstate(all="ignore"):  # no data, or an empty bin width: nan/inf, as in torch
        for k, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[k] = e.shape[0] - 1
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
        return hist / total


_histogramdd = defop("histogramdd", "none", _histogramdd_kernel, differentiable=False)


def _check_histogram(name, input, weight, dims):
    if input.dtype not in (dt.float32, dt.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:dims]):
        raise RuntimeError(f"torch.{name}: if weight tensor is provided it should have the same "
                           f"shape as the input tensor excluding its innermost dimension")


def _bins_per_dim(bins, d):
    """(int bins or None, edge tensors) per dimension."""
    if isinstance(bins, numbers.Integral):
        bins = [bins] * d
    if len(bins) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each "
                           f"dimension of the input but got {len(bins)}")
    counts, edges = [], []
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.ndim != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensors should be 1D, but got tensor "
                                   f"with {b.ndim} dimensions at index {k}")
            counts.append(None)
            edges.append(b)
        else:
            if b <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                                   f"dimension {k}")
            counts.append(int(b))
    return counts, edges


def _ranges(range, d, points):
    if range is None:
        for k in builtins.range(d):
            column = points[..., k]
            if column.numel():
                low, high = float(column.min()), float(column.max())
                if not (math.isfinite(low) and math.isfinite(high)):
                    raise RuntimeError(f"torch.histogramdd: dimension {k}'s range [{low:g}, "
                                       f"{high:g}] is not finite")
        return None
    if len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should "
                           f"have {2 * d} elements, but got {len(range)}")
    pairs = tuple((float(range[2 * k]), float(range[2 * k + 1])) for k in builtins.range(d))
    for k, (low, high) in enumerate(pairs):
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{low:g} max {high:g} for dimension {k}")
    return pairs


def _histogramdd_impl(name, points, bins, range, weight, density):
    d = points.shape[-1]
    _check_histogram(name, points, weight, points.ndim - 1)
    counts, edge_tensors = _bins_per_dim(bins, d)
    ranges = _ranges(range, d, points)
    hist, *edges = _histogramdd(points, weight, *edge_tensors, bins=tuple(counts),
                                ranges=ranges, density=density)
    return hist, edges


@export(method=True)
def histogram(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): how many elements (or how much `weight`) fall in each bin -- `bins`
    equal bins over `range` (the data's range by default), or between the given edges."""
    _expect_tensor("histogram", input)
    if isinstance(bins, Tensor):
        bins = [bins]
    points = input.reshape(-1, 1)
    w = None if weight is None else weight.reshape(-1)
    if weight is not None and weight.shape != input.shape:
        raise RuntimeError("torch.histogram: if weight tensor is provided it should have the same "
                           "shape as the input tensor")
    hist, edges = _histogramdd_impl("histogram", points, bins, range, w, density)
    return histogram_result(hist, edges[0])


@export
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): the D-dimensional histogram of the points in input's rows (its last
    dim is D); `bins` is one count, D counts or D edge tensors."""
    _expect_tensor("histogramdd", input)
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    hist, edges = _histogramdd_impl("histogramdd", input, bins, range, weight, density)
    return histogramdd_result(hist, tuple(edges))


# ==============================================================================================
# trapezoid rule: sum of (y[i] + y[i+1]) / 2 * (x[i+1] - x[i]) along `dim`


def _spacing(x, y, dim):
    """x[i+1] - x[i] shaped to broadcast against y's slices along `dim`."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        steps = x[1:] - x[:-1]
        return steps.reshape((-1,) + (1,) * (y.ndim - 1 - dim))
    dim_x = dim - y.ndim + x.ndim if dim - y.ndim + x.ndim >= 0 else dim
    return _slice(x, dim_x, 1, None) - _slice(x, dim_x, None, -1)


def _trapezoids(name, y, x, dx, dim):
    """The areas of the trapezoids between neighbours along `dim`."""
    _expect_tensor(name, y, "y")
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, y.ndim)
    y = _as_float(y)
    heights = (_slice(y, dim, 1, None) + _slice(y, dim, None, -1)) / 2
    if x is None:
        return heights * (1 if dx is None else dx)
    if dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: pass x or dx, "
                        "not both")
    _expect_tensor(name, x, "x", 2)
    return heights * _spacing(_as_float(x), y, dim)


@export
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of y along `dim` by the trapezoid rule, at points x (a tensor) or a uniform
    spacing dx (default 1)."""
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"trapezoid(): argument 'x' (position 2) must be Tensor, not "
                        f"{type(x).__name__}")
    areas = _trapezoids("trapezoid", y, x, dx, dim)
    return areas.sum(wrap_dim(dim, y.ndim))


@export
def trapz(y, x=None, *, dx=None, dim=-1):
    """torch.trapz: an alias of trapezoid."""
    return trapezoid(y, x, dx=dx, dim=dim)


@export
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral along `dim` (one element fewer than y there)."""
    areas = _trapezoids("cumulative_trapezoid", y, x, dx, dim)
    return areas.cumsum(wrap_dim(dim, y.ndim))


# ==============================================================================================
# gradient: second-order central differences inside, one-sided ones (first or second order)
# at the two ends, for uniform spacing or given coordinates (NumPy's formulas)


def _gradient_dims(input, spacing, dim):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [wrap_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
    if spacing is None or isinstance(spacing, numbers.Number):
        return dims, [1.0 if spacing is None else spacing] * len(dims)
    if isinstance(spacing, Tensor):
        raise TypeError("gradient(): argument 'spacing' must be a number or a tuple of numbers "
                        "or tensors, not Tensor")
    spacing = list(spacing)
    if len(spacing) != len(dims):
        given = "dim argument was not given" if dim is None else "dim argument was given"
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.ndim}', since {given},"
                           f" but got a list of length {len(spacing)}")
    return dims, spacing


def _along(t, dim, ndim):
    """A 1-D tensor shaped to broadcast along `dim` of an ndim-dimensional tensor."""
    return t.reshape((-1,) + (1,) * (ndim - 1 - dim))


def _uniform_gradient(f, dim, h, edge_order):
    n = f.shape[dim]
    inner = (_slice(f, dim, 2, None) - _slice(f, dim, None, -2)) / (2 * h)
    f0, f1, f2 = (_slice(f, dim, i, i + 1) for i in range(3))
    fa, fb, fc = (_slice(f, dim, n - 3 + i, n - 2 + i) for i in range(3))  # the last three
    if edge_order == 1:
        ends = [(f1 - f0) / h, (fc - fb) / h]
    else:
        ends = [(-1.5 * f0 + 2 * f1 - 0.5 * f2) / h, (0.5 * fa - 2 * fb + 1.5 * fc) / h]
    return cat([ends[0], inner, ends[1]], dim)


def _coordinate_gradient(f, dim, x, edge_order):
    n = f.shape[dim]
    x = _as_float(x).to(f.dtype)
    h = x[1:] - x[:-1]
    hl, hr = _along(h[:-1], dim, f.ndim), _along(h[1:], dim, f.ndim)
    left, mid, right = (_slice(f, dim, i, n - 2 + i) for i in range(3))
    inner = (hl * hl * right - hr * hr * left + (hr * hr - hl * hl) * mid) / (hl * hr * (hl + hr))
    f0, f1, f2 = (_slice(f, dim, i, i + 1) for i in range(3))
    fa, fb, fc = (_slice(f, dim, n - 3 + i, n - 2 + i) for i in range(3))
    if edge_order == 1:
        ends = [(f1 - f0) / h[0], (fc - fb) / h[-1]]
    else:
        d1, d2 = h[0], h[1]
        start = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * f0 + (d1 + d2) / (d1 * d2) * f1
                 - d1 / (d2 * (d1 + d2)) * f2)
        d1, d2 = h[-2], h[-1]
        end = (d2 / (d1 * (d1 + d2)) * fa - (d1 + d2) / (d1 * d2) * fb
               + (2 * d2 + d1) / (d2 * (d1 + d2)) * fc)
        ends = [start, end]
    return cat([ends[0], inner, ends[1]], dim)


@export
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """One tensor per dim in `dim` (all by default): the derivative estimated by differences,
    with uniform `spacing` (a number per dim) or at coordinates (a 1-D tensor per dim)."""
    _expect_tensor("gradient", input)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims, spacings = _gradient_dims(input, spacing, dim)
    f = _as_float(input)
    for d in dims:
        if f.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    results = []
    for d, h in zip(dims, spacings):
        if isinstance(h, Tensor):
            if h.ndim != 1 or h.shape[0] != f.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor to be on the same "
                                   f"device and of size {f.shape[d]} along dimension {d}")
            results.append(_coordinate_gradient(f, d, h, edge_order))
        else:
            results.append(_uniform_gradient(f, d, h, edge_order))
    return tuple(results)

"""The float arithmetic torch's CPU random kernels round with, reproduced in NumPy.

Matching torch bit for bit needs more than the right formulas: every rounding must be the same.
Three things differ from plain NumPy:

* Fused multiply-adds. torch's kernels are compiled with contraction on, so `x * (to - from) +
  from` is one FMA: a single rounding. `fma32` and `fma64` compute a*b + c rounded once.
  float32: the product is exact in float64, the sum rounds once to float64; rounding that to
  float32 is then right unless it lands exactly halfway between two floats, where the exact
  residual (Knuth's two-sum) breaks the tie. float64: Boldo and Melquiond's emulation -- the
  exact product as a double-double (Veltkamp/Dekker), the exact sum c + p_hi, the low parts
  added with rounding to odd, one final rounding.
* The C library. torch calls libm's scalar `log`, `log1p`, `exp`, `tan`, `sin`, `cos` on
  doubles; NumPy's SIMD loops round a few results differently (log: ~0.3% of arguments here,
  log1p ~7%). `libm(name, x)` calls Python's `math` functions (which are libm's) element by
  element, or NumPy's ufunc when a probe shows it equals libm on this machine (sin and cos
  usually do); log, the hot one (float64 normals), has a vectorised shortcut that is exact
  for glibc (below). `libm_lgamma` is the C library's own lgamma, through ctypes (Python's
  `math.lgamma` is CPython's implementation, not libm's).
* AVX2 code. On x86 CPUs with AVX2, float32 normals come from a vectorised Box-Muller whose
  log, sin and cos are Julien Pommier's Cephes-derived polynomials (torch's `avx_mathfun.h`),
  with the multiply-adds GCC fuses. `box_muller_avx2` evaluates the same polynomials, in the
  same order, with the same fusions (found by comparing 10**6 samples with torch's).

Read next: `_random_kernels.py` (what each random op draws and how it transforms it).
"""
import ctypes
import ctypes.util
import decimal
import math

import numpy as np

__all__ = ["fma32", "fma64", "libm", "libm_lgamma", "box_muller_avx2"]

_F32 = np.float32
_F64 = np.float64


# ----------------------------------------------------------------------------------------------
# fused multiply-add


def fma32(a, b, c):
    """round_to_float32(a * b + c) with one rounding (float32 values, arrays or scalars;
    an operand may come as float64 holding a float32 value)."""
    total = np.multiply(a, b, dtype=_F64)  # exact: 24 + 24 bits fit in 53
    total += c
    result = total.astype(_F32)
    # A float64 sum exactly halfway between two float32s (low 29 mantissa bits 1000...0)
    # may hide a residual that decides the float32 rounding: rare, so checked in bulk.
    halfway = (total.view(np.uint64) & np.uint64(0x1FFFFFFF)) == 0x10000000
    if halfway.any():
        product, c = np.broadcast_arrays(np.multiply(a, b, dtype=_F64), np.asarray(c, _F64))
        at = np.flatnonzero(halfway)
        residual = _two_sum_error(product.ravel()[at], c.ravel()[at], total.ravel()[at])
        flat = result.reshape(-1)
        flat[at] = _round_halfway(total.ravel()[at], residual, flat[at])
    return result


def _round_halfway(total, residual, rounded):
    """float32 rounding of total + residual, where total is exactly halfway between two
    float32s and `rounded` is NumPy's (ties-to-even) rounding of total alone."""
    below = np.nextafter(rounded, np.float32(-np.inf))
    above = np.nextafter(rounded, np.float32(np.inf))
    lower = np.where(rounded > total, below, rounded)  # the float32 neighbours of total
    upper = np.where(rounded > total, rounded, above)
    return np.where(residual > 0, upper, np.where(residual < 0, lower, rounded))


def _two_sum_error(a, b, s):
    """The exact error of s = fl(a + b) (Knuth): a + b == s + error."""
    b_virtual = s - a
    return (a - (s - b_virtual)) + (b - b_virtual)


def _split(a):
    """Veltkamp's split: a == high + low, each with at most 26 significant bits."""
    scaled = a * 134217729.0  # 2**27 + 1
    high = scaled - (scaled - a)
    return high, a - high


def fma64(a, b, c):
    """a * b + c on float64 arrays with one rounding (Boldo & Melquiond, rounding to odd)."""
    a, b, c = (np.asarray(x, dtype=_F64) for x in (a, b, c))
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(b)
    product_low = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    high = c + product
    low = _two_sum_error(c, product, high)
    return high + _round_to_odd_sum(low, product_low)


def _round_to_odd_sum(x, y):
    """x + y rounded to odd: truncated, with the last bit set when inexact."""
    total = x + y
    error = _two_sum_error(x, y, total)
    even = (np.asarray(total).view(np.uint64) & np.uint64(1)) == 0
    fix = (error != 0) & even
    if np.any(fix):
        total = np.where(fix, np.nextafter(total, np.copysign(np.inf, error)), total)
    return total


# ----------------------------------------------------------------------------------------------
# the C library's double functions

_PROBES = {}

# The arguments each `math` function takes without raising (libm answers the rest with an
# infinity or a NaN, which NumPy's ufunc gives too).
_DOMAIN = {
    "log": lambda x: x > 0,
    "log1p": lambda x: x > -1,
    "exp": lambda x: x < 709.0,
}


def libm(name, x):
    """libm's `name` (a function of Python's `math`) on each element of float64 array `x`."""
    x = np.asarray(x, dtype=_F64)
    ufunc = getattr(np, name)
    if _numpy_matches(name):
        return ufunc(x)
    inside = _DOMAIN.get(name, np.isfinite)(x) & np.isfinite(x)
    with np.errstate(all="ignore"):
        out = ufunc(x)
    out[inside] = _exact_log(x[inside]) if name == "log" and _log_shortcut_holds() else \
        _per_element(getattr(math, name), x[inside])
    return out


def _per_element(fn, x):
    flat = np.fromiter(map(fn, x.ravel().tolist()), dtype=_F64, count=x.size)
    return flat.reshape(x.shape)


def _numpy_matches(name):
    """Whether NumPy's ufunc `name` rounds like libm on this machine (probed once, on 4096
    arguments in the range the random kernels use)."""
    known = _PROBES.get(name)
    if known is None:
        probe = np.random.default_rng(19937).random(4096)
        probe = {"log": 1.0 - probe, "log1p": -probe, "exp": 8.0 * probe - 4.0,
                 "tan": math.pi * (probe - 0.5)}.get(name, _TWO_PI_64 * probe)
        expected = _per_element(getattr(math, name), probe)
        known = _PROBES[name] = bool(np.array_equal(getattr(np, name)(probe), expected))
    return known


_TWO_PI_64 = 2.0 * math.pi


# -- log, vectorised: a double-double evaluation decides libm's rounding ---------------------
#
# glibc's log (2.28 and later) is within 0.519 ulp of the exact value, so wherever the exact
# value lies more than 0.02 ulp from a rounding midpoint, libm returns the correctly rounded
# double. `_double_double_log` computes log(x) to ~2**-66 relative (x = 2**e m, m near a
# table point c = j/128: log x = e ln2 + log c + log1p((m - c)/c), the first terms exact or in
# two parts, the series in double); the few results near a midpoint (~5%) are left to libm
# itself. A probe against math.log at first use keeps the shortcut off for any other libm.

_MIDPOINT_MARGIN = 0.025  # ulps: glibc's 0.019 beyond a half, plus our error
_LOG_SERIES = (1 / 3, -1 / 4, 1 / 5, -1 / 6, 1 / 7, -1 / 8, 1 / 9, -1 / 10, 1 / 11)
_LOG_TABLE = {}
_SHORTCUT = {}


def _exact_log(x):
    """libm's log of positive finite doubles, chunk by chunk (cache-sized temporaries)."""
    out = np.empty_like(x)
    for i in range(0, x.size, 8192):
        part = x[i:i + 8192]
        value, unsure = _double_double_log(part)
        value[unsure] = _per_element(math.log, part[unsure])
        out[i:i + 8192] = value
    return out


def _log_tables():
    """log(j / 128) for j = 90..182 and ln 2, each as a (high, low) pair, from `decimal`."""
    if not _LOG_TABLE:
        ctx = decimal.Context(prec=50)
        high, low = np.zeros(183), np.zeros(183)
        for j in range(90, 183):
            value = ctx.ln(decimal.Decimal(j) / 128)
            high[j] = float(value)
            low[j] = float(value - decimal.Decimal(high[j]))
        ln2 = ctx.ln(decimal.Decimal(2))
        ln2_high = math.ldexp(math.floor(math.ldexp(float(ln2), 32)), -32)  # exact times e
        _LOG_TABLE.update(high=high, low=low, ln2_high=ln2_high,
                          ln2_low=float(ln2 - decimal.Decimal(ln2_high)))
    return _LOG_TABLE


def _double_double_log(x):
    """(log x rounded to double, whether that rounding is too close to call)."""
    table = _log_tables()
    m, e = np.frexp(x)
    small = m < _SQRT_HALF_64
    m = np.where(small, m + m, m)  # in [sqrt(1/2), sqrt(2))
    e = (e - small).astype(_F64)
    j = np.rint(m * 128.0)
    c = j / 128.0
    d = m - c                      # exact (Sterbenz)
    t, t_low = _quotient(d, c)     # t + t_low = d / c
    s, s_low = _log1p_small(t, t_low)
    j = j.astype(np.intp)
    scaled_e = e * table["ln2_high"]  # exact: ln2_high has 32 bits
    head = scaled_e + table["high"][j]
    head_low = _two_sum_error(scaled_e, table["high"][j], head)
    high = head + s
    low = (_two_sum_error(head, s, high) + head_low + s_low
           + (e * table["ln2_low"] + table["low"][j]))
    value = high + low
    residual = (high - value) + low
    ulp = np.spacing(np.abs(value))
    mantissa = np.frexp(value)[0]
    unsure = ((0.5 * ulp - np.abs(residual) < _MIDPOINT_MARGIN * ulp)
              | (np.abs(mantissa) == 0.5) | (value == 0))  # powers of two: uneven ulps
    return value, unsure


def _quotient(d, c):
    """d / c as high + low (c has 8 significant bits, so t * c splits exactly)."""
    t = d / c
    t_high, t_rest = _split(t)
    product = t * c
    error = (t_high * c - product) + t_rest * c  # product + error == t * c exactly
    return t, ((d - product) - error) / c


def _log1p_small(t, t_low):
    """log1p(t + t_low) for |t| < 2**-7 as high + low: t - t**2 / 2 in two parts, the rest of
    the series in double."""
    t_high, t_rest = _split(t)
    square = t * t
    square_low = ((t_high * t_high - square) + 2 * t_high * t_rest) + t_rest * t_rest
    half = 0.5 * square
    high = t - half
    series = _LOG_SERIES[-1]
    for coefficient in _LOG_SERIES[-2::-1]:
        series = series * t + coefficient
    low = (_two_sum_error(t, -half, high) + t_low - 0.5 * square_low - t * t_low
           + series * (square * t))
    return high, low


_SQRT_HALF_64 = math.sqrt(0.5)


def _log_shortcut_holds():
    """Whether the double-double shortcut reproduces this machine's libm log (probed once)."""
    known = _SHORTCUT.get("log")
    if known is None:
        rng = np.random.default_rng(20260)
        probe = np.concatenate([1.0 - rng.integers(0, 2**53, 20000) * 2.0 ** -53,
                                np.exp(rng.uniform(-700, 700, 4000))])
        known = _SHORTCUT["log"] = bool(np.array_equal(_exact_log(probe),
                                                       _per_element(math.log, probe)))
    return known


def _load_lgamma():
    """The C library's lgamma (Python's math.lgamma is CPython's own)."""
    name = ctypes.util.find_library("m")
    try:
        fn = ctypes.CDLL(name).lgamma
    except (OSError, AttributeError, TypeError):
        return math.lgamma
    fn.restype, fn.argtypes = ctypes.c_double, [ctypes.c_double]
    return fn


libm_lgamma = _load_lgamma()


# ----------------------------------------------------------------------------------------------
# torch's AVX2 Box-Muller (avx_mathfun.h's log256_ps and sincos256_ps, float32)

_LOG_POLY = tuple(_F32(v) for v in (
    7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LOG_Q1, _LOG_Q2 = _F32(-2.12194440e-4), _F32(0.693359375)
_SQRT_HALF = _F32(0.707106781186547524)
_FOUR_OVER_PI = _F32(1.27323954473516)
_PI_PARTS = (_F32(-0.78515625), _F32(-2.4187564849853515625e-4), _F32(-3.77489497744594108e-8))
_COS_POLY = (_F32(2.443315711809948e-5), _F32(-1.388731625493765e-3), _F32(4.166664568298827e-2))
_SIN_POLY = (_F32(-1.9515295891e-4), _F32(8.3321608736e-3), _F32(-1.6666654611e-1))
_TWO_PI = _F32(2.0 * math.pi)


def _log(x):
    """log256_ps: log of positive normal float32s (exponent and mantissa split, then a
    degree-9 polynomial around 1)."""
    bits = x.view(np.int32)
    mantissa = ((bits & 0x007FFFFF) | 0x3F000000).view(_F32)  # in [0.5, 1)
    small = mantissa < _SQRT_HALF
    exponent = ((bits >> 23) - 126).astype(_F32) - small
    # x - 1, or 2x - 1 below sqrt(1/2): exact either way
    m = mantissa.copy()
    np.add(m, mantissa, out=m, where=small)
    m -= _F32(1)
    m2 = m * m
    m64 = m.astype(_F64)  # converted once for the nine multiply-adds below
    y = fma32(_LOG_POLY[0], m64, _LOG_POLY[1])
    for coefficient in _LOG_POLY[2:]:
        y = fma32(y, m64, coefficient)
    y = fma32(y * m, m2, exponent * _LOG_Q1)
    y = y - m2 * _F32(0.5)  # m2 * 0.5 is exact, so the fused and unfused forms agree
    return (m + y) + exponent * _LOG_Q2  # exponent * Q2 is exact too


def _sincos(x):
    """sincos256_ps for x in [0, 2 pi): reduce by multiples of pi/4 in three parts, then the
    cosine and sine polynomials, chosen and signed by the octant."""
    octant = ((x * _FOUR_OVER_PI).astype(np.int32) + 1) & ~1
    y = octant.astype(_F32)
    # octant <= 8 has at most two significant bits and the first two parts of pi/4 at most
    # eleven, so those products are exact and their FMAs are plain additions
    x = x + y * _PI_PARTS[0]
    x = x + y * _PI_PARTS[1]
    x = fma32(y, _PI_PARTS[2], x)
    z = x * x
    cos_poly = fma32(_COS_POLY[0], z, _COS_POLY[1])
    cos_poly = fma32(cos_poly, z, _COS_POLY[2])
    cos_poly = fma32(cos_poly * z, z, -(z * _F32(0.5))) + _F32(1)
    sin_poly = fma32(_SIN_POLY[0], z, _SIN_POLY[1])
    sin_poly = fma32(sin_poly, z, _SIN_POLY[2])
    sin_poly = fma32(sin_poly * z, x, x)
    # Pick each polynomial by the octant and set the signs. The AVX code does it with bit
    # masks; for angles in [0, 2 pi) the octant is 0, 2, 4, 6 or 8 (half of it: 0 to 4), the
    # sine polynomial serves the sine at even halves, and the signs flip at halves 2, 3
    # (sine) and 1, 2 (cosine).
    half = octant >> 1
    use_sin = (half & 1) == 0
    sin, cos = cos_poly.copy(), sin_poly.copy()
    np.copyto(sin, sin_poly, where=use_sin)
    np.copyto(cos, cos_poly, where=use_sin)
    sin.view(np.int32)[...] ^= (half & 2) << 30
    cos.view(np.int32)[...] ^= ((half + 1) & 2) << 30
    return sin, cos


def box_muller_avx2(u, mean, std):
    """torch's NormalFill16 for AVX2 on float32 uniforms `u` of shape (blocks, 16): in each
    block, u[:8] gives the radii sqrt(-2 log(1 - u)) and u[8:] the angles 2 pi u; the first
    eight outputs are r cos(theta), the last eight r sin(theta), each as fma(z, std, mean).
    Fastest on a few thousand blocks at a time (the temporaries then stay in cache)."""
    radius = np.sqrt(_F32(-2) * _log(_F32(1) - u[:, :8]))
    sin, cos = _sincos(_TWO_PI * u[:, 8:])
    out = np.empty(u.shape, dtype=_F32)
    out[:, :8] = _scale(radius * cos, mean, std)
    out[:, 8:] = _scale(radius * sin, mean, std)
    return out


def _scale(z, mean, std):
    """fma(z, std, mean) in float32; the common cases need no emulation."""
    if std == 1:
        return z + mean
    if mean == 0:
        return z * std + _F32(0)
    return fma32(z, std, mean)

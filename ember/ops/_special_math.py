"""The numerics behind ember/ops/special.py: series, recurrences and asymptotic expansions on
raw float64 arrays.

Each function takes the array module `xp` and flat (1-d) float64 arrays -- special.py
flattens, casts and rounds back -- and returns a new flat float64 array. Loops run over the
terms of a series, never over elements; where elements need different numbers of terms, the
loop works on the shrinking set of those still converging.

The methods are the textbook ones (Abramowitz & Stegun, DLMF, Numerical Recipes):
    lgamma, digamma, trigamma  recurrence up to x >= 10, then Stirling's (or de Moivre's) series;
                               the reflection formula below 1/2
    zeta (Hurwitz), polygamma  Euler-Maclaurin summation
    gammainc / gammaincc       power series below x = a + 1, Lentz's continued fraction above,
                               Temme's uniform expansion for a > 1e6
    Bessel I0 / I1             power series below |x| = 30, Hankel's expansion above
    erfcx, ndtr, log_ndtr      erfc's Chebyshev form (pointwise.py) and its asymptotic series
    ndtri                      Acklam's rational approximation, refined by one Halley step
    orthogonal polynomials     their three-term recurrences (trigonometric forms for Chebyshev)
Edge values follow torch (digamma(-0.) = +inf, zeta(x, inf) = nan, ...), each noted where made.

Read next: special.py.
"""
import math

from .pointwise import _FULL, _erfc_chebyshev, _exp_neg_square

_EPS = 2.0 ** -53
_LOG_2PI = math.log(2 * math.pi)
_SQRT2 = math.sqrt(2.0)
_EULER = 0.5772156649015329

# Bernoulli numbers B_2 ... B_24
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)


def _where(xp, condition, a, b):
    return xp.where(condition, a, b)


def sin_pi(xp, x):
    """sin(pi x), exactly 0 at the integers: x = k + r with k an integer and |r| <= 1/2 (both
    exact), and sin(pi x) = (-1)^k sin(pi r)."""
    k = xp.round(x)
    s = xp.sin(math.pi * (x - k))
    return xp.where(xp.remainder(k, 2) == 1, -s, s)


# ----------------------------------------------------------------------------------------------
# the gamma family


def _shift_up(xp, x, limit, step, start):
    """Add 1 to each element below `limit` (x > 0) until it is not, folding each value passed
    into an accumulator, acc = step(acc, z) from `start`; returns (the shifted x, acc). Only
    the elements below the limit take part in the loop."""
    z = x.copy()
    acc = xp.full_like(x, start)
    idx = xp.nonzero(z < limit)[0]
    zs, accs = z[idx], acc[idx]
    for _ in range(int(limit) + 1):
        low = zs < limit
        if not low.any():
            break
        accs = xp.where(low, step(accs, zs), accs)
        zs = zs + low
    z[idx], acc[idx] = zs, accs
    return z, acc


# Stirling: lgamma(z) = (z - 1/2) log z - z + log(2 pi)/2 + sum_k B_2k / (2k (2k - 1) z^(2k-1))
_STIRLING = tuple(b / ((2 * k + 2) * (2 * k + 1)) for k, b in enumerate(_BERNOULLI[:8]))


def _odd_series(xp, z, coefficients):
    """sum_k c_k z^-(2k+1) (Horner's rule in 1/z^2)."""
    w = 1 / (z * z)
    acc = xp.full_like(z, coefficients[-1])
    for c in coefficients[-2::-1]:
        acc *= w
        acc += c
    return acc / z


def _lgamma_right(xp, x):
    """lgamma for x >= 1/2: Stirling's series after shifting x up to 10 (error < 1e-16)."""
    z, product = _shift_up(xp, x, 10, lambda acc, z: acc * z, 1.0)  # at most 10! / 2
    out = (z - 0.5) * xp.log(z) - z + 0.5 * _LOG_2PI + _odd_series(xp, z, _STIRLING)
    return xp.where(x == math.inf, math.inf, out - xp.log(product))


def lgamma(xp, x):
    """log |Gamma(x)|: +inf at the poles 0, -1, -2, ... and at -inf (as torch)."""
    left = x < 0.5
    right = _lgamma_right(xp, xp.where(left, 1 - x, x))
    # reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    reflected = math.log(math.pi) - xp.log(xp.abs(sin_pi(xp, x))) - right
    out = xp.where(left, reflected, right)
    return xp.where(x == -math.inf, math.inf, out)


# de Moivre: digamma(z) = log z - 1/(2z) - sum_k B_2k / (2k z^2k)
_DIGAMMA = tuple(b / (2 * k + 2) for k, b in enumerate(_BERNOULLI[:8]))


def _digamma_right(xp, x):
    z, harmonic = _shift_up(xp, x, 10, lambda acc, z: acc + 1 / z, 0.0)
    out = xp.log(z) - 0.5 / z - _odd_series(xp, z, _DIGAMMA) / z - harmonic
    return xp.where(x == math.inf, math.inf, out)


def digamma(xp, x):
    """d/dx lgamma(x). As torch: +-inf at +-0 (the sign of -x), nan at the negative integers
    and -inf; below 0 the reflection digamma(1 - x) - pi / tan(pi x)."""
    left = x < 0
    right = _digamma_right(xp, xp.where(left, 1 - x, x))
    fraction = x - xp.trunc(x)  # tan(pi x) from the fraction keeps its accuracy for large |x|
    reflected = right - math.pi / xp.tan(math.pi * fraction)
    out = xp.where(left, xp.where(fraction == 0, math.nan, reflected), right)
    return xp.where(x == 0, xp.copysign(math.inf, -x), out)


# trigamma(z) ~ 1/z + 1/(2z^2) + sum_k B_2k / z^(2k+1)
def _trigamma_right(xp, x):
    z, squares = _shift_up(xp, x, 10, lambda acc, z: acc + 1 / (z * z), 0.0)
    return 1 / z + 0.5 / (z * z) + _odd_series(xp, z, _BERNOULLI[:8]) / (z * z) + squares


def trigamma(xp, x):
    """d^2/dx^2 lgamma(x); below 1/2 the reflection pi^2 / sin^2(pi x) - trigamma(1 - x), with
    sin(pi x) evaluated unreduced as torch does, so the negative integers give large finite
    values rather than inf."""
    left = x < 0.5
    right = _trigamma_right(xp, xp.where(left, 1 - x, x))
    s = xp.sin(math.pi * x)
    return xp.where(left, math.pi ** 2 / (s * s) - right, right)


# Euler-Maclaurin tail coefficients B_2j / (2j)!
_EULER_MACLAURIN = tuple(b / math.factorial(2 * j + 2) for j, b in enumerate(_BERNOULLI))
_ZETA_DIRECT_TERMS = 9
_ZETA_MAX_TERMS = 10 ** 6


def _zeta_direct(xp, s, q):
    """sum_{k < N} (q + k)^-s and w = q + N, with N the least count >= 9 that puts w above 9."""
    n = xp.maximum(_ZETA_DIRECT_TERMS, xp.floor(9 - q) + 1)
    n = xp.where(xp.isfinite(n), n, _ZETA_DIRECT_TERMS)
    if n.size and n.max() > _ZETA_MAX_TERMS:
        raise NotImplementedError("zeta(x, q) for q below -1e6 is not implemented: its direct "
                                  "sum would need more than a million terms")
    total = xp.zeros_like(q)
    live = xp.arange(q.size)
    for k in range(int(n.max()) if n.size else 0):
        live = live[k < n[live]]
        total[live] += (q[live] + k) ** -s[live]
    return total, q + n


def _zeta_tail(xp, s, w, total):
    """The Euler-Maclaurin tail after the direct sum: int_w^inf + f(w)/2 + sum_j B_2j/(2j)!
    s (s+1) ... (s+2j-2) w^(1-s-2j), each element stopping at its first negligible term (the
    series is asymptotic: for large s its late terms grow)."""
    b = w ** -s
    # the direct sum is already exact to rounding where its next term is negligible
    active = ~(b < _EPS * total)
    total = total + xp.where(active, b * w / (s - 1) + 0.5 * b, b)
    rising = xp.ones_like(s)
    for j, c in enumerate(_EULER_MACLAURIN):
        rising = rising * (s + 2 * j) * (s + 2 * j - 1 if j else 1)
        b = b / (w if j == 0 else w * w)
        t = xp.where(active, c * rising * b, 0)
        total = total + t
        active &= ~(xp.abs(t) < _EPS * xp.abs(total))
    return total


def zeta(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s, with torch's domain: inf at s = 1, nan for
    s < 1; for q <= 0, inf at the integers and nan unless s is an integer; nan at q = inf."""
    total, w = _zeta_direct(xp, s, q)
    out = _zeta_tail(xp, s, w, total)
    integer_q = q == xp.floor(q)
    out = xp.where((q <= 0) & ~integer_q & (s != xp.floor(s)), math.nan, out)
    out = xp.where((q <= 0) & integer_q, math.inf, out)
    out = xp.where(q == math.inf, math.nan, out)
    out = xp.where(s < 1, math.nan, out)
    return xp.where(s == 1, math.inf, out)


def polygamma(xp, n, x):
    """The n-th derivative of digamma (n >= 0 a Python int): digamma, trigamma, then
    (-1)^(n+1) n! zeta(n + 1, x)."""
    if n == 0:
        return digamma(xp, x)
    if n == 1:
        return trigamma(xp, x)
    return (-1) ** (n + 1) * math.factorial(n) * zeta(xp, xp.full_like(x, n + 1.0), x)


# ----------------------------------------------------------------------------------------------
# the regularized incomplete gamma functions


def _gamma_prefactor(xp, a, x):
    """x^a e^-x / Gamma(a)."""
    return xp.exp(a * xp.log(x) - x - lgamma(xp, a))


def _max_terms(a):
    # near x = a the series and the fraction need ~10 sqrt(a) terms
    return int(10 * math.sqrt(float(a.max()))) + 100 if a.size else 0


class _Converging:
    """The loop state of a series or continued fraction over many elements: arrays holding
    only the elements still converging, and `out`, where each finished element's value is
    written. Dropping finished elements every few steps keeps the work on the live ones
    contiguous (fancy indexing at every step would cost more than the arithmetic)."""

    def __init__(self, xp, n, **arrays):
        self.index = xp.arange(n)
        self.out = xp.empty(n)
        self.arrays = arrays

    def retire(self, done, value):
        """Write `value` of the elements where `done` holds and drop them; True if none is
        left."""
        if done.any():
            self.out[self.index[done]] = value[done]
            keep = ~done
            self.index = self.index[keep]
            self.arrays = {k: v[keep] for k, v in self.arrays.items()}
        return self.index.size == 0

    def finish(self, value):
        self.out[self.index] = value
        return self.out


def _lower_series(xp, a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)), for x < a + 1."""
    state = _Converging(xp, x.size, a=a.copy(), x=x, term=xp.ones_like(x),
                        total=xp.ones_like(x))
    for step in range(_max_terms(a)):
        v = state.arrays
        v["a"] += 1
        v["term"] *= v["x"] / v["a"]
        v["total"] += v["term"]
        if step % 8 == 7 and state.retire(~(v["term"] > _EPS * v["total"]), v["total"]):
            break
    total = state.finish(state.arrays["total"])
    return total * _gamma_prefactor(xp, a, x) / a


def _upper_fraction(xp, a, x):
    """Q(a, x) from its continued fraction (modified Lentz), for x >= a + 1."""
    tiny = 1e-300
    b = x + 1 - a
    state = _Converging(xp, x.size, a=a, b=b, c=xp.full_like(x, 1 / tiny), d=1 / b, h=1 / b)
    for i in range(1, _max_terms(a) + 1):
        v = state.arrays
        an = -i * (i - v["a"])
        v["b"] += 2
        d = an * v["d"] + v["b"]
        d = 1 / xp.where(xp.abs(d) < tiny, tiny, d)
        c = v["b"] + an / v["c"]
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        step = d * c
        v["d"], v["c"] = d, c
        v["h"] *= step
        if i % 8 == 0 and state.retire(~(xp.abs(step - 1) > _EPS), v["h"]):
            break
    return state.finish(state.arrays["h"]) * _gamma_prefactor(xp, a, x)


def _temme(xp, a, x, upper):
    """Q (or P) for large a from Temme's uniform expansion, to its first correction term:
    Q = erfc(eta sqrt(a/2)) / 2 + e^(-a eta^2 / 2) / sqrt(2 pi a) (1/(lam - 1) - 1/eta), with
    lam = x/a and eta = sign(lam - 1) sqrt(2 (lam - 1 - log lam)) (absolute error ~1e-10)."""
    d = x / a - 1
    eta = xp.sign(d) * xp.sqrt(2 * (d - xp.log1p(d)))
    near = xp.abs(d) < 1e-3  # 1/d - 1/eta cancels there: its series in eta
    safe_d = xp.where(near, 1.0, d)
    safe_eta = xp.where(near, 1.0, eta)
    c0 = xp.where(near, -1 / 3 + eta / 12 - 2 * eta ** 2 / 135 + eta ** 3 / 864,
                  1 / safe_d - 1 / safe_eta)
    r = xp.exp(-0.5 * a * eta * eta) / xp.sqrt(2 * math.pi * a) * c0
    root = eta * xp.sqrt(a / 2)
    if upper:
        return 0.5 * _erfc(xp, root) + r
    return 0.5 * _erfc(xp, -root) - r


def _erfc(xp, x):
    erfc = _erfc_chebyshev(xp, xp.abs(x), _FULL["chebyshev"])
    return xp.where(x < 0, 2 - erfc, erfc)


def gammainc(xp, a, x, upper):
    """The regularized lower (P) or, if `upper`, upper (Q = 1 - P) incomplete gamma function.
    As torch: nan for a < 0 or x < 0, and at a = x = 0 or a = x = inf."""
    out = xp.full_like(x, math.nan)
    regular = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    idx = xp.nonzero(regular)[0]
    ar, xr = a[idx], x[idx]
    huge = ar > 1e6
    series = ~huge & (xr < ar + 1)
    fraction = ~huge & ~series
    values = xp.empty_like(xr)
    if huge.any():
        values[huge] = _temme(xp, ar[huge], xr[huge], upper)
    if series.any():
        p = _lower_series(xp, ar[series], xr[series])
        values[series] = 1 - p if upper else p
    if fraction.any():
        q = _upper_fraction(xp, ar[fraction], xr[fraction])
        values[fraction] = q if upper else 1 - q
    out[idx] = values
    # the edges: P(0, x > 0) = 1, P(a > 0, 0) = 0, P(inf, finite) = 0, P(finite, inf) = 1
    lower = xp.where((a == 0) & (x > 0), 1.0, xp.nan)
    lower = xp.where((a > 0) & (x == 0), 0.0, lower)
    lower = xp.where((a == math.inf) & xp.isfinite(x) & (x >= 0), 0.0, lower)
    lower = xp.where((x == math.inf) & xp.isfinite(a) & (a >= 0), 1.0, lower)
    edge = 1 - lower if upper else lower
    return xp.where(regular, out, edge)


# ----------------------------------------------------------------------------------------------
# modified Bessel functions of the first kind, orders 0 and 1

_BESSEL_SERIES_LIMIT = 30.0
_BESSEL_SERIES_TERMS = 80   # (x/2)^2k / (k! (k+nu)!) is below 1e-17 of the sum by then
_BESSEL_HANKEL_TERMS = 25   # k! / (2x)^k < 1e-19 at x = 30


def _bessel_i_series(xp, x, order):
    """I_nu(x) = sum_k (x/2)^(2k+nu) / (k! (k+nu)!), x >= 0: positive terms, no cancellation."""
    quarter_square = x * x / 4
    term = x / 2 if order else xp.ones_like(x)
    total = term.copy()
    for k in range(1, _BESSEL_SERIES_TERMS):
        term *= quarter_square / (k * (k + order))
        total += term
        if k % 10 == 0 and not (term > _EPS * total).any():
            break  # every element has converged (small arguments need few terms)
    return total


def _bessel_i_hankel(xp, x, order):
    """sqrt(2 pi x) e^-x I_nu(x) ~ sum_k (-1)^k prod_{j<=k} (4 nu^2 - (2j-1)^2) / (8 j x)."""
    mu = 4 * order * order
    term = xp.ones_like(x)
    total = term.copy()
    for k in range(1, _BESSEL_HANKEL_TERMS):
        term = term * -(mu - (2 * k - 1) ** 2) / (8 * k * x)
        total += term
    return total / xp.sqrt(2 * math.pi * x)


def bessel_i(xp, x, order, scaled):
    """I_0(x) or I_1(x) (order 0 or 1), or e^-|x| times it when `scaled`."""
    ax = xp.abs(x)
    small = ax < _BESSEL_SERIES_LIMIT
    out = xp.empty_like(x)
    xs = ax[small]
    series = _bessel_i_series(xp, xs, order)
    out[small] = series * xp.exp(-xs) if scaled else series
    xl = ax[~small]
    hankel = _bessel_i_hankel(xp, xl, order)
    # unscaled at +-inf this is e^inf * 0: nan, as torch answers there
    out[~small] = hankel if scaled else xp.exp(xl) * hankel
    return xp.copysign(out, x) if order else out


# ----------------------------------------------------------------------------------------------
# the normal distribution's functions and erfcx


def _erfcx_asymptotic(xp, x):
    """erfcx(x) ~ 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k, for x >= 26."""
    w = 1 / (2 * x * x)
    term = xp.ones_like(x)
    total = term.copy()
    for k in range(1, 8):
        term = term * -(2 * k - 1) * w
        total += term
    return total / (x * math.sqrt(math.pi))


def erfcx(xp, x):
    """exp(x^2) erfc(x) without overflow: erfc / exp(-x^2) up to 26 (both accurate there),
    the asymptotic series beyond; erfcx(-x) = 2 exp(x^2) - erfcx(x)."""
    ax = xp.abs(x)
    mid = ax < 26
    out = xp.empty_like(x)
    out[mid] = _erfc_chebyshev(xp, ax[mid], _FULL["chebyshev"]) / _exp_neg_square(xp, ax[mid])
    out[~mid] = _erfcx_asymptotic(xp, ax[~mid])
    out = xp.where(x < 0, 2 / _exp_neg_square(xp, ax) - out, out)
    return xp.where(x == -math.inf, math.inf, out)


def ndtr(xp, x):
    """The standard normal CDF, erfc(-x / sqrt 2) / 2."""
    return 0.5 * _erfc(xp, -x / _SQRT2)


def log_ndtr(xp, x):
    """log ndtr(x): log1p(-erfc(x/sqrt2)/2) for x >= 0; for x < 0 log(erfcx(-x/sqrt2)/2) - x^2/2,
    which stays finite far into the tail where ndtr underflows."""
    t = x / _SQRT2
    right = xp.log1p(-0.5 * _erfc_chebyshev(xp, xp.maximum(t, 0), _FULL["chebyshev"]))
    left = xp.log(0.5 * erfcx(xp, -xp.minimum(t, 0))) - t * t
    return xp.where(x < 0, left, right)


# P. J. Acklam's rational approximation of ndtri (relative error 1.15e-9): the central region
# |q - 1/2| < 1/2 - 0.02425 in r = q - 1/2, the tails in t = sqrt(-2 log q)
_ACKLAM_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_ACKLAM_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
             6.680131188771972e+01, -1.328068155288572e+01, 1.0)
_ACKLAM_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_ACKLAM_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
             3.754408661907416e+00, 1.0)


def _horner(xp, coefficients, t):
    """sum_k c_k t^(n-k), the coefficients from the highest power down."""
    acc = xp.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        acc *= t
        acc += c
    return acc


def _ndtri_lower(xp, q):
    """ndtri(q) for 0 < q <= 1/2, to 1.15e-9 relative (Acklam)."""
    r = q - 0.5
    s = r * r
    central = r * _horner(xp, _ACKLAM_A, s) / _horner(xp, _ACKLAM_B, s)
    t = xp.sqrt(-2 * xp.log(q))
    tail = _horner(xp, _ACKLAM_C, t) / _horner(xp, _ACKLAM_D, t)
    return xp.where(q > 0.02425, central, tail)


def ndtri(xp, p):
    """The inverse of ndtr: with q = min(p, 1 - p) (1 - p is exact for p >= 1/2), Acklam's
    approximation of ndtri(q), then one Halley step on ndtr(x) = q, which triples its correct
    digits. The step's residual is taken relative to q, (ndtr(x)/q - 1) q / phi(x), with
    q / phi(x) = exp(log q + x^2/2 + log(2 pi)/2) finite even where phi(x) underflows."""
    q = xp.minimum(p, 1 - p)
    safe = xp.where((q > 0) & (q <= 0.5), q, 0.25)
    x = _ndtri_lower(xp, safe)
    u = (ndtr(xp, x) / safe - 1) * xp.exp(xp.log(safe) + 0.5 * x * x + 0.5 * _LOG_2PI)
    x = x - u / (1 + 0.5 * x * u)
    out = xp.where(p < 0.5, x, -x)
    out = xp.where(p == 0, -math.inf, xp.where(p == 1, math.inf, out))
    return xp.where((p < 0) | (p > 1) | xp.isnan(p), math.nan, out)


# ----------------------------------------------------------------------------------------------
# orthogonal polynomials: p_n(x) for integer n (truncated; n < 0 gives 0, as in torch)


def _recurrence(xp, x, n, first, second, step):
    """p_n(x) from p_0 = first, p_1 = second and p_(k+1) = step(k, x, p_(k-1), p_k), each
    element stopping at its own n."""
    previous = xp.broadcast_to(first, x.shape).astype(x.dtype)
    current = xp.broadcast_to(second, x.shape).astype(x.dtype)
    live = xp.nonzero(n > 1)[0]
    previous, current = previous.copy(), current.copy()
    k = 1
    while live.size:
        nxt = step(k, x[live], previous[live], current[live])
        previous[live] = current[live]
        current[live] = nxt
        k += 1
        live = live[n[live] > k]
    out = xp.where(n == 0, previous if False else xp.broadcast_to(first, x.shape), current)
    return xp.where(n < 0, 0.0, out)


def _chebyshev(xp, x, n, kind):
    """Chebyshev polynomials of the four kinds; for |x| < 1 and n > 6 the trigonometric form
    (x = cos theta), which is stable for large n; at |x| = 1 their exact values."""
    first_order = {"t": x, "u": 2 * x, "v": 2 * x - 1, "w": 2 * x + 1}[kind]
    out = _recurrence(xp, x, n, 1.0, first_order, lambda k, x, p, q: 2 * x * q - p)
    inside = (xp.abs(x) < 1) & (n > 6)
    theta = xp.arccos(xp.where(inside, x, 0.0))
    trig = {"t": lambda: xp.cos(n * theta),
            "u": lambda: xp.sin((n + 1) * theta) / xp.sin(theta),
            "v": lambda: xp.cos((n + 0.5) * theta) / xp.cos(theta / 2),
            "w": lambda: xp.sin((n + 0.5) * theta) / xp.sin(theta / 2)}[kind]()
    out = xp.where(inside, trig, out)
    odd = (n % 2) == 1
    at_one = {"t": (1.0, xp.where(odd, -1.0, 1.0)),
              "u": (n + 1.0, xp.where(odd, -(n + 1.0), n + 1.0)),
              "v": (1.0, xp.where(odd, -(2 * n + 1.0), 2 * n + 1.0)),
              "w": (2 * n + 1.0, xp.where(odd, -1.0, 1.0))}[kind]
    out = xp.where((x == 1) & (n >= 0), at_one[0], out)
    return xp.where((x == -1) & (n >= 0), at_one[1], out)


def chebyshev(xp, x, n, kind, shifted=False):
    """T_n, U_n, V_n or W_n (kind "t", "u", "v", "w") of x, or of 2x - 1 when `shifted`."""
    n = xp.where(xp.isfinite(n), xp.trunc(n), -1).astype(xp.int64)
    return _chebyshev(xp, 2 * x - 1 if shifted else x, n, kind)


def hermite(xp, x, n, probabilists):
    """Hermite polynomials: the physicists' H_n (H_(k+1) = 2x H_k - 2k H_(k-1)) or the
    probabilists' He_n (He_(k+1) = x He_k - k He_(k-1))."""
    n = xp.where(xp.isfinite(n), xp.trunc(n), -1).astype(xp.int64)
    if probabilists:
        return _recurrence(xp, x, n, 1.0, x, lambda k, x, p, q: x * q - k * p)
    return _recurrence(xp, x, n, 1.0, 2 * x, lambda k, x, p, q: 2 * x * q - 2 * k * p)


def laguerre(xp, x, n):
    """Laguerre L_n: L_(k+1) = ((2k + 1 - x) L_k - k L_(k-1)) / (k + 1)."""
    n = xp.where(xp.isfinite(n), xp.trunc(n), -1).astype(xp.int64)
    return _recurrence(xp, x, n, 1.0, 1 - x,
                       lambda k, x, p, q: ((2 * k + 1 - x) * q - k * p) / (k + 1))


def legendre(xp, x, n):
    """Legendre P_n: P_(k+1) = ((2k + 1) x P_k - k P_(k-1)) / (k + 1)."""
    n = xp.where(xp.isfinite(n), xp.trunc(n), -1).astype(xp.int64)
    return _recurrence(xp, x, n, 1.0, x,
                       lambda k, x, p, q: ((2 * k + 1) * x * q - k * p) / (k + 1))

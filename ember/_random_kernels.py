"""What each random op draws from the generator and how it turns the words into samples:
torch's CPU kernels (`DistributionTemplates.h`, `DistributionsHelper.h`,
`TransformationHelper.h`), one function each, on host arrays.

Every function takes a `Generator` and returns a flat array of samples in *iteration order*
(the order torch's TensorIterator visits the output: its memory order); `_random.py` places
them in tensors. Words are 32-bit (`random()`) or 64-bit (`random64()`) draws:

    unit float       (word & (2**24 - 1)) * 2**-24        one 32-bit word (float32 and the
                                                           half types, which compute in
                                                           float32 and round at the end)
    unit double      (word64 & (2**53 - 1)) * 2**-53      one 64-bit word (float64, and the
                                                           kernels that compute in double)
    uniform_         fma(u, to - from, from) in float32 (float16, bfloat16, float32) or float64,
                     then a result that rounds to `to` becomes `from`
    normal_          >= 16 contiguous elements: all uniforms first, Box-Muller on blocks of 16
                     (u[:8] radii, u[8:] angles; a partial last block is redone on 16 fresh
                     uniforms; half types go block by block); float32 math is torch's AVX2
                     code (`_random_math.box_muller_avx2`), float64 libm's.
                     Otherwise one element at a time from a double Box-Muller pair
                     (u1 angle, u2 radius via log1p), the pair's sine cached in the generator.
    random_          (word % range) + from, with 64-bit words once range >= 2**28; no bounds:
                     word % (max + 1) (floats: % (2**digits + 1)), bool: word & 1
    bernoulli_       unit double < p; a tensor p: unit double < p for float64 p, else unit
                     float < p
    exponential_     -1 / lambda * log1p(-u)          geometric_   ceil(log(u) / log1p(-p))
    log_normal_      exp(one-at-a-time normals)       cauchy_      median + sigma tan(pi (u - 1/2))
                     (these four: unit doubles, libm, then cast to the dtype)
    poisson          Hoermann's transformed rejection (rate >= 10), else multiplying uniforms
    multinomial      with replacement: binary search of a cumulative sum per draw
    randperm         Fisher-Yates: position i swaps with i + (word % (n - i)) (all at once)

Read next: `_random.py` (the public functions).
"""
import math

import numpy as np

from . import _dtype as dt
from ._random_math import box_muller_avx2, fma32, fma64, libm, libm_lgamma

_F32 = np.float32
_F64 = np.float64
_MASK24 = np.uint64((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_TWO_PI = 2.0 * math.pi


def _opmath(dtype):
    """The type torch computes a dtype's samples in: float32 for the half types."""
    return _F64 if dtype is dt.float64 else _F32


# ----------------------------------------------------------------------------------------------
# unit uniforms


def unit_floats(g, n):
    """n uniforms in [0, 1) with 24 random bits (torch's uniform_real_distribution<float>)."""
    return (g._words(n) & _MASK24).astype(_F32) * _F32(2.0 ** -24)


def unit_doubles(g, n):
    """n uniforms in [0, 1) with 53 random bits (uniform_real_distribution<double>)."""
    return (g._words64(n) & _MASK53).astype(_F64) * 2.0 ** -53


# ----------------------------------------------------------------------------------------------
# uniform_


def uniform(g, n, dtype, low, high):
    """torch's uniform_ kernel: n samples of [low, high) in `dtype`."""
    if dtype is dt.float64:
        x = unit_doubles(g, n)
        value = x if (low, high) == (0, 1) else fma64(x, high - low, low)
    else:
        x = unit_floats(g, n)
        low32, high32 = _F32(low), _F32(high)
        value = x if (low, high) == (0, 1) else fma32(x, high32 - low32, low32)
    value = value.astype(dtype.np, copy=False)
    # rounding to the dtype may reach `to`; torch maps it back to `from`
    value[value == np.asarray(high).astype(dtype.np)] = np.asarray(low).astype(dtype.np)
    return value


# ----------------------------------------------------------------------------------------------
# normal_


def normal(g, n, dtype, mean, std, contiguous):
    """torch's normal_ kernel: n samples of N(mean, std**2) in `dtype`."""
    if n < 16 or not contiguous:
        return normal_doubles(g, n, mean, std).astype(dtype.np)
    if dtype is dt.float64:
        return _fill16(g, n, unit_doubles, lambda u: _box_muller64(u, mean, std))
    transform = lambda u: box_muller_avx2(u, _F32(mean), _F32(std))  # noqa: E731
    if dtype is dt.float32:
        return _fill16(g, n, unit_floats, transform)
    return _fill16_blockwise(g, n, transform).astype(dtype.np)


def _fill16(g, n, units, transform):
    """torch's normal_fill for float and double: n uniforms, transformed 16 at a time; a
    partial last block is recomputed from 16 fresh uniforms."""
    whole = n - n % 16
    out = np.empty(n, dtype=_F64 if units is unit_doubles else _F32)
    _by_chunks(transform, units(g, n)[:whole].reshape(-1, 16), out[:whole].reshape(-1, 16))
    if n % 16:
        out[n - 16:] = transform(units(g, 16).reshape(1, 16)).reshape(-1)
    return out


def _fill16_blockwise(g, n, transform):
    """torch's normal_fill for the half types: 16 uniforms per block, drawn block by block
    (so the partial last block costs no extra words), computed in float32."""
    whole = n - n % 16
    out = np.empty(n, dtype=_F32)
    _by_chunks(transform, unit_floats(g, whole).reshape(-1, 16), out[:whole].reshape(-1, 16))
    if n % 16:
        out[n - 16:] = transform(unit_floats(g, 16).reshape(1, 16)).reshape(-1)
    return out


_CHUNK = 2048  # blocks per transform call: its temporaries stay in cache (measured: 2048
#                beat 256, 512, 1024 and 4096 for float32)


def _by_chunks(transform, u, out):
    """out = transform(u) on (blocks, 16) arrays, a few thousand blocks at a time."""
    for i in range(0, len(u), _CHUNK):
        out[i:i + _CHUNK] = transform(u[i:i + _CHUNK])


def _box_muller64(u, mean, std):
    """NormalFill16<double>: libm's log, cos and sin, then fma(z, std, mean)."""
    radius = np.sqrt(-2.0 * libm("log", 1.0 - u[:, :8]))
    theta = _TWO_PI * u[:, 8:]
    out = np.empty(u.shape)
    out[:, :8] = _scale64(radius * libm("cos", theta), mean, std)
    out[:, 8:] = _scale64(radius * libm("sin", theta), mean, std)
    return out


def _scale64(z, mean, std):
    """fma(z, std, mean) in float64; the common cases need no emulation."""
    if std == 1:
        return z + mean
    if mean == 0:
        return z * std + 0.0
    return fma64(z, std, mean)


def normal_doubles(g, n, mean, std):
    """n draws of torch's normal_distribution<double>: Box-Muller pairs (u1 -> angle,
    u2 -> radius), r cos first; an odd pair's r sin waits in the generator for the next
    draw, which scales it with its own mean and std."""
    out = np.empty(n)
    start = 0
    if n and g._normal is not None:
        out[0] = _scale64(np.array([g._normal]), mean, std)[0]
        g._normal, start = None, 1
    pairs = (n - start + 1) // 2
    u = unit_doubles(g, 2 * pairs).reshape(pairs, 2)
    radius = np.sqrt(-2.0 * libm("log1p", -u[:, 1]))
    theta = _TWO_PI * u[:, 0]
    z = np.empty((pairs, 2))
    z[:, 0] = radius * libm("cos", theta)
    z[:, 1] = radius * libm("sin", theta)
    z = z.reshape(-1)
    if (n - start) % 2:
        g._normal, z = float(z[-1]), z[:-1]
    out[start:] = _scale64(z, mean, std)
    return out


def log_normal(g, n, dtype, mean, std):
    """exp of normal_distribution<double> draws (the same pairs and cache)."""
    return libm("exp", normal_doubles(g, n, mean, std)).astype(dtype.np)


# ----------------------------------------------------------------------------------------------
# one double uniform per sample: exponential_, cauchy_, geometric_


def exponential(g, n, dtype, lambd):
    """exponential_: -1 / lambd * log1p(-u) for unit doubles u."""
    return ((-1.0 / lambd) * libm("log1p", -unit_doubles(g, n))).astype(dtype.np)


def cauchy(g, n, dtype, median, sigma):
    """cauchy_: fma(sigma, tan(pi * (u - 1/2)), median) for unit doubles u."""
    t = libm("tan", math.pi * (unit_doubles(g, n) - 0.5))
    if sigma == 1:
        value = t + median
    elif median == 0:
        value = t * sigma + 0.0
    else:
        value = fma64(np.full(n, sigma), t, np.full(n, median))
    return value.astype(dtype.np)


def geometric(g, n, dtype, p):
    """geometric_: ceil(log(u) / log1p(-p)) for unit doubles u (the number of trials)."""
    value = np.ceil(libm("log", unit_doubles(g, n)) / math.log1p(-p))
    return _from_double(value, dtype)


def _from_double(value, dtype):
    """C's static_cast from double: integers truncate (and wrap like the C conversion)."""
    if dtype.category == dt.FLOATING:
        return value.astype(dtype.np)
    with np.errstate(invalid="ignore"):
        return value.astype(np.int64).astype(dtype.np)


# ----------------------------------------------------------------------------------------------
# random_


def random_from_to(g, n, dtype, span, base):
    """Integers base + (word % span), span = to - from (64-bit words once span >= 2**28)."""
    words = g._words64(n) if span >= 1 << 28 else g._words(n)
    value = (words % np.uint64(span)) + np.uint64(base % (1 << 64))
    return _from_int64(value.view(np.int64), dtype)


def random_full_range(g, n, dtype):
    """random_(from=-2**63, to=None): every int64, one 64-bit word each."""
    return _from_int64(g._words64(n).view(np.int64), dtype)


def random_default(g, n, dtype):
    """random_() without bounds: [0, max] for integers, [0, 2**digits] for floats."""
    if dtype is dt.bool:
        return (g._words(n) & np.uint64(1)).astype(np.bool_)
    if dtype is dt.int64:
        return (g._words64(n) % np.uint64(1 << 63)).astype(np.int64)
    if dtype is dt.float64:
        return (g._words64(n) % np.uint64((1 << 53) + 1)).astype(_F64)
    if dtype.category == dt.FLOATING:
        digits = _DIGITS[dtype.name]
        return (g._words(n) % np.uint64((1 << digits) + 1)).astype(dtype.np)
    top = int(np.iinfo(dtype.np).max) + 1
    return (g._words(n) % np.uint64(top)).astype(dtype.np)


_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _from_int64(value, dtype):
    if dtype is dt.bool:
        return value != 0
    return value.astype(dtype.np)


# ----------------------------------------------------------------------------------------------
# bernoulli


def bernoulli_scalar(g, n, p):
    """bernoulli_(p) for a number p: unit double < p."""
    return unit_doubles(g, n) < p


def bernoulli_tensor(g, probs):
    """bernoulli_(p) for a tensor p (flat, in iteration order): double p compares with unit
    doubles, every other float type with unit floats."""
    if probs.dtype == _F64:
        return unit_doubles(g, probs.size) < probs
    return unit_floats(g, probs.size) < probs.astype(_F32)


# ----------------------------------------------------------------------------------------------
# poisson: a rejection sampler, one element at a time (each takes a varying number of draws)


class _Uniforms:
    """Unit doubles handed out one by one, drawn in blocks; `finish` leaves the generator
    exactly as many words further as were used."""

    def __init__(self, g):
        self.g, self.start, self.values, self.used = g, g._engine.copy(), [], 0

    def next(self):
        if self.used == len(self.values):
            self.values += unit_doubles(self.g, max(64, len(self.values))).tolist()
        self.used += 1
        return self.values[self.used - 1]

    def finish(self):
        self.g._engine = self.start
        self.start.words(2 * self.used)


def poisson(g, rates):
    """torch's sample_poisson for each rate (float64, flat); returns float64 counts."""
    uniforms = _Uniforms(g)
    try:
        counts = [_poisson_one(rate, uniforms.next) for rate in rates.tolist()]
    finally:
        uniforms.finish()
    return np.array(counts, dtype=_F64)


def _poisson_one(rate, uniform):
    if rate >= 10:
        return _poisson_rejection(rate, uniform)
    if rate == 0:
        return 0
    # multiply uniforms until the product drops to exp(-rate)
    limit, product, count = math.exp(-rate), 1.0, 0
    while True:
        product *= uniform()
        if product <= limit:
            return count
        count += 1


def _poisson_rejection(rate, uniform):
    """Hoermann's PTRS (1993), the constants torch uses."""
    slam, loglam = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = uniform() - 0.5
        v = uniform()
        us = 0.5 - abs(u)
        k = math.floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
                <= -rate + k * loglam - libm_lgamma(k + 1.0)):
            return k


# ----------------------------------------------------------------------------------------------
# multinomial with replacement, randperm


def multinomial_with_replacement(g, weights, samples):
    """Each row of `weights` (rows, categories; its own float dtype): the running sum in that
    dtype, divided by the total, last entry set to 1; each sample is the first category whose
    cumulative weight reaches a unit double (binary search)."""
    cumulative = np.cumsum(weights, axis=1, dtype=weights.dtype)
    cumulative /= cumulative[:, -1:]
    cumulative[:, -1] = 1
    u = unit_doubles(g, weights.shape[0] * samples).reshape(weights.shape[0], samples)
    return np.stack([np.searchsorted(row.astype(_F64), draws, side="left")
                     for row, draws in zip(cumulative, u)])


_SMALL_PERMUTATION = (2 ** 32 - 1) // 20  # torch switches algorithms here


def randperm(g, n):
    """torch's randperm_cpu: a forward Fisher-Yates shuffle of 0..n-1 with 32-bit words
    (n below 2**32 / 20), otherwise the inside-out variant with 64-bit words."""
    if n < _SMALL_PERMUTATION:
        steps = max(n - 1, 0)
        offsets = g._words(steps) % (n - np.arange(steps, dtype=np.uint64))
        return _forward_shuffle(offsets.astype(np.int64), n)
    perm = np.empty(n, dtype=np.int64)
    for i, word in enumerate(g._words64(n).tolist()):
        z = word % (i + 1)
        perm[i] = perm[z]
        perm[z] = i
    return perm


def _forward_shuffle(offsets, n):
    """The permutation left by `for i in range(n - 1): swap(a[i], a[i + offsets[i]])` on
    a = 0..n-1, without the sequential loop.

    Step i fixes position i for good, with whatever position t_i = i + offsets[i] holds then.
    Position p changes only when a step s < p swaps into it, and then receives what
    position s held just before step s. So, with into[p] the last step that swapped into p:

        before[s]  (the value at position s just before step s) = before[into[s]], or s
                   itself if nothing swapped into s: a chain, followed by pointer doubling
        result[i]  = before[last earlier step with the same target], or t_i if none
                     (and before[i] when the step swaps nothing, t_i == i)
    """
    if n < 2:
        return np.arange(n, dtype=np.int64)
    steps = np.arange(n - 1)
    target = steps + offsets
    order = np.argsort(target, kind="stable")  # by target, then by step
    repeat = np.flatnonzero(target[order][1:] == target[order][:-1]) + 1
    earlier = np.full(n - 1, -1)
    earlier[order[repeat]] = order[repeat - 1]  # the previous step with the same target
    swapping = order[target[order] != order]
    into = np.full(n, -1)
    into[target[swapping]] = swapping  # in step order, so the last one stays
    before = np.where(into >= 0, into, np.arange(n))
    while True:
        jumped = before[before]
        if np.array_equal(jumped, before):
            break
        before = jumped
    result = np.empty(n, dtype=np.int64)
    result[:-1] = np.where(earlier >= 0, before[np.maximum(earlier, 0)], target)
    still = target == steps
    result[:-1][still] = before[:-1][still]
    result[-1] = before[-1]
    return result

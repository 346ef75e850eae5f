"""`ember.quasirandom`: Sobol low-discrepancy sequences, as `torch.quasirandom`.

    engine = ember.quasirandom.SobolEngine(dimension=5, scramble=True, seed=0)
    points = engine.draw(8)           # (8, 5), in [0, 1), the same numbers torch draws

The sequence is torch's bit for bit. Each dimension d has 30 direction numbers v[d, j] (30-bit
integers) built from Joe and Kuo's primitive polynomials and initial numbers (search criterion
D(6), up to 21201 dimensions, the table torch also uses); point i is the XOR of the direction
numbers picked by the Gray code of i, so consecutive points differ by one XOR: point i+1 =
point i ^ v[:, lowest zero bit of i], scaled by 2^-30. Scrambling (Owen's linear matrix
scramble plus a digital shift) multiplies each dimension's direction numbers by a random
lower-triangular bit matrix and starts from a random shift; both are drawn with `randint` from
the generator (one seeded with `seed`, else the global one), in torch's order, so a scrambled
engine equals torch's after the same seed.

The direction-number table is read from SciPy's copy of it (the same numbers): SobolEngine
needs SciPy, and raises ImportError naming the `scipy` extra without it. The points are
computed with NumPy on the host; the engine keeps its state on the CPU as torch's does.

Read next: _random.py (the generator scrambling draws from).
"""
import functools
import importlib.util
import os

import numpy as np

from . import _dtype as dt
from ._creation import from_numpy
from ._generator import Generator
from ._random import randint
from .ops.shape import cat

__all__ = ["SobolEngine"]

_MAXBIT = 30


@functools.lru_cache(maxsize=1)
def _direction_table():
    """(poly, vinit): each dimension's primitive polynomial (as bits, leading 1 included) and
    its initial direction numbers, Joe and Kuo's table as SciPy ships it."""
    scipy = importlib.util.find_spec("scipy")  # found, not imported: scipy.stats is slow
    if scipy is None:
        raise ImportError("ember.quasirandom.SobolEngine needs SciPy for Joe and Kuo's "
                          "direction numbers: pip install 'ember[scipy]' (or pip install "
                          "scipy)")
    path = os.path.join(scipy.submodule_search_locations[0], "stats",
                        "_sobol_direction_numbers.npz")
    with np.load(path) as table:
        return table["poly"], table["vinit"]


def _direction_numbers(dimension):
    """The (dimension, 30) int64 direction numbers, left-aligned to 30 bits: column j of
    dimension d follows the recurrence of d's polynomial of degree m from its m initial
    numbers (dimension 0, polynomial 1, is all ones: the van der Corput sequence)."""
    poly, vinit = _direction_table()
    poly = poly[:dimension].astype(np.int64)
    degree = np.floor(np.log2(poly)).astype(np.int64)  # exact: the polynomials are < 2**18
    v = np.ones((_MAXBIT, dimension), dtype=np.int64)  # column j of every dimension, a row
    v[:vinit.shape[1]] = np.where(np.arange(vinit.shape[1])[:, None] < degree,
                                  vinit[:dimension].T, 1)
    for j in range(int(degree.min()), _MAXBIT):
        recur = degree <= j
        new = v[np.maximum(j - degree, 0), np.arange(dimension)]
        for k in range(min(int(degree.max()), j)):
            # the polynomial's coefficient k (from the top, after the leading 1)
            coeff = (poly >> np.maximum(degree - 1 - k, 0)) & 1
            new ^= np.where((k < degree) & (coeff == 1), v[j - k - 1] << (k + 1), 0)
        v[j] = np.where(recur, new, v[j])
    return np.ascontiguousarray(v.T) << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)


def _bits(values):
    """values' 30 bits, most significant first, along a new last axis (as float32, so a
    matrix product counts the matching ones exactly)."""
    shifts = np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)
    return ((values[..., None] >> shifts) & 1).astype(np.float32)


def _scrambled(v, ltm):
    """Direction numbers v (dimension, 30) scrambled by the lower-triangular bit matrices
    ltm (dimension, 30, 30), their diagonals set to one: output bit p (from the top) of
    v[d, j] is the parity of row p of ltm[d] ANDed with v[d, j]'s bits, over GF(2)."""
    ltm = ltm.astype(np.float32)
    ltm[:, np.arange(_MAXBIT), np.arange(_MAXBIT)] = 1.0
    parity = (ltm @ _bits(v).transpose(0, 2, 1)).astype(np.int64) & 1  # (d, p, j)
    weights = np.int64(1) << np.arange(_MAXBIT - 1, -1, -1, dtype=np.int64)
    return np.einsum("dpj,p->dj", parity, weights)


def _gray_columns(start, n):
    """For draws number start .. start+n-1: the index of each one's lowest zero bit, the
    direction number the Gray code flips next."""
    i = np.arange(start, start + n, dtype=np.int64)
    lowest_zero = ~i & (i + 1)  # a power of two
    return np.log2(lowest_zero.astype(np.float64)).astype(np.int64)


class SobolEngine:
    """An engine drawing (optionally scrambled) Sobol sequences of `dimension` coordinates
    in [0, 1), as `torch.quasirandom.SobolEngine`: `seed` seeds the scrambling's own
    generator (None: draw it from the global generator). Needs SciPy (see the module)."""

    MAXBIT = _MAXBIT
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed, self.scramble, self.dimension = seed, scramble, dimension
        state = _direction_numbers(dimension)
        if scramble:
            state, shift = self._scramble(state)
        else:
            shift = np.zeros(dimension, dtype=np.int64)
        self.sobolstate = from_numpy(state)
        self.shift = from_numpy(shift)
        self.quasi = self.shift.clone()
        # torch divides in the default dtype here, whatever dtype later draws ask for
        self._first_point = (self.quasi / 2**self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scramble(self, state):
        """The scrambled direction numbers and the digital shift, drawn as torch draws them:
        the shift's bits first, then the matrices' bits, both with randint(2, ...)."""
        g = None if self.seed is None else Generator().manual_seed(self.seed)
        shift_bits = randint(2, (self.dimension, self.MAXBIT), generator=g).numpy()
        shift = shift_bits @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64))
        ltm = randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), generator=g).numpy()
        return _scrambled(state, np.tril(ltm)), shift

    def _advance(self, n, start):
        """The next n states after quasi, numbered from draw `start`; quasi moves to the last.
        The states fit in 30 bits, so they are XORed as int32 (half the memory traffic)."""
        rows = np.ascontiguousarray(self.sobolstate.numpy().T, dtype=np.int32)
        states = rows[_gray_columns(start, n)]  # (n, dimension): the number each step flips
        if n:
            states[0] ^= self.quasi.numpy().astype(np.int32)
            np.bitwise_xor.accumulate(states, axis=0, out=states)
            self.quasi = from_numpy(states[-1].astype(np.int64))
        return states

    def draw(self, n=1, out=None, dtype=None):
        """The next n points, an (n, dimension) tensor of `dtype` (the default dtype if
        None); each draw continues where the last stopped."""
        dtype = dt.get_default_dtype() if dtype is None else dtype
        if dtype not in (dt.float32, dt.float64):  # torch's kernel has only these two
            raise NotImplementedError("\"_sobol_engine_draw\" not implemented for "
                                      f"'{dt.scalar_name(dtype)}'")
        # draw 0 is the shift itself; the Gray-code steps start from the draw after it
        first = self.num_generated == 0
        steps = n - first
        if steps < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {steps}: "
                               f"[{steps}, {self.dimension}]")
        states = self._advance(steps, max(self.num_generated - 1, 0))
        result = from_numpy(states.astype(dtype.np) * dtype.np.type(2.0**-self.MAXBIT))
        if first:
            result = cat([self._first_point.to(dtype), result])
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next 2**m points; the total drawn must stay a power of two (Sobol points are
        balanced only in such blocks), else ValueError as torch."""
        n = 2**m
        total = self.num_generated + n
        if total & (total - 1):
            raise ValueError("The balance properties of Sobol' points require n to be a power "
                             f"of 2. {self.num_generated} points have been previously "
                             f"generated, then: n={self.num_generated}+2**{m}={total}. If you "
                             "still want to do this, please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point (the same sequence again); returns the engine."""
        self.quasi = self.shift.clone()
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip the next n points, as drawing and dropping them; returns the engine."""
        first = self.num_generated == 0
        self._advance(max(n - first, 0), max(self.num_generated - 1, 0))
        self.num_generated += n
        return self

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        if self.scramble:
            parts.append("scramble=True")
        if self.seed is not None:
            parts.append(f"seed={self.seed}")
        return f"SobolEngine({', '.join(parts)})"

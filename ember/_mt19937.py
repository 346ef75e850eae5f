"""The Mersenne Twister behind torch's CPU generator, and torch's byte layout of its state.

torch's CPU generator (`at::CPUGeneratorImpl`) is the 32-bit MT19937 of Matsumoto and
Nishimura: 624 state words, seeded from the low 32 bits of the seed by the recurrence

    s[0] = seed mod 2**32,    s[j] = 1812433253 * (s[j-1] ^ (s[j-1] >> 30)) + j   (mod 2**32),

regenerated ("twisted") 624 words at a time and tempered on the way out. NumPy ships the same
engine (`np.random.MT19937`) and the same seeding recurrence (the legacy seeding of
`np.random.RandomState`), so the words come from NumPy's C loop; this module adds only the
bookkeeping torch keeps around them. Two draws exist:

    random()     one 32-bit word
    random64()   two words, the first one as the high half

The state torch saves (`get_rng_state()`, a 5056-byte uint8 tensor) is a C struct; `STATE`
below spells it out field by field, so a state saved by torch restores here and back. Its
`left` and `next` fields count torch's position in the block of 624 words: after k words of a
block, next = k and left = 625 - k; a freshly seeded engine has left = 1, next = 0 (the next
draw twists first). NumPy keeps the same position as one number, `pos` (= next, or 624 when a
twist is due).

Read next: `_generator.py` (the Generator built on this engine).
"""
import numpy as np

__all__ = ["MT19937", "STATE"]

_WORDS = 624

STATE = np.dtype([
    ("seed", "<u8"),                 # the seed as given (all 64 bits; the engine uses 32)
    ("left", "<i4"),                 # words left in the current block, plus one
    ("seeded", "<i4"),
    ("next", "<u8"),                 # index of the next word
    ("words", "<u8", (_WORDS,)),     # the state words, one per uint64
    ("normal_x", "<f8"),             # unused by torch since 1.0 (always 0)
    ("normal_y", "<f8"),             # the cached second sample of a double Box-Muller pair
    ("normal_rho", "<f8"),           # unused (0)
    ("normal_is_valid", "<i4"),
    ("pad0", "V4"),
    ("float_normal", "<f4"),         # the float cache (kept, though no CPU kernel fills it)
    ("float_normal_is_valid", "u1"),
    ("pad1", "V3"),
])
assert STATE.itemsize == 5056


class MT19937:
    """torch's `at::mt19937` engine: 32-bit words from a 624-word state, drawn in bulk."""

    __slots__ = ("seed", "_bits", "_fresh_next")

    def __init__(self, seed):
        self._bits = np.random.MT19937()
        self.reseed(seed)

    def reseed(self, seed):
        """Start over from `seed` (a uint64; only its low 32 bits enter the engine)."""
        self.seed = seed
        key = np.random.RandomState(seed & 0xFFFFFFFF).get_state()[1]
        self._set(key, _WORDS)
        self._fresh_next = 0  # torch's `next` until the first draw (left = 1, next = 0)

    def words(self, n):
        """The next `n` 32-bit words (as uint64, ready for 64-bit arithmetic)."""
        self._fresh_next = None
        return self._bits.random_raw(n)

    def words64(self, n):
        """The next `n` 64-bit draws: word pairs, the first word as the high half."""
        pairs = self.words(2 * n)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]

    def copy(self):
        """An independent engine at the same point of the same stream."""
        twin = MT19937.__new__(MT19937)
        twin.seed = self.seed
        twin._bits = np.random.MT19937()
        twin._bits.state = self._bits.state
        twin._fresh_next = self._fresh_next
        return twin

    # -- torch's state struct ----------------------------------------------------------------

    def write_state(self, record):
        """Fill the engine fields of a `STATE` record."""
        state = self._bits.state["state"]
        pos = int(state["pos"])
        record["seed"] = self.seed
        record["seeded"] = 1
        if pos == _WORDS:
            record["left"] = 1
            record["next"] = _WORDS if self._fresh_next is None else self._fresh_next
        else:
            record["left"] = _WORDS + 1 - pos
            record["next"] = pos
        record["words"] = state["key"]

    def read_state(self, record):
        """Take the engine fields of a `STATE` record (validated as torch validates them)."""
        left, nxt = int(record["left"]), int(record["next"])
        if record["seeded"] != 1 or not 0 < left <= _WORDS or nxt > _WORDS:
            raise RuntimeError("Invalid mt19937 state")
        if left > 1 and nxt != _WORDS + 1 - left:
            raise NotImplementedError(
                f"this MT19937 state has left={left} and next={nxt}, which no torch generator "
                f"produces (next = 625 - left); ember cannot continue such a stream")
        self.seed = int(record["seed"])
        self._set(record["words"].astype(np.uint32), _WORDS if left == 1 else nxt)
        self._fresh_next = nxt if left == 1 else None

    def _set(self, key, pos):
        self._bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}

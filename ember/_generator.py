"""`Generator` (torch's CPU generator) and the global random state.

A Generator is an MT19937 engine (`_mt19937.py`) plus the one sample torch caches between
calls: Box-Muller makes normals in pairs, and the second of a pair drawn one element at a time
waits in the generator for the next draw (it is part of the saved state). `manual_seed`
clears it, as torch does.

    default_generator       serves every CPU draw not given `generator=`; a fresh process
                            seeds it from the operating system, so `initial_seed()` differs
                            between processes (torch's behaviour)
    Generator()             starts from torch's fixed default seed, 67280421310721
    manual_seed(s)          seeds the global generators (CPU and, in ember, the host
                            generators CUDA samples are drawn from)

CUDA: ember draws CUDA samples on the host and copies them over, from one host generator per
GPU (`Generator("cuda")`, `cuda_generator(i)`). These streams are reproducible but are not
torch's: torch's CUDA generator is Philox, with other transformations. Only CPU streams
equal torch's.

Read next: `_random_math.py` (the float arithmetic torch's random kernels round with).
"""
import builtins
import contextlib
import numbers
import os

import numpy as np

from . import _dtype as dt
from ._creation import from_numpy
from ._device import as_device
from ._mt19937 import MT19937, STATE
from ._tensor import Tensor

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]

_DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val
_U64 = 1 << 64


class Generator:
    """torch.Generator: an independent random stream. On the CPU it is torch's MT19937
    generator, so the same seed gives torch's numbers; on CUDA it is ember's host stream."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._engine = MT19937(_DEFAULT_SEED)
        self._normal = None        # the cached double normal sample (None: empty)
        self._normal_float = None  # the float cache torch's state also carries

    def manual_seed(self, seed):
        """Restart the stream from `seed` (an int in [-2**63, 2**64); negatives wrap)."""
        if isinstance(seed, builtins.bool) or not isinstance(seed, numbers.Integral):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        self._engine.reseed(_as_seed(seed))
        self._normal = self._normal_float = None
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        new = _nondeterministic_seed()
        self.manual_seed(new)
        return new

    def initial_seed(self):
        """The seed this stream started from."""
        return self._engine.seed

    def get_state(self):
        """The state as torch's 5056-byte uint8 tensor (`CPUGeneratorImplState`)."""
        record = np.zeros((), dtype=STATE)
        self._engine.write_state(record)
        if self._normal is not None:
            record["normal_y"] = self._normal
            record["normal_is_valid"] = 1
        if self._normal_float is not None:
            record["float_normal"] = self._normal_float
            record["float_normal_is_valid"] = 1
        return from_numpy(np.frombuffer(record.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from `get_state` (of ember or of torch); returns self."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not dt.uint8:
            raise TypeError("RNG state must be a ember.ByteTensor")
        blob = np.ascontiguousarray(new_state.numpy(force=True)).tobytes()
        if len(blob) != STATE.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {STATE.itemsize} but "
                               f"found the input RNG state size to be {len(blob)}")
        record = np.frombuffer(blob, dtype=STATE)[0]
        self._engine.read_state(record)
        self._normal = float(record["normal_y"]) if record["normal_is_valid"] else None
        self._normal_float = (np.float32(record["float_normal"])
                              if record["float_normal_is_valid"] else None)
        return self

    def clone_state(self):
        """A new Generator on the same device, at the same point of the same stream."""
        twin = Generator(self.device)
        twin._engine = self._engine.copy()
        twin._normal, twin._normal_float = self._normal, self._normal_float
        return twin

    def graphsafe_get_state(self):
        """torch's CUDA-graph form of get_state: a clone of this generator."""
        return self.clone_state()

    def graphsafe_set_state(self, state):
        """Take the stream position of `state` (a Generator, as graphsafe_get_state gives)."""
        if not isinstance(state, Generator):
            raise TypeError(f"graphsafe_set_state expects a Generator, got "
                            f"{type(state).__name__}")
        self._engine = state._engine.copy()
        self._normal, self._normal_float = state._normal, state._normal_float
        return self

    def get_offset(self):
        """CPU generators have no offset (torch raises the same error)."""
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset):
        """CPU generators have no offset (torch raises the same error)."""
        raise RuntimeError("CPU Generator does not use offset")

    def __getstate__(self):
        return {"device": str(self.device), "state": self.get_state().numpy().tobytes()}

    def __setstate__(self, d):
        self.__init__(d["device"])
        self.set_state(from_numpy(np.frombuffer(d["state"], dtype=np.uint8).copy()))

    def __repr__(self):
        return f"<ember.Generator object (device={self.device}, seed={self.initial_seed()})>"

    # -- the draws every random op is built from ---------------------------------------------

    def _words(self, n):
        """torch's random(): n 32-bit words (uint64 array)."""
        return self._engine.words(n)

    def _words64(self, n):
        """torch's random64(): n 64-bit words."""
        return self._engine.words64(n)


def _as_seed(seed):
    """torch accepts seeds in [-2**63, 2**64) (anything int() takes); negatives wrap to uint64."""
    seed = builtins.int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


def _nondeterministic_seed():
    return builtins.int.from_bytes(os.urandom(8), "little")


default_generator = Generator()
default_generator.manual_seed(_nondeterministic_seed())
_cuda_generators = {}
_cuda_seed = [None]  # the last global seed, for GPU generators made after it was set


def cuda_generator(index):
    """The host generator that samples for GPU `index` are drawn from (made on first use,
    seeded by the last global `manual_seed`, or from the operating system before any)."""
    g = _cuda_generators.get(index)
    if g is None:
        g = _cuda_generators[index] = Generator(f"cuda:{index}")
        seed = _cuda_seed[0]
        g.manual_seed(_nondeterministic_seed() if seed is None else seed)
    return g


def generator_for(device, generator=None):
    """The generator a draw for `device` uses: `generator`, checked against the device
    type as torch checks it, or that device's default generator."""
    if generator is None:
        if device.type == "cpu":
            return default_generator
        return cuda_generator(0 if device.index is None else device.index)
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an ember.Generator, not {type(generator).__name__}")
    if generator.device.type != device.type:
        raise RuntimeError(f"Expected a '{device.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def manual_seed(seed):
    """Seed the global generators (CPU and the CUDA host streams); returns the CPU one.
    Like torch, accepts anything int() takes."""
    seed = builtins.int(seed)
    default_generator.manual_seed(seed)
    _seed_gpus(seed)
    return default_generator


def _seed_gpus(seed):
    _cuda_seed[0] = seed
    for g in _cuda_generators.values():
        g.manual_seed(seed)


def seed():
    """Seed the global generator from OS entropy; returns the seed."""
    new = default_generator.seed()
    _seed_gpus(new)
    return new


def initial_seed():
    """The seed the global CPU generator started from."""
    return default_generator.initial_seed()


def get_rng_state():
    """The global CPU generator's state (torch's layout: it restores in torch too)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the global CPU generator from a state of `get_rng_state` (ember's or torch's)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run a block with the global random state saved and restored afterwards, so random
    numbers drawn inside do not change what is drawn after it (the CPU generator and the
    host generators of the GPUs in `devices`, all of them when None)."""
    if not enabled:
        yield
        return
    saved = [(g, g.clone_state()) for g in [default_generator, *_cuda_forked(devices)]]
    try:
        yield
    finally:
        for g, state in saved:
            g.graphsafe_set_state(state)


def _cuda_forked(devices):
    if devices is None:
        return list(_cuda_generators.values())
    indices = [as_device(d).index if not isinstance(d, builtins.int) else d for d in devices]
    return [cuda_generator(0 if i is None else i) for i in indices]

"""Random numbers: `Generator`, the global seed functions, and the random factories.

A Generator wraps NumPy's PCG64 bit generator. Streams are ember's own (they do not equal
torch's), but are reproducible: the same seed gives the same numbers on every run. The global
generator serves every random function that is not given `generator=`.

Read next: `_tensor_str.py` (printing).
"""
import pickle

import numpy as np

from . import _dtype as dt
from ._creation import _finish
from ._device import CPU, as_device
from ._utils import parse_size

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "default_generator", "rand", "randn"]

_DEFAULT_SEED = 67280421310721  # torch's default seed


class Generator:
    """torch.Generator: an independent random stream with `manual_seed`, `seed`,
    `initial_seed`, `get_state` and `set_state`."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._initial_seed = seed
        self.numpy = np.random.Generator(np.random.PCG64(seed & 0xFFFFFFFFFFFFFFFF))
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        new = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(new)
        return new

    def initial_seed(self):
        return self._initial_seed

    def get_state(self):
        """The state as a uint8 tensor (as torch's ByteTensor state)."""
        from ._creation import from_numpy

        blob = pickle.dumps((self._initial_seed, self.numpy.bit_generator.state))
        return from_numpy(np.frombuffer(blob, dtype=np.uint8).copy())

    def set_state(self, new_state):
        try:
            seed, state = pickle.loads(np.asarray(new_state).tobytes())
            self.numpy.bit_generator.state = state
        except Exception:
            raise RuntimeError("Expected a state produced by ember's Generator.get_state()") \
                from None
        self._initial_seed = seed
        return self

    def __getstate__(self):
        return {"device": self.device, "state": self.get_state()}

    def __setstate__(self, d):
        self.__init__(d["device"])
        self.set_state(d["state"])


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator (and CUDA's, when ember.cuda is in use)."""
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def numpy_generator(generator=None):
    """The NumPy generator behind `generator=` (or the global one)."""
    return (default_generator if generator is None else generator).numpy


def _random_tensor(draw, size, generator, dtype, device, requires_grad):
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"\"check_uniform_bounds\" not implemented for "
                           f"'{dt.scalar_name(dtype)}'")
    np_dtype = np.float32 if dtype.itemsize < 4 else dtype.np
    values = draw(numpy_generator(generator), parse_size(size), np_dtype)
    return _finish(values, dtype, CPU if device is None else device, requires_grad)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1)."""
    return _random_tensor(lambda g, s, d: g.random(s, dtype=d), size, generator, dtype, device,
                          requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples."""
    return _random_tensor(lambda g, s, d: g.standard_normal(s, dtype=d), size, generator, dtype,
                          device, requires_grad)

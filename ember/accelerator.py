"""ember.accelerator (torch.accelerator): the one accelerator a program may use -- in ember,
a CUDA GPU through CuPy, or none (then `is_available()` is False, `current_accelerator()`
None, `device_count()` 0, and the calls that need a device raise as torch's do)."""
from . import cuda
from ._device import device as _device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "synchronize",
           "empty_cache", "memory_allocated", "memory_reserved"]


def is_available():
    """Whether a GPU is there for ember to use."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """`device("cuda")` when a GPU is there, else None."""
    return _device("cuda") if cuda.is_available() else None


def device_count():
    """How many GPUs there are (0 without one)."""
    return cuda.device_count()


def _require():
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index():
    """The index of the current GPU."""
    _require()
    return cuda.current_device()


current_device_idx = current_device_index


def set_device_index(device):
    """Make GPU `device` the current one."""
    _require()
    cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None):
    """Wait for every queued GPU kernel."""
    _require()
    cuda.synchronize(device)


def empty_cache():
    """Return the memory pool's unused blocks to the driver."""
    _require()
    cuda.empty_cache()


def memory_allocated(device_index=None):
    """Bytes held by live arrays on the GPU."""
    _require()
    return cuda.memory_allocated(device_index)


def memory_reserved(device_index=None):
    """Bytes the memory pool holds from the driver."""
    _require()
    return cuda.memory_reserved(device_index)

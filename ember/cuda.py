"""`ember.cuda`: the GPU, as `torch.cuda` names it -- so the usual device-picking line runs:

    device = "cuda" if ember.cuda.is_available() else "cpu"
    model = Net().to(device)

ember's GPU arrays are CuPy's; this module asks CuPy about devices and memory, reaching it
through `_backend.cupy()` (`_backend.py` is the only file that imports CuPy). Without CuPy or
a GPU, `is_available()` says False and `device_count()` 0, and the calls that need a GPU raise
a RuntimeError saying so.

Random numbers: ember draws every device's samples on the host from one generator (see
`_random.py`), so `manual_seed` here seeds that generator -- the same as `ember.manual_seed`.

Memory figures are CuPy's memory pool: `memory_allocated` counts bytes held by live arrays,
`memory_reserved` what the pool holds from the driver, and `empty_cache` returns the unused part.

Read next: docs/CUDA.md (how the GPU path is checked, and how fast it is).
"""
from . import _backend, _device
from ._random import manual_seed as _seed_host_generator

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "synchronize", "manual_seed", "manual_seed_all",
           "memory_allocated", "memory_reserved", "empty_cache"]


def is_available():
    """True when CuPy is installed and sees at least one GPU."""
    return _backend.cuda_available()


def device_count():
    return _backend.cupy().cuda.runtime.getDeviceCount() if is_available() else 0


def current_device():
    """The index `device='cuda'` (no index) refers to."""
    return _device.current_cuda_index


def set_device(device):
    """Make `device` (an index, 'cuda:1', or an ember.device) what `'cuda'` means from now on."""
    index = _index(device)
    _backend.cupy().cuda.Device(index).use()
    _device.current_cuda_index = index


def get_device_name(device=None):
    return _properties(device)["name"].decode()


def get_device_capability(device=None):
    """(major, minor) compute capability, e.g. (9, 0) on an H100 or H200."""
    props = _properties(device)
    return props["major"], props["minor"]


def synchronize(device=None):
    """Wait until every kernel queued on the GPU has finished (for timing GPU work)."""
    _require().cuda.Device(_index(device)).synchronize()


def manual_seed(seed):
    """Seed the generator GPU samples are drawn from (ember's one host generator)."""
    _seed_host_generator(seed)


def manual_seed_all(seed):
    _seed_host_generator(seed)


def memory_allocated(device=None):
    """Bytes held by live ember/CuPy arrays on the GPU."""
    cp = _require()
    with cp.cuda.Device(_index(device)):
        return cp.get_default_memory_pool().used_bytes()


def memory_reserved(device=None):
    """Bytes the memory pool holds from the driver (live arrays plus its cache)."""
    cp = _require()
    with cp.cuda.Device(_index(device)):
        return cp.get_default_memory_pool().total_bytes()


def empty_cache():
    """Give the pool's unused blocks back to the driver (live arrays are untouched)."""
    if is_available():
        _backend.cupy().get_default_memory_pool().free_all_blocks()


def _require():
    if not is_available():
        raise RuntimeError("No CUDA GPUs are available (ember's GPU support needs CuPy and an "
                           "NVIDIA GPU)")
    return _backend.cupy()


def _index(device):
    if device is None:
        return _device.current_cuda_index
    if isinstance(device, int):
        return device
    d = _device.device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return _device.current_cuda_index if d.index is None else d.index


def _properties(device):
    return _require().cuda.runtime.getDeviceProperties(_index(device))

"""`ember.cuda`: the GPU, as `torch.cuda` names it -- so the usual device-picking line runs:

    device = "cuda" if ember.cuda.is_available() else "cpu"
    model = Net().to(device)

ember's GPU arrays are CuPy's; this module asks CuPy about devices and memory, reaching it
through `_backend.cupy()` (`_backend.py` is the only file that imports CuPy). Without CuPy or
a GPU, `is_available()` says False and `device_count()` 0, and the calls that need a GPU raise
a RuntimeError saying so.

Random numbers: ember draws a GPU's samples on the host, from one host generator per GPU
(`_generator.py`); `manual_seed` and friends here seed and save those and leave the CPU
stream alone, as torch's do. These streams are ember's own: only CPU streams equal torch's.

Memory figures are CuPy's memory pool: `memory_allocated` counts bytes held by live arrays,
`memory_reserved` what the pool holds from the driver, and `empty_cache` returns the unused part.
Without a GPU they are 0, as torch's are. CuPy keeps no peak, so the `max_memory_*` figures
raise NotImplementedError on a GPU (0 without one).

`ember.cuda.FloatTensor` and the other legacy tensor types are those of CUDA tensors
(`_legacy.py`): isinstance is true only for a GPU tensor of the dtype.

`ember.cuda.amp` holds the deprecated spellings of `ember.amp.autocast("cuda")` and
`GradScaler("cuda")`.

Read next: docs/CUDA.md (how the GPU path is checked, and how fast it is).
"""
from .. import _backend, _device, _generator

__all__ = ["is_available", "is_initialized", "device_count", "current_device", "set_device",
           "device", "get_device_name", "get_device_capability", "get_device_properties",
           "is_bf16_supported", "synchronize", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all", "memory_allocated", "memory_reserved", "max_memory_allocated",
           "max_memory_reserved", "reset_peak_memory_stats", "empty_cache", "amp"]


def is_available():
    """True when CuPy is installed and sees at least one GPU."""
    return _backend.cuda_available()


def is_initialized():
    """Whether the GPU is in use: ember starts CUDA (through CuPy) as soon as one is there."""
    return is_available()


def device_count():
    """How many GPUs CuPy sees (0 without CuPy or a GPU)."""
    return _backend.cupy().cuda.runtime.getDeviceCount() if is_available() else 0


def current_device():
    """The index `device='cuda'` (no index) refers to."""
    return _device.current_cuda_index


def set_device(device):
    """Make `device` (an index, 'cuda:1', or an ember.device) what `'cuda'` means from now on."""
    index = _index(device)
    _backend.cupy().cuda.Device(index).use()
    _device.current_cuda_index = index


class device:
    """`with ember.cuda.device(1):` makes `'cuda'` mean GPU 1 inside the block."""

    def __init__(self, device):
        self.index = _index(device) if device is not None and device != -1 else None
        self.previous = None

    def __enter__(self):
        if self.index is not None:
            self.previous = current_device()
            set_device(self.index)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            set_device(self.previous)
        return False


def get_device_name(device=None):
    """The GPU's name, e.g. 'NVIDIA H200' (RuntimeError without a GPU)."""
    return _properties(device)["name"].decode()


def get_device_properties(device=None):
    """CuPy's property dict for the GPU (name, totalGlobalMem, major, minor, ...)."""
    return _properties(device)


def is_bf16_supported(including_emulation=True):
    """bfloat16 on the GPU: compute capability 8.0 (Ampere) or later; False without a GPU."""
    return is_available() and get_device_capability()[0] >= 8


def get_device_capability(device=None):
    """(major, minor) compute capability, e.g. (9, 0) on an H100 or H200."""
    props = _properties(device)
    return props["major"], props["minor"]


def synchronize(device=None):
    """Wait until every kernel queued on the GPU has finished (for timing GPU work)."""
    _require().cuda.Device(_index(device)).synchronize()


def _generator_of(device=None):
    """The host generator that samples for GPU `device` (default: the current one) use."""
    if device is None or device == "cuda":
        index = _device.current_cuda_index
    elif isinstance(device, int):
        index = device
    else:
        index = _device.as_device(device).index
    return _generator.cuda_generator(index)


def _all_generators():
    return [_generator.cuda_generator(i) for i in range(max(device_count(), 1))]


def manual_seed(seed):
    """Seed the current GPU's generator (the CPU stream is untouched, as in torch)."""
    _generator_of().manual_seed(int(seed))


def manual_seed_all(seed):
    """Seed every GPU's generator."""
    for g in _all_generators():
        g.manual_seed(int(seed))


def seed():
    """Seed the current GPU's generator from the operating system's entropy."""
    _generator_of().seed()


def seed_all():
    """Seed every GPU's generator with one seed from the operating system's entropy."""
    manual_seed_all(_generator._nondeterministic_seed())


def initial_seed():
    """The seed the current GPU's generator started from."""
    return _generator_of().initial_seed()


def get_rng_state(device="cuda"):
    """A GPU generator's state as a uint8 tensor (ember's layout: the MT19937 state, not
    torch's Philox seed and offset)."""
    return _generator_of(device).get_state()


def set_rng_state(new_state, device="cuda"):
    """Restore a GPU generator from `get_rng_state`."""
    _generator_of(device).set_state(new_state)


def get_rng_state_all():
    """Every GPU generator's state."""
    return [g.get_state() for g in _all_generators()]


def set_rng_state_all(new_states):
    """Restore every GPU generator from `get_rng_state_all`."""
    for g, state in zip(_all_generators(), new_states):
        g.set_state(state)


def memory_allocated(device=None):
    """Bytes held by live ember/CuPy arrays on the GPU (0 without one)."""
    if not is_available():
        return 0
    cp = _backend.cupy()
    with cp.cuda.Device(_index(device)):
        return cp.get_default_memory_pool().used_bytes()


def memory_reserved(device=None):
    """Bytes the memory pool holds from the driver (live arrays plus its cache; 0 without a
    GPU)."""
    if not is_available():
        return 0
    cp = _backend.cupy()
    with cp.cuda.Device(_index(device)):
        return cp.get_default_memory_pool().total_bytes()


def max_memory_allocated(device=None):
    """The peak of `memory_allocated`: 0 without a GPU; CuPy's pool keeps no peak."""
    return _no_peak("max_memory_allocated")


def max_memory_reserved(device=None):
    """The peak of `memory_reserved`: 0 without a GPU; CuPy's pool keeps no peak."""
    return _no_peak("max_memory_reserved")


def reset_peak_memory_stats(device=None):
    """Start the peak figures afresh (nothing to do without a GPU)."""
    _no_peak("reset_peak_memory_stats")


def _no_peak(name):
    if is_available():
        raise NotImplementedError(f"ember.cuda.{name}: CuPy's memory pool keeps no peak figure")
    return 0


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


from . import amp  # noqa: E402  (amp reads is_available)


def _publish_legacy_types():
    """torch.cuda.FloatTensor & co.: the legacy tensor types of CUDA tensors (_legacy.py)."""
    from .._legacy import tensor_types

    globals().update(tensor_types("cuda", "ember.cuda"))


_publish_legacy_types()

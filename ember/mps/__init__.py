"""ember.mps (torch.mps): Apple-silicon GPUs. ember runs on none, so this answers as torch does on a
machine without the MPS backend: `is_available()` is False, `device_count()` 0, seeding does
nothing, and the calls that need the backend raise torch's RuntimeError.
(`ember.backends.mps.is_available()` answers the same question.)"""
__all__ = ["is_available", "device_count", "manual_seed", "seed", "synchronize",
           "empty_cache", "current_allocated_memory", "driver_allocated_memory"]


def _no_backend(call):
    raise RuntimeError(f"Cannot execute {call}() without MPS backend.")


def is_available():
    """False: ember has no MPS backend."""
    return False


def device_count():
    """0: no MPS device is usable."""
    return 0


def manual_seed(seed):
    """Nothing to seed (as torch without MPS: the call is accepted and does nothing)."""


def seed():
    """Raises torch's RuntimeError: there is no MPS generator to seed randomly."""
    _no_backend("getDefaultGenerator")


def synchronize():
    """Raises torch's RuntimeError: there is no MPS backend."""
    _no_backend("deviceSynchronize")


def empty_cache():
    """Raises torch's RuntimeError: there is no MPS backend."""
    _no_backend("emptyCache")


def current_allocated_memory():
    """Raises torch's RuntimeError: there is no MPS backend."""
    _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory():
    """Raises torch's RuntimeError: there is no MPS backend."""
    _no_backend("getDriverAllocatedMemory")

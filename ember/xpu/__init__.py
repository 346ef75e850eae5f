"""ember.xpu (torch.xpu): Intel GPUs. ember runs on none, so this answers as a torch built without
XPU support: `is_available()` is False, `device_count()` 0, seeding does nothing (there is no
XPU generator to seed), and the calls that need a device raise torch's AssertionError."""
__all__ = ["is_available", "device_count", "is_initialized", "is_bf16_supported",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "empty_cache",
           "current_device", "synchronize", "get_device_name"]


def _not_compiled():
    raise AssertionError("Torch not compiled with XPU enabled")


def is_available():
    """False: ember has no Intel-GPU backend."""
    return False


def device_count():
    """0: no Intel GPU is usable."""
    return 0


def is_initialized():
    """False: there is nothing to initialise."""
    return False


def is_bf16_supported(including_emulation=True):
    """False, as torch answers without XPU support."""
    return False


def manual_seed(seed):
    """Nothing to seed (as torch without XPU devices: the call is accepted and does nothing)."""


def manual_seed_all(seed):
    """Nothing to seed."""


def seed():
    """Nothing to seed."""


def seed_all():
    """Nothing to seed."""


def empty_cache():
    """Nothing cached: returns at once, as torch's does without XPU."""


def current_device():
    """Raises torch's AssertionError: there is no XPU device."""
    _not_compiled()


def synchronize(device=None):
    """Raises torch's AssertionError: there is no XPU device."""
    _not_compiled()


def get_device_name(device=None):
    """Raises torch's AssertionError: there is no XPU device."""
    _not_compiled()

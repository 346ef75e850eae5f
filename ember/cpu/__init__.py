"""ember.cpu (torch.cpu): the CPU as a device module -- the few calls programs make on it
(`is_available`, `synchronize`, `device_count`, `current_device`) and `ember.cpu.amp`."""
from . import amp

__all__ = ["amp", "is_available", "synchronize", "current_device", "device_count"]


def is_available():
    """Always True: ember runs on the CPU."""
    return True


def synchronize(device=None):
    """Nothing to wait for: CPU ops finish before they return."""


def current_device():
    """'cpu', as torch.cpu.current_device()."""
    return "cpu"


def device_count():
    """1: the CPU counts as one device."""
    return 1

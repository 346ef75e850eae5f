"""torch.Stream, torch.Event and torch.get_device_module: the device-generic runtime objects.

A stream is a queue of device work and an event a marker in one. ember's CPU work runs
synchronously, in program order, so on the CPU a stream has nothing queued (`query()` is True,
`synchronize()` returns at once) and, as in torch, the CPU backend has no events to record.
ember has no CUDA streams or events yet: asking for one raises NotImplementedError.
"""
import importlib

from ._device import device as _device

__all__ = ["Stream", "Event", "get_device_module"]


def _cpu_device(device, what):
    device = _device("cpu") if device is None else _device(device)
    if device.type != "cpu":
        raise NotImplementedError(f"ember.{what} on {device.type}: ember has streams and events "
                                  "only for the CPU, where work runs synchronously")
    return device


def _no_events():
    raise RuntimeError("cpu backend doesn't support events.")


class Stream:
    """`Stream(device=None, *, priority=0)`: the CPU's stream (ember runs CPU work in order, at
    once). `with stream:` is accepted; recording or waiting on events raises as torch's CPU
    backend does."""

    def __init__(self, device=None, *, priority=0):
        self.device = _cpu_device(device, "Stream")
        self.priority = priority

    stream_id = 0
    device_index = -1
    device_type = 0  # torch's DeviceType code of the CPU

    def query(self):
        """True: nothing is queued on the CPU."""
        return True

    def synchronize(self):
        """Return at once: the CPU's work is already done."""

    def wait_event(self, event):
        """Return at once (an event on the CPU marks nothing pending)."""

    def wait_stream(self, stream):
        """Raises as torch's CPU backend does: it has no events to wait on."""
        _no_events()

    def record_event(self, event=None):
        """Raises as torch's CPU backend does: it has no events."""
        _no_events()

    def is_capturing(self):
        """False: ember captures no graphs."""
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self):
        return hash((Stream, self.device.type))

    def __repr__(self):
        return (f"ember.Stream device_type={self.device.type}, device_index=-1, "
                f"stream_id={self.stream_id}")


class Event:
    """`Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)`: a CPU
    event. As in torch, `query()` is True and `wait()`/`synchronize()` return at once, while
    `record()` raises (the CPU backend has no events) -- so `elapsed_time` has nothing to time."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _cpu_device(device, "Event")
        self.enable_timing = bool(enable_timing)

    event_id = 0

    def record(self, stream=None):
        """Raises as torch's CPU backend does."""
        _no_events()

    def query(self):
        """True: nothing on the CPU is pending."""
        return True

    def wait(self, stream=None):
        """Return at once."""

    def synchronize(self):
        """Return at once."""

    def elapsed_time(self, end_event):
        """Raises torch's ValueError: CPU events are never recorded, so there is no time between
        them."""
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def __repr__(self):
        return (f"ember.Event device_type={self.device.type}, device_index=-1, "
                f"event_flag={int(self.enable_timing)}, event_id={self.event_id}")


def get_device_module(device=None):
    """The module of a device type: `ember.cpu` for 'cpu', `ember.cuda` for 'cuda'; without an
    argument, the accelerator's module when a GPU is there, else `ember.cpu` (as torch)."""
    from . import cuda
    if device is None:
        name = "cuda" if cuda.is_available() else "cpu"
    else:  # "cuda:0" and device("cuda", 0) both name the type "cuda"
        name = str(device).split(":")[0]
    if name not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'ember.{name}'.")
    return importlib.import_module(f"ember.{name}")

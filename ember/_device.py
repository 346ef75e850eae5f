"""`ember.device`: where a tensor's memory lives ('cpu', or 'cuda[:index]' through CuPy).

Read next: `_backend.py`, which turns a device into the array module (NumPy or CuPy) kernels use.
"""

__all__ = ["device", "set_default_device", "get_default_device"]

_TYPES = ("cpu", "cuda")


class device:
    """torch.device: `device('cpu')`, `device('cuda', 0)`, `device('cuda:1')`."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):  # torch.device(0) means cuda:0
            type, index = "cuda", type
        elif ":" in type:
            if index is not None:
                raise ValueError(f"type (string) must not include an index because index was "
                                 f"passed explicitly: {type}")
            type, _, text = type.partition(":")
            if not text.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{text}'")
            index = int(text)
        if type not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = type
        self.index = index

    def __eq__(self, other):
        """Equal to a device of the same type and index; never to a string, as in torch
        (`ember.device("cpu") == "cpu"` is False)."""
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        """`with ember.device('cuda'):` -- the default device inside the block."""
        _outer_defaults.append(_default)
        set_default_device(self)
        return self

    def __exit__(self, *exc_info):
        global _default
        _default = _outer_defaults.pop()


CPU = device("cpu")


_CUDA = {}  # index -> the one device instance tensors on that GPU carry
current_cuda_index = 0  # `cuda` without an index means this GPU (`ember.cuda.set_device`)
_default = CPU  # where factories put tensors when not told (`set_default_device`)
_outer_defaults = []  # the defaults to restore as `with device(...)` blocks end


def set_default_device(device):
    """torch.set_default_device: where factories (`zeros`, `randn`, `tensor`, layers'
    parameters ...) put tensors when no `device=` is given; None means the CPU again.
    `from_numpy` always shares host memory, so it stays on the CPU."""
    global _default
    _default = CPU if device is None else as_device(device)


def get_default_device():
    """The device factory functions use when no `device=` is given (CPU unless `set_default_device`
    changed it)."""
    return _default


def as_device(d):
    """Normalise what users pass as `device=` (None, str, int or device) to the device a tensor
    carries: one instance per device, with the GPU index filled in (a tensor made with
    `device='cuda'` reports `cuda:0`), so dispatch can compare devices by identity."""
    if d is None:
        return _default
    if d is CPU:
        return CPU
    if type(d) is not device:
        d = device(d)
    if d.type == "cpu":
        return CPU
    index = current_cuda_index if d.index is None else d.index
    found = _CUDA.get(index)
    if found is None:
        found = _CUDA[index] = device("cuda", index)
    return found

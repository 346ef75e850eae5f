"""`ember.device`: where a tensor's memory lives ('cpu', or 'cuda[:index]' through CuPy).

Read next: `_backend.py`, which turns a device into the array module (NumPy or CuPy) kernels use.
"""

__all__ = ["device"]

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
        if isinstance(other, str):
            other = device(other)
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


CPU = device("cpu")


def as_device(d):
    """Normalise what users pass as `device=` (None, str, int or device) to a device."""
    if d is None:
        return CPU
    if type(d) is not device:
        d = device(d)
    return CPU if d.type == "cpu" else d  # one cpu instance: dispatch compares by identity

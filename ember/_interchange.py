"""Tensors over memory that comes from elsewhere: a Python buffer (frombuffer), a file
(from_file), and other array libraries through DLPack (from_dlpack, to_dlpack, and the
`__dlpack__` protocol on Tensor, so NumPy, CuPy or torch can take ember tensors without a
copy).

Read next: `_tensor_str.py`.
"""
import numpy as np

from . import _dtype as dt
from ._backend import cupy
from ._device import as_device
from ._tensor import Tensor
from .ops._op import export

__all__ = ["frombuffer", "from_file", "from_dlpack", "to_dlpack"]

_CPU, _CUDA = 1, 2  # DLPack device types


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of an object with the buffer protocol (bytearray, array,
    mmap, ...), from byte `offset`, `count` elements (all by default); it shares that memory.
    A read-only buffer (bytes) gives a tensor that in-place ops refuse to write."""
    length = memoryview(buffer).nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    size = dtype.itemsize
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    return Tensor._make(array).requires_grad_(requires_grad)


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """A 1-d tensor of `size` elements read from a file's raw bytes; with shared=True it is a
    memory map of the file (writes go to the file), otherwise a copy."""
    if layout is not None or pin_memory:
        raise NotImplementedError("from_file: only the default layout, without pinned memory")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    nbytes = size * dtype.itemsize
    if shared:
        array = np.memmap(filename, dtype=dtype.np, mode="r+", shape=(size,))
    else:
        with open(filename, "rb") as f:
            data = f.read(nbytes)
        if len(data) < nbytes:
            raise RuntimeError(f"unexpected EOF, expected {nbytes - len(data)} more bytes. The "
                               "file might be corrupted.")
        array = np.frombuffer(bytearray(data), dtype=dtype.np)
    t = Tensor._make(array)
    t = t if device is None else t.to(device)
    return t.requires_grad_() if requires_grad else t


class _Capsule:
    """A bare DLPack capsule presented as a producer (a CPU one: capsules carry no device
    that NumPy's from_dlpack could read first)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (_CPU, 0)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing memory with any DLPack producer (a NumPy or CuPy array, a torch
    tensor, a capsule from to_dlpack); on `device` if given (a copy when that is another
    device), in new memory with copy=True (copy=False refuses to copy)."""
    result = _shared_from_dlpack(ext_tensor)
    if device is not None and as_device(device) != result.device:
        if copy is False:
            raise BufferError(f"from_dlpack: the tensor is on {result.device}; moving it to "
                              f"{as_device(device)} needs a copy, and copy=False")
        return result.to(device)
    return result.clone() if copy else result


def _shared_from_dlpack(ext_tensor):
    from ._backend import device_of

    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__, got "
                        f"{type(ext_tensor).__name__}")
    kind, _ = ext_tensor.__dlpack_device__()
    if kind == _CPU:
        array = np.from_dlpack(ext_tensor)
    elif kind == _CUDA and cupy() is not None:
        array = cupy().from_dlpack(ext_tensor)
    else:
        raise RuntimeError(f"from_dlpack: unsupported DLPack device type {kind}")
    dt.from_numpy_dtype(array.dtype)
    return Tensor._make(array, device=device_of(array))


def to_dlpack(tensor):
    """A DLPack capsule viewing the tensor's memory (for a consumer's from_dlpack)."""
    return tensor._data.__dlpack__()


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack protocol: a capsule viewing this tensor's memory."""
    if self.requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return self._data.__dlpack__()


def _dlpack_device(self):
    """The DLPack (device type, index) of this tensor."""
    return self._data.__dlpack_device__()


for _fn in (frombuffer, from_file, from_dlpack, to_dlpack):
    export(_fn, function=True, method=False)
export(_dlpack, name="__dlpack__", function=False, method=True)
export(_dlpack_device, name="__dlpack_device__", function=False, method=True)

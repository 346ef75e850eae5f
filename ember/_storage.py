"""Storages: the flat block of memory behind a tensor and all of its views.

ember keeps no separate storage object inside a tensor: a view's array is a NumPy (or CuPy)
view of another array, so the "storage" of a tensor is the allocation its array views.
`allocation_of` finds it by walking the arrays' `.base` chain (which also links tensors that
share memory without being autograd views, such as `x.detach()`); `span_of` gives the block an
array itself spans. The two classes here wrap such a block with torch's surface, so code that
compares storages works unchanged:

    x.untyped_storage().data_ptr() == x[1:].t().detach().untyped_storage().data_ptr()

UntypedStorage  bytes (torch.UntypedStorage): nbytes(), size(), data_ptr(), tolist(), device
TypedStorage    the same bytes read as one dtype (torch.TypedStorage), what checkpoints name as
                torch.FloatStorage, torch.LongStorage, ...

Read next: `serialization.py`, which writes and reads storages in PyTorch's file formats.
"""
import numpy as np

from . import _backend
from . import _dtype as dt
from ._device import CPU, as_device

__all__ = ["UntypedStorage", "TypedStorage", "span_of", "allocation_of"]


def span_of(array):
    """The smallest flat, contiguous array (same dtype) holding every element of `array`.

    Its first element is the lowest address `array` touches, so an element's offset in it is
    what torch calls the storage offset. For a contiguous array this is just a flat view.
    Memory between the lowest and highest address always belongs to the one allocation the
    array views, so reading it is safe even when `array` skips some of it."""
    xp = _backend.array_namespace(array)
    if array.size == 0:
        return xp.empty(0, dtype=array.dtype)
    if array.flags.c_contiguous:
        return array.reshape(-1)
    # reverse the axes that walk backwards so the first element is the lowest address
    forward = array[tuple(slice(None, None, -1) if s < 0 else slice(None)
                          for s in array.strides)]
    extent = sum((n - 1) * s for n, s in zip(forward.shape, forward.strides))
    count = extent // array.itemsize + 1
    return xp.lib.stride_tricks.as_strided(forward, shape=(count,), strides=(array.itemsize,))


def allocation_of(array):
    """(owner, block): the array that owns the memory `array` views (compare owners with
    `is`), and that memory as a flat uint8 array.

    A NumPy view's `.base` is the array it was made from; stride tricks put a small wrapper
    object in between, whose own `.base` continues the chain. The chain ends at an array that
    owns its memory, or wraps a foreign buffer (a memory map, bytes)."""
    owner = array
    while True:
        base = owner.base
        if base is not None and not hasattr(base, "shape"):
            base = getattr(base, "base", None)  # numpy's stride-tricks wrapper
        if base is None or not hasattr(base, "shape") or not hasattr(base, "base"):
            break
        owner = base
    return owner, span_of(owner).view(np.uint8)


def _address(array):
    if array.size == 0:
        return 0
    if isinstance(array, np.ndarray):
        return array.__array_interface__["data"][0]
    return array.data.ptr


class UntypedStorage:
    """A flat block of bytes on a device (torch.UntypedStorage).

    `UntypedStorage(n)` allocates n zero bytes; `tensor.untyped_storage()` returns a storage
    that *views* the tensor's memory, so writes through it are seen by the tensor."""

    def __init__(self, size=0, *, device=None):
        device = as_device(device)
        xp = _backend.namespace(device)
        self._bytes = xp.zeros(int(size), dtype=np.uint8)
        self._device = device

    @classmethod
    def _wrap(cls, array, device=CPU):
        """A storage viewing `array` (any dtype, flat and contiguous) as bytes."""
        storage = object.__new__(cls)
        storage._bytes = array.reshape(-1).view(np.uint8)
        storage._device = device
        return storage

    @classmethod
    def _of(cls, tensor):
        """The storage behind `tensor`: the whole allocation its array views."""
        return cls._wrap(allocation_of(tensor._data)[1], tensor.device)

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    def nbytes(self):
        """The size of the storage in bytes."""
        return int(self._bytes.size)

    def size(self):
        """The number of elements, which for an untyped storage is its size in bytes."""
        return int(self._bytes.size)

    __len__ = size

    def element_size(self):
        """1: an untyped storage holds bytes."""
        return 1

    def data_ptr(self):
        """The address of the first byte (host or device memory)."""
        return _address(self._bytes)

    def tolist(self):
        """The bytes as a list of ints (0-255), copied to the host."""
        return _backend.transfer(self._bytes, CPU).tolist()

    def __getitem__(self, index):
        item = _backend.transfer(self._bytes, CPU)[index]
        return item.tolist()

    def to(self, device=None, *, non_blocking=False):
        """This storage on `device`: self if it is there already, else a copy. `non_blocking` is
        accepted; the copy is always synchronous."""
        device = as_device(device)
        if device == self._device:
            return self
        return UntypedStorage._wrap(_backend.transfer(self._bytes, device), device)

    def cpu(self):
        """This storage on the CPU (self if already there, else a copy)."""
        return self.to(CPU)

    def cuda(self, device=None, non_blocking=False):
        """This storage on a CUDA device (`device`: an index, a name or None for the current one);
        self if already there, else a copy."""
        from ._device import device as make_device

        return self.to(make_device("cuda", device) if isinstance(device, int) else
                       as_device("cuda" if device is None else device))

    def clone(self):
        """A copy of the bytes, on the same device."""
        return UntypedStorage._wrap(self._bytes.copy(), self._device)

    def __repr__(self):
        return f"ember.storage.UntypedStorage(device={self._device}) of size {self.nbytes()}"


class TypedStorage:
    """An UntypedStorage read as elements of one dtype (torch.TypedStorage; checkpoints name
    these torch.FloatStorage, torch.HalfStorage, ...). `size()` counts elements."""

    def __init__(self, *, wrap_storage, dtype):
        if wrap_storage.nbytes() % dtype.itemsize:
            raise RuntimeError(f"TypedStorage: {wrap_storage.nbytes()} bytes is not a whole "
                               f"number of {dtype} elements")
        self._untyped_storage = wrap_storage
        self.dtype = dtype

    @property
    def _array(self):
        """The elements as a flat array (a view of the bytes)."""
        return self._untyped_storage._bytes.view(self.dtype.np)

    @property
    def device(self):
        return self._untyped_storage.device

    def untyped(self):
        """The UntypedStorage holding the bytes (shared, not a copy)."""
        return self._untyped_storage

    def size(self):
        """The number of elements of `dtype` the storage holds."""
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    __len__ = size

    def nbytes(self):
        """The size of the storage in bytes."""
        return self._untyped_storage.nbytes()

    def element_size(self):
        """The size of one element of `dtype`, in bytes."""
        return self.dtype.itemsize

    def data_ptr(self):
        """The address of the first element (host or device memory)."""
        return self._untyped_storage.data_ptr()

    def tolist(self):
        """The elements as a list of Python numbers, copied to the host."""
        array = _backend.transfer(self._array, CPU)
        if self.dtype is dt.bfloat16:
            array = array.astype(np.float32)
        return array.tolist()

    def __repr__(self):
        return (f"ember.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
                f"{self.size()}")

"""torch's legacy tensor types and typed storages, from before tensors had a dtype:
`ember.LongTensor([1, 2])`, `ember.FloatTensor(2, 3)`, `isinstance(t, ember.FloatTensor)`,
`x.type(ember.DoubleTensor)`, `ember.FloatStorage([1, 2])`, `set_default_tensor_type`.

As in torch, these are not subclasses of Tensor: every tensor is an `ember.Tensor`, and
`FloatTensor` is a *type* whose metaclass makes

    FloatTensor(...)           a float32 CPU tensor (data, a size, or a storage's memory)
    isinstance(t, FloatTensor) true iff t is a float32 tensor on the CPU

`FloatStorage` and friends are the same for storages: calling one makes a `TypedStorage` of
its dtype, and `isinstance` looks at the storage's dtype. `tensor_types("cuda")` builds the
`torch.cuda.FloatTensor` family for a CUDA namespace to publish.

Read next: `_tensor_str.py`.
"""
import functools

import numpy as np

from . import _dtype as dt
from ._device import as_device
from ._storage import TypedStorage, UntypedStorage
from ._tensor import Tensor
from ._utils import warn
from .ops._op import export

__all__ = ["tensor_types", "storage_types", "set_default_tensor_type", "type_name",
           "parse_type", "default_storage_type", "storage_type"]

# legacy name (without "Tensor" / "Storage") -> dtype; torch has complex storage types but no
# complex tensor types (torch.ComplexFloatTensor is only a name that x.type() returns)
_DTYPES = {"Float": dt.float32, "Double": dt.float64, "Half": dt.float16,
           "BFloat16": dt.bfloat16, "Byte": dt.uint8, "Char": dt.int8, "Short": dt.int16,
           "Int": dt.int32, "Long": dt.int64, "Bool": dt.bool}
_STORAGE_DTYPES = {**_DTYPES, "ComplexFloat": dt.complex64, "ComplexDouble": dt.complex128}


class _TensorType(type):
    """The metaclass of FloatTensor & co. (torch.tensortype): calling one makes a tensor of its
    dtype on its device; isinstance checks a tensor's dtype and device."""

    def __call__(cls, *args, device=None):
        device = as_device(cls.device_type if device is None else device)
        if device.type != cls.device_type:
            raise RuntimeError(f"legacy constructor expects device type: {cls.device_type} but "
                               f"device type: {device.type} was passed")
        return _construct(cls, args, device)

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls.device_type)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


def _construct(cls, args, device):
    """torch's legacy constructor: (), sizes, a Size, data, a tensor of the type, a storage."""
    from ._creation import legacy_constructor

    if len(args) == 1 and isinstance(args[0], (TypedStorage, UntypedStorage)):
        return _from_storage(cls, args[0], device)
    if len(args) == 1 and isinstance(args[0], Tensor):
        if not isinstance(args[0], cls):
            raise TypeError(f"expected {type_name(cls.dtype, cls.device_type)} (got "
                            f"{args[0].type()})")
        return args[0]
    return legacy_constructor(Tensor, args, device, cls.dtype)


def _from_storage(cls, storage, device):
    """A 1-d tensor over a storage's memory: its elements, or an untyped storage's bytes read
    as the type's dtype."""
    if isinstance(storage, TypedStorage) and storage.dtype is not cls.dtype:
        raise RuntimeError(f"Expected a Storage of type {dt.scalar_name(cls.dtype)} or an "
                           f"UntypedStorage, but got type {dt.scalar_name(storage.dtype)} for "
                           "argument 1 'storage'")
    if storage.device.type != device.type:
        raise RuntimeError(f"Expected a storage of device type {device.type} (got "
                           f"{storage.device.type})")
    if isinstance(storage, TypedStorage):
        storage = storage.untyped()
    if storage.nbytes() % cls.dtype.itemsize:
        raise RuntimeError(f"{storage.nbytes()} bytes are not a whole number of "
                           f"{dt.scalar_name(cls.dtype)} elements")
    return Tensor._make(storage._bytes.view(cls.dtype.np), device=storage.device)


def tensor_types(device_type="cpu", module="ember"):
    """{'FloatTensor': <type>, ...}: the legacy tensor types of one device type."""
    types = {}
    for stem, dtype in _DTYPES.items():
        name = stem + "Tensor"
        types[name] = _TensorType(name, (), {
            "__module__": module, "__qualname__": name, "dtype": dtype,
            "device_type": device_type, "is_cuda": device_type == "cuda",
            "is_sparse": False,
            "__doc__": f"The legacy type of {dtype} {device_type} tensors: calling it makes one "
                       f"(`{name}(2, 3)`, `{name}([1, 2])`), isinstance recognises them."})
    return types


# ----------------------------------------------------------------------------------------------
# typed storages


class _StorageType(type):
    """The metaclass of FloatStorage & co.: calling one makes a TypedStorage of its dtype;
    isinstance checks a storage's dtype."""

    def __call__(cls, *args, wrap_storage=None, **kwargs):
        if kwargs:
            raise RuntimeError(f"{cls!r}.__new__ received an invalid combination of arguments: "
                               f"keyword argument {next(iter(kwargs))!r} cannot be specified")
        if wrap_storage is not None:
            if args:
                raise TypeError(f"{cls!r}: wrap_storage= takes no positional arguments")
            return TypedStorage(wrap_storage=wrap_storage, dtype=cls.dtype)
        return TypedStorage(wrap_storage=_new_bytes(cls, args), dtype=cls.dtype)

    def __instancecheck__(cls, obj):
        return (isinstance(obj, TypedStorage) and obj.dtype is cls.dtype
                and obj.device.type == "cpu")

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


def _new_bytes(cls, args):
    """An UntypedStorage for `()`, `(n)` (n elements, zeroed) or `(sequence)` (the data)."""
    if not args:
        return UntypedStorage(0)
    if len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
        return UntypedStorage(args[0] * cls.dtype.itemsize)
    if len(args) == 1 and isinstance(args[0], (list, tuple, range)):
        from ._creation import tensor

        values = tensor(list(args[0]), dtype=cls.dtype)._data.reshape(-1)
        return UntypedStorage._wrap(np.ascontiguousarray(values))
    raise TypeError(f"{cls!r}.__new__ received an invalid combination of arguments. Expected "
                    f"one of: no arguments, (int size), (Sequence data), (*, UntypedStorage "
                    f"wrap_storage); got {tuple(type(a).__name__ for a in args)}")


def _storage_name(dtype):
    return f"torch.{dt.scalar_name(dtype)}Storage"


@functools.cache  # one family of types per namespace: isinstance and `is` compare them
def storage_types(module="ember"):
    """{'FloatStorage': <type>, ...}: the legacy typed storage types (CPU)."""
    types = {}
    for stem, dtype in _STORAGE_DTYPES.items():
        name = stem + "Storage"
        types[name] = _StorageType(name, (), {
            "__module__": module, "__qualname__": name, "dtype": dtype, "is_cuda": False,
            "__doc__": f"The legacy type of {dtype} storages: `{name}(n)`, `{name}([1, 2])` "
                       f"make a TypedStorage; isinstance recognises them."})
    return types


def default_storage_type():
    """torch.Storage: the storage type of the default dtype (FloatStorage unless changed)."""
    return storage_types()[dt.scalar_name(dt.get_default_dtype()) + "Storage"]


@export(function=False, method=True)
def storage_type(self):
    """Tensor.storage_type(): the legacy type of the tensor's storage (ember.FloatStorage for
    a float32 tensor); None for a dtype without one (uint16, float8 ...), as in torch."""
    if self.device.type != "cpu":
        raise NotImplementedError(f"storage_type() of a {self.device.type} tensor: ember has "
                                  f"no torch.cuda.FloatStorage family of types")
    return storage_types().get(dt.scalar_name(self.dtype) + "Storage")


# ----------------------------------------------------------------------------------------------
# type names: x.type(), x.type('torch.LongTensor'), set_default_tensor_type


def type_name(dtype, device_type="cpu"):
    """torch's name of a tensor type: 'torch.FloatTensor', 'torch.cuda.LongTensor'. (torch's
    spelling even under ember: programs compare these strings.)"""
    prefix = "torch.cuda." if device_type == "cuda" else "torch."
    return f"{prefix}{dt.scalar_name(dtype)}Tensor"


_BY_NAME = {type_name(d, device): (d, device) for d in dt.ALL_DTYPES
            for device in ("cpu", "cuda")}


def parse_type(t):
    """(dtype, device type or None) for a legacy type, its name ('torch.LongTensor', also
    'ember.LongTensor') or a dtype (which keeps the device: None)."""
    if isinstance(t, dt.dtype):
        return t, None
    if isinstance(t, _TensorType):
        return t.dtype, t.device_type
    if isinstance(t, str):
        key = "torch." + t[len("ember."):] if t.startswith("ember.") else t
        if key in _BY_NAME:
            return _BY_NAME[key]
        raise ValueError(f"invalid type: '{t}'")
    raise TypeError(f"dtype must be a type, str, or dtype object, not {type(t).__name__}")


_warned = []  # torch warns of the deprecation once per process


def set_default_tensor_type(t):
    """Deprecated torch.set_default_tensor_type: the default dtype (a floating legacy type or
    its name) and, for a CUDA type, the default device."""
    if not _warned:
        _warned.append(True)
        warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
             "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, dt.dtype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    dtype, device_type = parse_type(t)
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    from ._device import set_default_device

    dt.set_default_dtype(dtype)
    set_default_device(None if device_type == "cpu" else device_type)

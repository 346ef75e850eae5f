"""`Parameter` and `Buffer`: tensors that a Module registers when they are assigned to it.

A Parameter is a leaf tensor that requires grad and shares memory with the tensor it wraps;
`module.weight = Parameter(...)` puts it in `module._parameters`, which is what
`parameters()`, `state_dict()` and optimizers see. A `Buffer` marks a tensor as module state
that is not trained (BatchNorm's running mean): assigning one registers it as a buffer.

`UninitializedParameter` and `UninitializedBuffer` are the placeholders of lazy modules
(modules/lazy.py): they know their dtype, device and requires_grad but have no shape and no
data until `materialize(shape)` turns them into a plain Parameter / Tensor in place. Any other
use raises, as in torch.
"""
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


class Parameter(Tensor):
    """A trainable tensor: `Parameter(data, requires_grad=True)` shares `data`'s memory."""

    _is_param = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, not {type(data).__name__}")
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        p = cls._make(data._data, requires_grad, device=data.device)
        p._vc = data._vc
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # (Tensor's __str__ is its own __repr__, not this one)

    def __deepcopy__(self, memo):
        """A Parameter over a copy of the data, as torch's: without the gradient and without
        attributes set on the original."""
        if id(self) in memo:
            return memo[id(self)]
        new = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol):
        from ..serialization import reduce_parameter

        return reduce_parameter(self)


class Buffer(Tensor):
    """Marks a tensor as a buffer: `module.stats = Buffer(t, persistent=False)`."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._creation import empty

            data = empty(0)
        b = cls._make(data._data, data.requires_grad, device=data.device)
        b._vc = data._vc
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass


# ----------------------------------------------------------------------------------------------
# placeholders of lazy modules

_UNINITIALIZED = ("Attempted to use an uninitialized parameter. This error happens when you are "
                  "using a `LazyModule` or explicitly manipulating "
                  "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules "
                  "Call `forward` with a dummy batch to initialize the parameters before "
                  "calling torch functions")
_NO_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
             "happens in `load_state_dict` when trying to load an uninitialized parameter into "
             "an initialized one. Call `forward` to initialize the parameters before accessing "
             "their attributes.")


def _refuse(self):
    raise ValueError(_UNINITIALIZED)


class UninitializedTensorMixin:
    """What the two placeholders share: `_data` (which every op reads) raises, dtype, device
    and requires_grad are known, and `materialize` gives the tensor its shape."""

    __slots__ = ()
    cls_to_become = None
    _data = property(_refuse)  # shadows Tensor's slot: an op on a placeholder fails clearly

    @classmethod
    def _placeholder(cls, requires_grad, device, dtype):
        from .. import _creation

        t = Tensor._make(_creation.empty(0, device=device, dtype=dtype)._data,
                         device=_creation.empty(0, device=device)._device)
        t._requires_grad = requires_grad
        t.__class__ = cls
        return t

    @property
    def shape(self):
        raise RuntimeError(_NO_SHAPE)

    def size(self, dim=None):
        """Refused (RuntimeError): a placeholder has no shape until it is materialized, usually by
        the lazy module's first forward."""
        raise RuntimeError(_NO_SHAPE)

    def materialize(self, shape, device=None, dtype=None):
        """Become a `cls_to_become` of `shape` (uninitialised values), on `device` with
        `dtype` (by default the placeholder's own)."""
        from .. import _creation

        device = self._device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        data = _creation.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become
        self._data = data._data
        self._dtype = data._dtype
        self._device = data._device

    def _converted(self, dtype=None, device=None):
        new = type(self)._placeholder(self._requires_grad, device or self._device,
                                      dtype or self._dtype)
        if hasattr(self, "persistent"):
            new.persistent = self.persistent
        return new

    def to(self, *args, dtype=None, device=None, **kwargs):
        """A placeholder with another dtype or device (what Module.to and friends ask for)."""
        from .._device import device as device_type
        from .._dtype import dtype as dtype_type

        for arg in args:
            if isinstance(arg, dtype_type):
                dtype = arg
            elif isinstance(arg, (str, device_type)):
                device = arg
        return self._converted(dtype, device_type(device) if device is not None else None)

    def cpu(self, memory_format=None):
        """A placeholder of the same kind on the CPU."""
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        """A placeholder of the same kind on a CUDA device."""
        return self.to("cuda" if device is None else device)

    @property
    def data(self):
        return self

    @data.setter
    def data(self, new):  # Module._apply converting a lazy module (float(), to(device), ...)
        self._dtype = new._dtype
        self._device = new._device

    def detach(self):
        """Return self: a placeholder has no values or history to detach from."""
        return self

    def share_memory_(self):
        """Refused (RuntimeError): there is no memory to share before the placeholder is
        materialized."""
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        return self._converted()

    def __reduce_ex__(self, protocol):
        return (_placeholder_of, (type(self).__name__, self._requires_grad, str(self._device),
                                  self._dtype))


def _placeholder_of(name, requires_grad, device, dtype):
    return globals()[name]._placeholder(requires_grad, device, dtype)


for _name in ("float", "double", "half", "bfloat16"):
    def _cast(self, memory_format=None, _dtype=_name):
        from .. import _dtype as dt

        return self.to({"float": dt.float32, "double": dt.float64, "half": dt.float16,
                        "bfloat16": dt.bfloat16}[_dtype])
    _cast.__name__ = _name
    _cast.__doc__ = f"A placeholder of dtype {_name}."
    setattr(UninitializedTensorMixin, _name, _cast)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter without shape or data yet (a lazy module's weight); `materialize(shape)`
    makes it a Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return cls._placeholder(requires_grad, device, dtype)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer without shape or data yet (a lazy module's running statistics);
    `materialize(shape)` makes it a Tensor."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = cls._placeholder(requires_grad, device, dtype)
        t.persistent = persistent
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


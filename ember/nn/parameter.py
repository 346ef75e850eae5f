"""`Parameter` and `Buffer`: tensors that a Module registers when they are assigned to it.

A Parameter is a leaf tensor that requires grad and shares memory with the tensor it wraps;
`module.weight = Parameter(...)` puts it in `module._parameters`, which is what
`parameters()`, `state_dict()` and optimizers see. A `Buffer` marks a tensor as module state
that is not trained (BatchNorm's running mean): assigning one registers it as a buffer.
"""
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer"]


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

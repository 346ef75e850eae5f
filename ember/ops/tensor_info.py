"""Tensor methods (and their torch.* forms) that are not math: questions about a tensor,
edits of its memory, Python functions mapped over its elements, and legacy attributes.

    questions      numel, is_nonzero, is_same_size, get_device, dim_order, is_set_to,
                   is_tensor, is_storage, typename, is_inference, storage, const_data_ptr
    memory edits   resize_, resize_as_ (and the deprecated resize, resize_as), set_
    element maps   apply_, map_, map2_ (CPU only: a Python call per element, as torch's)
    functions      torch.detach/detach_/fill/fill_/zero_ (the methods as functions)
    subclasses     as_subclass (an alias in the graph), module_load
    legacy         volatile, name, grad_dtype, is_nested, reinforce

Read next: `../autograd/` (how recorded graphs run backwards).
"""
import builtins
import math
import warnings

import numpy as np

from .. import _dtype as dt
from .._functorch import batch_rules
from .._storage import TypedStorage, UntypedStorage, allocation_of
from .._tensor import Tensor
from .._utils import parse_size
from ..autograd import grad_mode
from ._op import EXPORTS, LINEAR, defop, export

__all__ = ["is_nonzero", "is_same_size", "get_device", "dim_order", "is_set_to", "is_tensor",
           "is_storage", "typename", "storage", "const_data_ptr", "resize_", "resize",
           "resize_as_", "resize_as", "set_", "apply_", "map_", "map2_", "as_subclass",
           "module_load", "reinforce"]

# ----------------------------------------------------------------------------------------------
# questions


export(Tensor.numel, name="numel", function=True, method=False)
export(Tensor.is_inference, name="is_inference", function=True, method=False)


@export(method=True)
def is_nonzero(input):
    """bool(input) of a one-element tensor; more or fewer elements are ambiguous."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input._data.reshape(()) != 0)


@export(method=True)
def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


@export(method=True)
def get_device(input):
    """The CUDA device index of a GPU tensor, -1 for a CPU tensor."""
    return -1 if input.device.type == "cpu" else (input.device.index or 0)


@export(function=False, method=True)
def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost in memory (largest stride) to the innermost, ties in dim
    order; ambiguity_check=True raises when sizes of 1 or equal strides leave the order open."""
    strides = self.stride()
    order = tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))
    if ambiguity_check and (1 in self.shape or len(set(strides)) != len(strides)):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact "
                           "one of the given memory formats.")
    return order


@export(function=False, method=True)
def is_set_to(self, tensor):
    """Whether both tensors view the same memory the same way (storage, offset, sizes,
    strides)."""
    same_owner = allocation_of(self._data)[0] is allocation_of(tensor._data)[0]
    return (same_owner and self.data_ptr() == tensor.data_ptr() and
            tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())


@export
def is_tensor(obj):
    """Whether `obj` is an ember Tensor (a Parameter included)."""
    return isinstance(obj, Tensor)


@export(method=True)
def is_distributed(input):
    """False: ember has no distributed tensors (torch.distributed works on ordinary ones)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_distributed(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return False


@export
def is_storage(obj):
    """Whether `obj` is a storage (UntypedStorage or TypedStorage)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


@export
def typename(obj):
    """The type's name as torch prints it: 'torch.FloatTensor' for tensors (torch's spelling,
    since programs compare it), 'int' for a builtin, the module-qualified class name
    otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"


@export(function=False, method=True)
def storage(self):
    """The tensor's storage read as its dtype (deprecated in torch for untyped_storage)."""
    warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                  "UntypedStorage will be the only storage class. This should only matter to "
                  "you if you are using storages directly.  To access UntypedStorage directly, "
                  "use tensor.untyped_storage() instead of tensor.storage()", UserWarning,
                  stacklevel=2)
    return TypedStorage(wrap_storage=self.untyped_storage(), dtype=self.dtype)


@export(function=False, method=True)
def const_data_ptr(self):
    """data_ptr(), for read-only use."""
    return self.data_ptr()


# ----------------------------------------------------------------------------------------------
# memory edits: the tensor takes a new shape, or another tensor's memory


def _check_resizable(self):
    if grad_mode.is_grad_enabled() and self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")


def _set_array(self, array):
    self._data = array
    self._vc.value += 1


@export(function=False, method=True)
def resize_(self, *size, memory_format=None):
    """Reshape in place to `size`, keeping the first elements in memory order; new
    elements (when it grows) are zeros -- uninitialised memory in torch."""
    _check_resizable(self)
    shape = parse_size(size)
    if builtins.any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(shape)}: {list(shape)}")
    count = math.prod(shape)
    flat = self._data.reshape(-1) if self._data.flags.c_contiguous else None
    if flat is not None and count <= flat.size:
        _set_array(self, flat[:count].reshape(shape))  # still this memory, as in torch
        return self
    from .._backend import array_namespace

    xp = array_namespace(self._data)
    grown = xp.zeros(count, dtype=self._data.dtype)
    old = self._data.reshape(-1)
    grown[:builtins.min(count, old.size)] = old[:count]
    _set_array(self, grown.reshape(shape))
    return self


@export(function=False, method=True)
def resize(self, *sizes):
    """Deprecated: a resized copy (see resize_)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *sizes)


@export(method=True)
def resize_as_(input, the_template, memory_format=None):
    """resize_ to the template's shape."""
    return resize_(input, tuple(the_template.shape))


@export(function=False, method=True)
def resize_as(self, tensor):
    """Deprecated: a copy resized to tensor's shape."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), tuple(tensor.shape))


@export(function=False, method=True)
def set_(self, source=None, storage_offset=0, size=None, stride=None):
    """Make self view other memory: another tensor's (its sizes and strides too), a storage's
    (from storage_offset with size and stride, in elements; contiguous by default), or none
    (an empty tensor)."""
    _check_resizable(self)
    if source is None:
        _set_array(self, self._data[:0].reshape(0) if self._data.ndim else
                   self._data.reshape(1)[:0])
        return self
    if isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Expected object of scalar type {dt.scalar_name(self.dtype)} "
                               f"but got scalar type {dt.scalar_name(source.dtype)} for "
                               "argument 'source'")
        self._data = source._data
        self._device = source._device
        self._vc = source._vc  # one memory: one version counter
        self._vc.value += 1
        return self
    if isinstance(source, TypedStorage):
        source = source.untyped()
    if not isinstance(source, UntypedStorage):
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    elements = source._bytes.view(self._data.dtype)
    size = (elements.size - storage_offset,) if size is None else parse_size((size,))
    if stride is None:
        stride, step = [], 1
        for n in reversed(size):
            stride.insert(0, step)
            step *= builtins.max(n, 1)
    from .shape import _strided_view

    itemsize = self._data.itemsize
    _set_array(self, _strided_view(np, elements[storage_offset:], tuple(size),
                                   tuple(s * itemsize for s in stride)))
    return self


# ----------------------------------------------------------------------------------------------
# Python functions over the elements


def _check_mappable(self, name):
    if self.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    if self.device.type != "cpu":
        raise TypeError(f"{name}_ is only implemented on CPU tensors")


def _mapped(self, fn, *others):
    """fn over the elements of self (and of others broadcast to it), written into self."""
    arrays = [self._data] + [np.broadcast_to(o._data, self._data.shape) for o in others]
    values = [fn(*(a.item() for a in items)) for items in zip(*(a.flat for a in arrays))]
    self._data[...] = np.asarray(values, dtype=self._data.dtype).reshape(self._data.shape)
    self._vc.value += 1
    return self


@export(function=False, method=True)
def apply_(self, callable):
    """self[i] = callable(self[i]) for every element (a Python call each; CPU only)."""
    _check_mappable(self, "apply_")
    return _mapped(self, callable)


@export(function=False, method=True)
def map_(self, other, callable):
    """self[i] = callable(self[i], other[i]), other broadcast to self."""
    _check_mappable(self, "map_")
    return _mapped(self, callable, other)


@export(function=False, method=True)
def map2_(self, x, y, callable):
    """self[i] = callable(self[i], x[i], y[i]), x and y broadcast to self."""
    _check_mappable(self, "map2_")
    return _mapped(self, callable, x, y)


# ----------------------------------------------------------------------------------------------
# the methods as torch.* functions


def _detach_(input):
    """torch.detach_: input.detach_()."""
    return input.detach_()


def _fill(input, value):
    """torch.fill: a copy of input filled with value."""
    return input.clone().fill_(value)


export(Tensor.detach, name="detach", function=True, method=False)
export(_detach_, name="detach_", function=True, method=False)
export(_fill, name="fill", function=True, method=False)
export(EXPORTS["fill_"][0], name="fill_", function=True, method=True)
export(EXPORTS["zero_"][0], name="zero_", function=True, method=True)


# ----------------------------------------------------------------------------------------------
# subclasses

_alias = defop("alias", "none", lambda xp, a: a.view(), lambda g: (g,), view=True)
_alias.jvp(LINEAR).batch(batch_rules.leading)  # forward mode and vmap (see ops/_op.py)


@export(function=False, method=True)
def as_subclass(self, cls):
    """self's data as an instance of the Tensor subclass `cls`, still in the graph (through
    an alias of self)."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    result = _alias(self)
    result.__class__ = cls
    return result


@export(function=False, method=True)
def module_load(self, other, assign=False):
    """How load_state_dict turns a state-dict value into this parameter's or buffer's new
    value: other.detach() when assigning, else self.copy_(other).detach()."""
    return other.detach() if assign else self.copy_(other).detach()


# ----------------------------------------------------------------------------------------------
# legacy attributes


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


def _grad_dtype(self):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self.dtype


def _set_grad_dtype(self, value):
    """ember's engine always gives a leaf the gradient in its own dtype: that is the only
    value this accepts."""
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if value is not self.dtype:
        raise NotImplementedError(f"grad_dtype={value}: ember's autograd engine casts every "
                                  f"leaf's gradient to the leaf's dtype ({self.dtype}); other "
                                  "gradient dtypes are not supported")


export(property(_volatile, _set_volatile, doc="Always False (removed in torch 0.4)."),
       name="volatile", function=False, method=True)
export(property(lambda self: None, doc="The autograd debug name torch keeps internally: None "
                                       "for every tensor a program makes."),
       name="name", function=False, method=True)
export(property(_grad_dtype, _set_grad_dtype, doc="The dtype of a leaf's .grad: its own "
                                                  "dtype (see _set_grad_dtype)."),
       name="grad_dtype", function=False, method=True)
export(property(lambda self: False, doc="False: ember has no nested (jagged) tensors."),
       name="is_nested", function=False, method=True)


@export(function=False, method=True)
def reinforce(self, reward):
    """Removed in torch 0.4 (raises, as torch's does): use ember.distributions."""
    raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead.\nSee "
                       "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
                       "probs = policy_network(state)\naction = probs.multinomial()\n"
                       "next_state, reward = env.step(action)\naction.reinforce(reward)\n"
                       "action.backward()\n\nUse:\n\nprobs = policy_network(state)\n# NOTE: "
                       "categorical is equivalent to what used to be called multinomial\nm = "
                       "torch.distributions.Categorical(probs)\naction = m.sample()\n"
                       "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * "
                       "reward\nloss.backward()")

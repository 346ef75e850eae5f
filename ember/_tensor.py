"""`Tensor`: an n-d array (NumPy or CuPy) plus what autograd needs to know about it.

A Tensor holds
  _data         the array; views (transpose, slices, ...) are NumPy views of their base's array,
                so writing through either one is seen by the other, as in torch;
  _vc           the version counter, one per storage: every in-place op bumps it, and the
                engine compares it with the version a saved tensor had when it was saved
                (made on first use: most op results never need one);
  _base         the tensor whose memory a view shares (None for a non-view);
  _grad_fn      the graph node that made it (None for leaves); `_output_nr` says which output;
  grad, requires_grad, hooks, and an optional per-instance __dict__ (torch allows attributes).

Torch calls the same split TensorImpl (storage, sizes, strides, version counter) and
AutogradMeta (grad, grad_fn, hooks). Math methods (`add`, `sum`, `__mul__`, ...) are not written
here: each op module exports them and `_tensor_methods.py` binds them, so an op's public
surface stays beside its kernel.

Read next: `ops/_op.py` (how an op is declared), then `ops/_dispatch.py` (how it runs).
"""
import numpy as np

from . import _backend
from . import _dtype as dt
from ._device import CPU

__all__ = ["Tensor", "Size"]


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `ember.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self):
        return f"ember.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        """The number of elements of a tensor of this shape (the product of the sizes)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        got = tuple.__getitem__(self, item)
        return Size(got) if isinstance(item, slice) else got

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __reduce__(self):
        return (Size, (tuple(self),))


_new = object.__new__
_DTYPES = dt._BY_NUMPY


def _autograd_backward(*args, **kwargs):
    """autograd.backward, imported on first use (autograd imports this module). The import
    statement in `Tensor.backward` itself cost ~3k instructions a call (`from package import
    name` runs importlib's Python `_handle_fromlist` each time; callgrind, issue 22)."""
    global _autograd_backward
    from .autograd.engine import backward

    _autograd_backward = backward
    return backward(*args, **kwargs)


class VersionCounter:
    """Shared by a tensor and all its views; bumped by every in-place write."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class Tensor:
    """A multi-dimensional array that can record the operations applied to it."""

    # Slots hold what every op reads; `_view_fn`/`_view_of_fn` are assigned only on views
    # (read them only when `_base` is set). Rarely set fields are class-level defaults, shadowed
    # per instance in `__dict__` when used, so creating a tensor stays cheap.
    __slots__ = ("_data", "_dtype", "_device", "_counter", "_base", "_view_fn", "_view_of_fn",
                 "_grad_fn", "_output_nr", "_requires_grad", "__dict__", "__weakref__")

    grad = None             # accumulated gradient (leaves, and non-leaves with retain_grad)
    _grad_acc = None        # weakref to this leaf's AccumulateGrad node
    _retains_grad = False
    _hooks = None           # {id: hook} for a leaf's register_hook
    _post_acc_hooks = None  # {id: hook} for register_post_accumulate_grad_hook
    _is_param = False       # nn.Parameter sets True
    _batch_level = 0        # a BatchedTensor's vmap level (ember/_functorch/levels.py)
    _tangents = None        # {dual level: tangent} under forward-mode AD (autograd/forward_ad.py)

    def __new__(cls, *args, device=None, dtype=None):
        """`ember.Tensor(2, 3)` (uninitialised float) or `ember.Tensor([1, 2])` (data), as torch."""
        from ._creation import legacy_constructor

        return legacy_constructor(cls, args, device, dtype)

    @classmethod
    def _make(cls, data, requires_grad=False, grad_fn=None, output_nr=0, device=CPU):
        """Wrap an array without copying (the hot path: every op result comes through here)."""
        t = _new(cls)
        t._data = data
        t._dtype = _DTYPES[data.dtype]
        t._device = device
        t._counter = None  # made on first use (`_vc`)
        t._base = None
        t._grad_fn = grad_fn
        t._output_nr = output_nr
        t._requires_grad = requires_grad
        return t

    # ------------------------------------------------------------------------------------------
    # metadata

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """The shape as a `Size`, or the length of dim `dim` (negative counts from the end)."""
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[self._wrap_dim(dim)]

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        """The number of dims (`ndim`); `ndimension` is another name for it."""
        return self._data.ndim

    ndimension = dim

    def numel(self):
        """The number of elements (the product of the sizes); `nelement` is another name for it."""
        return self._data.size

    nelement = numel

    def element_size(self):
        """The size of one element in bytes (`itemsize`)."""
        return self._dtype.itemsize

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._data.size * self._dtype.itemsize

    def is_floating_point(self):
        """Whether the dtype is a floating-point one (float16, bfloat16, float32, float64, ...)."""
        return self._dtype.is_floating_point

    def is_complex(self):
        """Whether the dtype is a complex one."""
        return self._dtype.category == dt.COMPLEX

    def is_signed(self):
        """Whether the dtype holds negative numbers (False for bool and the unsigned ints)."""
        return self._dtype.is_signed

    def is_inference(self):
        """Always False: ember has no inference tensors.
        Unlike torch, a tensor made under `inference_mode` is an ordinary tensor."""
        return False

    @property
    def layout(self):
        from . import strided

        return strided

    is_sparse = False  # (a class attribute, not a property: products read it on every call)

    @property
    def is_quantized(self):
        return False

    # devices and layouts ember does not have: torch's probes answer False
    is_meta = property(lambda self: False, doc="False: ember has no meta tensors.")
    is_xpu = property(lambda self: False, doc="False: ember has no Intel-GPU tensors.")
    is_mps = property(lambda self: False, doc="False: ember has no Apple-GPU tensors.")
    is_ipu = property(lambda self: False, doc="False: ember has no IPU tensors.")
    is_xla = property(lambda self: False, doc="False: ember has no XLA tensors.")
    is_mtia = property(lambda self: False, doc="False: ember has no MTIA tensors.")
    is_maia = property(lambda self: False, doc="False: ember has no MAIA tensors.")
    is_vulkan = property(lambda self: False, doc="False: ember has no Vulkan tensors.")
    is_mkldnn = property(lambda self: False, doc="False: ember has no oneDNN layouts.")
    is_nested = property(lambda self: False, doc="False: ember has no nested tensors.")
    is_sparse_csr = property(lambda self: False, doc="False: ember has no CSR tensors.")

    def share_memory_(self):
        """Move this tensor's memory into shared memory, in place (processes that get the
        tensor through ember.multiprocessing then work on the same memory). A view moves its
        base's whole memory and keeps its place in it. GPU tensors and tensors already shared
        are left as they are. Unlike torch, other tensors that shared the old memory before
        the move (other views, `detach()`-ed copies) keep the old memory: ember cannot move
        memory under arrays it does not know of."""
        from . import _shared_memory as shm

        if self._device.type != "cpu" or not shm.available or \
                shm.shared_segment(self._data) is not None:
            return self
        if self._base is None:
            self._data = shm.share(self._data)
            return self
        base = self._base
        offset = self._data.__array_interface__["data"][0] - base._data.__array_interface__[
            "data"][0]
        if not base._data.flags.c_contiguous:
            raise RuntimeError("share_memory_() on a view of a non-contiguous tensor: call it "
                               "on a contiguous copy")
        base.share_memory_()
        self._data = np.ndarray(self._data.shape, self._data.dtype, buffer=base._data,
                                offset=offset, strides=self._data.strides)
        return self

    def is_shared(self):
        """Whether the memory is shared between processes (always for GPU tensors, as in
        torch; CPU tensors after share_memory_ or when received from another process)."""
        from . import _shared_memory as shm

        return self._device.type == "cuda" or shm.shared_segment(self._data) is not None

    def is_pinned(self, device=None):
        """False: ember never allocates page-locked host memory."""
        return False

    def pin_memory(self, device=None):
        """Without a GPU, torch's RuntimeError (there is no pinned-memory allocator). With one,
        self: ember has no page-locked host memory, so copies to the GPU are ordinary ones
        (`is_pinned()` stays False)."""
        from ._backend import cuda_available

        if not cuda_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self

    def _wrap_dim(self, dim):
        from ._utils import wrap_dim

        return wrap_dim(dim, self._data.ndim)

    # memory layout: strides and offsets count elements, as in torch

    def stride(self, dim=None):
        """The step, in elements, between neighbours along each dim (a tuple), or along `dim`.
        An empty tensor that owns its memory reports contiguous strides, as in torch."""
        if self._data.size == 0 and self._base is None and not any(self._data.strides):
            # NumPy gives a new empty array zero strides; torch gives it contiguous ones
            strides, step = [], 1
            for n in reversed(self._data.shape):
                strides.insert(0, step)
                step *= max(n, 1)
            strides = tuple(strides)
        else:
            size = self._dtype.itemsize
            strides = tuple(s // size for s in self._data.strides)
        return strides if dim is None else strides[self._wrap_dim(dim)]

    def data_ptr(self):
        """The address of the first element (the device pointer on CUDA; 0 for an empty tensor)."""
        if self._data.size == 0:
            return 0
        if self._device.type == "cpu":
            return self._data.__array_interface__["data"][0]
        return self._data.data.ptr

    def storage_offset(self):
        """How many elements into its storage this tensor's first element lies."""
        root = self._base if self._base is not None else self
        if self._data.size == 0:
            return 0
        return (self.data_ptr() - root._storage_start()) // self._dtype.itemsize

    def _storage_start(self):
        """Address of the first element of this (base) tensor's memory block."""
        arr = self._data
        if arr.size == 0:
            return 0
        lowest = sum(min(0, (n - 1) * s) for n, s in zip(arr.shape, arr.strides))
        return self.data_ptr() + lowest

    def is_contiguous(self, memory_format=None):
        """Whether the elements lie in memory in row-major order of the dims, with no gaps.
        `memory_format` may be `contiguous_format` or `channels_last` (then only a 4-d tensor can be
        contiguous); unlike torch, other memory formats raise RuntimeError."""
        from . import channels_last, contiguous_format

        if memory_format is None or memory_format is contiguous_format:
            return self._data.flags.c_contiguous
        if memory_format is channels_last:
            return self.ndim == 4 and self._data.transpose(0, 2, 3, 1).flags.c_contiguous
        raise RuntimeError(f"unsupported memory format {memory_format}")

    def untyped_storage(self):
        """The bytes this tensor's memory holds, as an `UntypedStorage` sharing that memory."""
        from ._storage import UntypedStorage

        return UntypedStorage._of(self)

    # ------------------------------------------------------------------------------------------
    # autograd state

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records operations on this leaf tensor; returns self.
        Only floating-point and complex tensors may require grad, and a tensor computed from others
        (one with a `grad_fn`) cannot be switched off: use `detach()`."""
        requires_grad = bool(requires_grad)
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and self._dtype.category < dt.FLOATING:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self._requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        """The node that created this tensor. A view whose base was changed in place (through
        another view) gets a fresh node that re-derives it from the base's new history."""
        if self._base is not None and self._view_fn is not None:
            base_fn = self._base._grad_fn
            if base_fn is not self._view_of_fn:
                from .autograd.graph import regenerate_view_grad_fn

                regenerate_view_grad_fn(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _vc(self):
        """The version counter, made on first use (views share it, in-place ops bump it, saving
        for backward reads it): most op results never need one, and making one for each was
        ~1.5k instructions of a tiny op's ~25k (callgrind, issue 22)."""
        try:
            counter = self._counter
        except AttributeError:  # a tensor not made by `_make`: the slot is unset
            counter = None
        if counter is None:  # (not the class call: its slow path is ~0.7k instructions more)
            counter = self._counter = _new(VersionCounter)
            counter.value = 0
        return counter

    @_vc.setter
    def _vc(self, counter):
        self._counter = counter

    @property
    def _version(self):
        return self._vc.value

    def _bump_version(self):
        self._vc.value += 1

    def retain_grad(self):
        """Keep `.grad` for a non-leaf after backward (leaves keep theirs anyway)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None and not self._retains_grad:
            from .autograd.graph import add_retain_grad_hook

            add_retain_grad_hook(self)
        self._retains_grad = self.grad_fn is not None
        return None

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a non-None return value
        replaces the gradient. Returns a handle with `.remove()`."""
        from .autograd.graph import register_tensor_hook

        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call `hook(tensor)` after a leaf's `.grad` was updated (what DDP and fused optimizers
        use to act on a gradient as soon as it is ready)."""
        from .autograd.graph import RemovableHandle

        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = {}
        return RemovableHandle(self._post_acc_hooks, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's `.grad` (see autograd/engine.py)."""
        _autograd_backward(self, gradient, retain_graph, create_graph, None, inputs)

    def detach(self):
        """A tensor sharing this one's memory (and version counter) with no history. Like
        torch's, it is not an autograd view: its `_base` is None."""
        t = Tensor._make(self._data, device=self._device)
        t._vc = self._vc
        return t

    def detach_(self):
        """In place: cut self from the graph (a leaf that does not require grad); returns self.
        A view cannot be detached in place (RuntimeError); use `detach()`."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    @property
    def data(self):
        """The same memory as a tensor outside autograd (`x.data`); assigning replaces it."""
        return self.detach()

    @data.setter
    def data(self, new):
        if not isinstance(new, Tensor):
            raise TypeError(f"data must be a Tensor, not {type(new).__name__}")
        self._data = new._data
        self._dtype = new._dtype
        self._device = new._device

    # ------------------------------------------------------------------------------------------
    # conversions

    def numpy(self, *, force=False):
        """The underlying NumPy array (shared memory), as torch's `.numpy()`."""
        if self._device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
            return _backend.transfer(self._data, CPU)
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        """`np.asarray(t)`: the host array (shared memory on the CPU). Like `numpy()` it
        refuses a tensor that requires grad; unlike it, it copies a GPU tensor to the host."""
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        arr = _backend.transfer(self._data, CPU)
        if dtype is not None and arr.dtype != np.dtype(dtype):
            if copy is False:
                raise ValueError(f"converting {self._dtype} to {np.dtype(dtype)} needs a copy")
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def item(self):
        """The only element as a Python number (float for every floating dtype, complex for
        complex ones)."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return _backend.transfer(self._data, CPU).reshape(()).item()

    def tolist(self):
        """Nested lists of Python numbers (just a number for a 0-d tensor)."""
        return _backend.transfer(self._data, CPU).tolist()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        n = self._data.size
        if n != 1:
            what = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self.item())

    def _python_scalar(self):
        """The only element, for int() / float() / complex() (ValueError otherwise, as torch)."""
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __int__(self):
        return int(self._real_scalar("int64_t"))

    def __float__(self):
        return float(self._real_scalar("double"))

    def _real_scalar(self, c_type):
        """The only element for int() / float(): a complex one converts only when its imaginary
        part is 0 (torch reports any other as an overflow)."""
        value = self._python_scalar()
        if isinstance(value, complex):
            if value.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {c_type} without "
                                   "overflow")
            return value.real
        return value

    def __complex__(self):
        return complex(self._python_scalar())

    def __index__(self):
        """Integer (or bool) tensors of one element can index Python sequences."""
        if self._dtype.category >= dt.FLOATING or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __format__(self, spec):
        """`f"{t:.3f}"` formats a 0-d tensor's value; other tensors take only an empty spec."""
        if self._data.ndim == 0 and type(self) is Tensor:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    __hash__ = object.__hash__  # tensors hash by identity, as in torch

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr

        return tensor_repr(self, tensor_contents)

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        import copy

        # a leaf with its own data (same memory order), requires_grad, grad and the user's
        # attributes; names Tensor itself defines (grad, hooks, ...) are autograd state
        new = type(self)._make(self._data.copy(order="K"), self._requires_grad,
                               device=self._device)
        memo[id(self)] = new
        if self.grad is not None:
            new.grad = copy.deepcopy(self.grad, memo)
        extra = {k: v for k, v in vars(self).items() if not hasattr(Tensor, k)}
        if extra:
            new.__dict__.update(copy.deepcopy(extra, memo))
        return new

    def __reduce_ex__(self, protocol):
        from .serialization import reduce_tensor

        return reduce_tensor(self)

    def __setstate__(self, state):
        from .serialization import set_tensor_state

        set_tensor_state(self, state)


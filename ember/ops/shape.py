"""Views, reshaping, joining and splitting: view, transpose, expand, narrow, diagonal, cat, ...

Ops declared with `view=True` return NumPy views of their input: the result shares memory and
the version counter with its base (see `_dispatch._mark_views`). Their rules are views too, or
`view_scatter` -- "zeros of the input's shape with g written where the view looks" -- so the
backward of a chain of views costs no copies beyond the one gradient buffer.

Strides are torch's, not NumPy's: the two libraries agree on every dim of size > 1 (memory
decides those), but pick different strides for dims of size 1 (`view`, `unsqueeze`,
`expand`). Code that compares `stride()` or `is_contiguous()` with torch sees the same numbers
because those kernels fix the size-1 strides with `_strided_view`, the one place that builds
an array from raw strides (NumPy's stride tricks). `diagonal`, `unfold` and `as_strided` use
it too.

Ops that torch does not implement as views copy (flip, roll, repeat, cat, tril, ...).

Sections: strided helpers | view & reshape | transposes | expand & broadcast | (un)squeeze |
flatten | slicing views (narrow, select, split, unbind, diagonal, unfold, as_strided) | joining
(cat, stack) | copies (repeat, flip, roll, tril, diag, meshgrid) | in-place view ops.

Read next: `index.py`.
"""
import builtins
import math
import operator
import warnings

import numpy as np

from .. import _dtype as dt
from .._functorch import batch_rules
from .._tensor import Size, Tensor
from .._utils import parse_size, wrap_dim, wrap_dims
from ._dispatch import call_unary, overlapping
from ._op import LINEAR, defop, export

# ----------------------------------------------------------------------------------------------
# strided helpers (strides here are in bytes, as NumPy counts them)


def _strided_view(xp, a, shape, strides, offset=0):
    """A view of `a`'s memory with `shape` and byte `strides`, starting `offset` bytes from a's
    first element. A negative offset reaches back into the memory `a` is a view of.

    Read-only when two elements share memory (a stride 0 over a dim of size > 1): torch refuses
    in-place writes into such tensors, and a read-only array makes ours fail the same way."""
    stride_tricks = xp.lib.stride_tricks
    if a.dtype.kind == "V" or a.dtype.type.__module__.startswith("ml_dtypes"):
        # NumPy's as_strided cannot rebuild every ml_dtypes type (float8_e5m2) from its array
        # interface: stride the same bytes as unsigned integers, then view them back
        return _strided_view(xp, a.view(f"u{a.itemsize}"), shape, strides,
                             offset).view(a.dtype)
    if offset:
        # a 1-element array at the target address: walk |offset| bytes forwards or backwards
        step = a.itemsize if offset > 0 else -a.itemsize
        line = stride_tricks.as_strided(a, shape=(abs(offset) // a.itemsize + 1,),
                                        strides=(step,))
        a = line[-1:]
    if not hasattr(a.flags, "writeable"):  # CuPy's: `_dispatch._check_writeable` reads strides
        return stride_tricks.as_strided(a, shape=shape, strides=strides)
    return stride_tricks.as_strided(a, shape=shape, strides=strides,
                                    writeable=not overlapping(shape, strides))


def _contiguous_strides(shape, itemsize):
    """Row-major strides; a dim of size 0 counts as 1, as in torch (and NumPy)."""
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= builtins.max(n, 1)
    return tuple(reversed(strides))


def _view_strides(old_shape, old_strides, shape, itemsize):
    """The strides torch gives `old` viewed as `shape`, or None when no view exists.

    Walking the old dims from the last, consecutive dims whose strides chain (stride[d-1] ==
    size[d] * stride[d]) form one contiguous chunk of memory. A view exists when the new dims,
    also taken from the last, can be grouped so each group spans exactly one chunk; each new
    dim then strides through its chunk. Dims of size 1 never break a chunk."""
    numel = 1
    for n in shape:
        numel *= n
    if not old_shape:
        return (itemsize,) * len(shape)
    if numel == 0:
        return tuple(old_strides) if tuple(old_shape) == tuple(shape) else \
            _contiguous_strides(shape, itemsize)
    strides = [0] * len(shape)
    view_d = len(shape) - 1
    base = old_strides[-1]
    chunk = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        chunk *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != chunk * base):
            while view_d >= 0 and (view_numel < chunk or shape[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != chunk:
                return None
            if d > 0:
                base = old_strides[d - 1]
                chunk = view_numel = 1
    return tuple(strides) if view_d == -1 else None


def _expand_strides(a_shape, a_strides, shape):
    """torch's strides for an expanded view: 0 where a dim grows from 1, the input's stride
    where it keeps its size, and for a new leading dim of size 1 the stride it would have in
    a contiguous layout of the dims after it. A 0-d input gets stride 0 everywhere."""
    strides = [0] * len(shape)
    if not a_shape:
        return tuple(strides)
    lead = len(shape) - len(a_shape)
    for i in range(len(shape) - 1, -1, -1):
        if i >= lead:
            if a_shape[i - lead] == shape[i]:
                strides[i] = a_strides[i - lead]
        elif shape[i] == 1:
            strides[i] = shape[i + 1] * strides[i + 1]
    return tuple(strides)


def _c_order(a):
    """`a`, copied to row-major order only if it is not already (ascontiguousarray would also
    turn a 0-d array into a 1-d one)."""
    return a if a.flags.c_contiguous else a.copy()


def _address(array):
    """The address of an array's first element (also when it is empty, unlike data_ptr)."""
    interface = getattr(array, "__array_interface__", None)
    return interface["data"][0] if interface is not None else array.data.ptr


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _tensors(args, name):
    """`f(a, b)` or `f([a, b])` as a tuple of tensors."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    for i, t in enumerate(args):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return args


# ----------------------------------------------------------------------------------------------
# view and reshape

_VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one "
               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


def _view_kernel(xp, a, *, shape):
    try:  # (NumPy's method, not its function: ~5k instructions less on a small view)
        if xp is np and a.flags.c_contiguous:  # always a view: no copy=False to parse (~1.3k
            out = a.reshape(shape)               # instructions of a 4x4 tensor's 26k view)
        else:
            out = a.reshape(shape, copy=False) if xp is np else xp.reshape(a, shape, copy=False)
    except ValueError:
        raise RuntimeError(_VIEW_ERROR) from None
    if 1 in shape or out.size == 0:  # the only cases where NumPy's strides may differ
        strides = _view_strides(a.shape, a.strides, shape, a.itemsize)
        if strides is None:
            raise RuntimeError(_VIEW_ERROR)
        if strides != out.strides:
            out = _strided_view(xp, a, shape, strides)
    return out


_view = defop("view", "none", _view_kernel, lambda g, a_shape: (g.reshape(a_shape),),
              view=True)
# torch's _unsafe_view: the reshape of a tensor nothing else sees (a fresh product or copy),
# so the result may share its memory without being an autograd view of it
_unsafe_view = defop("unsafe_view", "none", lambda xp, a, *, shape: a.reshape(shape),
                     lambda g, a_shape: (g.reshape(a_shape),), node_name="UnsafeViewBackward0")
# a dtype view reinterprets bytes: not differentiable (torch's result does not require grad)
_view_dtype = defop("view_dtype", "none", lambda xp, a, *, dtype: a.view(dtype.np), view=True)


def _infer_shape(shape, numel):
    """Resolve a single -1 and check that the element count matches."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return tuple(shape)  # nothing to resolve (the common case, ~3k instructions less)
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape "
                               f"{_fmt(shape)}")
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of {numel} elements into shape "
                               f"{_fmt(shape)} because the unspecified dimension size -1 can "
                               "be any value and is ambiguous")
        if numel % known:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


@export(function=False, method=True)
def view(self, *size, dtype=None):
    """Same memory, new shape; raises when the strides do not allow it (use reshape).
    `view(dtype)` reinterprets the bytes as another dtype."""
    if len(size) == 1 and isinstance(size[0], dt.dtype) and dtype is None:
        size, dtype = (), size[0]
    if dtype is not None:
        if size:
            raise TypeError("view() takes a size or a dtype, not both")
        return _view_as_dtype(self, dtype)
    return call_unary(_view, self, {"shape": _infer_shape(parse_size(size), self._data.size)})


def _view_as_dtype(self, dtype):
    """torch's rules for reinterpreting bytes: a different element size rescales the last dim,
    which must then be contiguous, and every other stride must stay a whole number."""
    old, new = self.dtype.itemsize, dtype.itemsize
    if old != new:
        what = f"view {dt.scalar_name(self.dtype)} as {dt.scalar_name(dtype)} (different " \
               "element sizes)"
        if self.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to {what}")
        if self.stride(-1) != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to {what}, but got {self.stride(-1)}")
        if new > old:
            ratio = new // old
            if self.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to {what}, but "
                                   f"got {self.shape[-1]}")
            if self.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to "
                                   f"{what}, but got {self.storage_offset()}")
            for d in range(self.ndim - 1):
                if self.stride(d) % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} to "
                                       f"{what}, but got {self.stride(d)}")
    return _view_dtype(self, dtype=dtype)


@export(method=True)
def reshape(input, *shape):
    """A view when the memory layout allows it, else a copy."""
    return _reshaped(input, _infer_shape(parse_size(shape), input.numel()))


def _reshaped(input, shape):
    """`input` in `shape` (a tuple of as many elements): a view where the strides allow it,
    else a copy."""
    try:
        return call_unary(_view, input, {"shape": shape})
    except RuntimeError:
        return _unsafe_view(input.clone(), shape=shape)


@export(function=False, method=True)
def view_as(self, other):
    """`self.view(other.shape)`: same memory in other's shape (raises where `view` would)."""
    return view(self, other.shape)


@export(function=False, method=True)
def reshape_as(self, other):
    """`self.reshape(other.shape)`: a view where the strides allow it, else a copy."""
    return reshape(self, other.shape)


# ----------------------------------------------------------------------------------------------
# transposes and permutations


def _transpose_rule(g, dim0, dim1):
    return (g.transpose(dim0, dim1),)


_transpose = defop("transpose", "none", lambda xp, a, *, dim0, dim1: xp.swapaxes(a, dim0, dim1),
                   _transpose_rule, view=True)


@export(method=True)
def transpose(input, dim0, dim1):
    """Swap dims `dim0` and `dim1` (negative dims count from the end): a view."""
    n = input.ndim
    return call_unary(_transpose, input, {"dim0": wrap_dim(dim0, n), "dim1": wrap_dim(dim1, n)})


export(transpose, name="swapdims", method=True)


@export(method=True)
def swapaxes(input, axis0, axis1):
    """NumPy's name for transpose (its parameters are axis0 and axis1)."""
    return transpose(input, axis0, axis1)


@export(method=True)
def t(input):
    """Transpose a tensor of at most 2 dims (a view of it also for 0-d and 1-d)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return _t(input)


_t = defop("t", "none", lambda xp, a: a.T, lambda g: (g.t(),), view=True, node_name="TBackward0")


@export(method=True)
def adjoint(input):
    """The conjugate transpose of a batch of matrices (real tensors: `mT`)."""
    return _matrix_transpose(input, "adjoint()").conj()


_permute = defop("permute", "none", lambda xp, a, *, dims: xp.transpose(a, dims),
                 lambda g, dims: (g.permute(_inverse(dims)),), view=True)


def _inverse(dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return tuple(inverse)


@export(method=True)
def permute(input, *dims):
    """Reorder the dims so that result dim i is input dim `dims[i]`: a view.
    `dims` is given as separate ints or one sequence and must name every dim once."""
    dims = parse_size(dims, "dims")
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    dims = tuple([wrap_dim(d, n) for d in dims])
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return call_unary(_permute, input, {"dims": dims})


@export(method=True)
def movedim(input, source, destination):
    """Move dims `source` to positions `destination`; the others keep their order."""
    source = tuple(source) if isinstance(source, (list, tuple)) else (source,)
    destination = tuple(destination) if isinstance(destination, (list, tuple)) \
        else (destination,)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({list(source)} dims) should contain the same number of dims as "
                           f"destination ({list(destination)} dims)")
    n = input.ndim
    src = [wrap_dim(d, n) for d in source]
    dst = [wrap_dim(d, n) for d in destination]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    order = [None] * n
    for s, d in zip(src, dst):
        if n:  # a 0-d tensor accepts dim 0 (or -1) and stays as it is
            order[d] = s
    rest = iter(d for d in range(n) if d not in src)
    order = tuple(next(rest) if d is None else d for d in order)
    return _permute(input, dims=order)


export(movedim, name="moveaxis", method=True)


# the properties T, mT, H, mH (bound in _tensor_methods.py)

def reversed_dims(self):
    """`x.T`: all dims reversed; torch deprecates it for ndim != 2 and warns."""
    if self.ndim == 0:
        warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                      "these cases.", UserWarning, stacklevel=2)
    elif self.ndim != 2:
        warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their "
                      "shape is deprecated and it will throw an error in a future release. "
                      "Consider `x.mT` to transpose batches of matrices or `x.permute(*range("
                      "x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                      UserWarning, stacklevel=2)
    return _permute(self, dims=tuple(range(self.ndim - 1, -1, -1)))


def _matrix_transpose(self, name):
    """The last two dims swapped; 0-d tensors pass through with a warning, 1-d fail."""
    if self.ndim == 0:
        label = "adjoint()" if name == "adjoint()" else "Tensor." + name
        warnings.warn(f"{label} is deprecated on 0-D tensors; it returns the tensor unchanged.",
                      UserWarning, stacklevel=3)
        return _permute(self, dims=())
    if self.ndim == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                           f"matrices. Got 1-D tensor.")
    return _transpose(self, dim0=self.ndim - 2, dim1=self.ndim - 1)


def matrix_transpose(self):
    """`x.mT`."""
    return _matrix_transpose(self, "mT")


def matrix_adjoint(self):
    """`x.mH`: the conjugate transpose of a batch of matrices (`mT` for real tensors)."""
    return _matrix_transpose(self, "mH").conj()


def adjoint_2d(self):
    """`x.H`: a matrix's conjugate transpose; batches must use `mH`."""
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return _permute(self, dims=()).conj()
    if self.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return _transpose(self, dim0=0, dim1=1).conj()


# ----------------------------------------------------------------------------------------------
# expand and broadcasting


def _expand_kernel(xp, a, *, shape):
    if a.shape == shape:
        return a[...]
    if a.ndim == 0 and xp is np:
        # the backward of every whole-tensor reduction: the view made directly (every stride
        # 0), where np.broadcast_to builds an iterator in Python (callgrind, with the call:
        # 7.6k against 25k instructions, a third of a tiny sum's backward; issue 22)
        out = np.ndarray(shape, a.dtype, a, 0, (0,) * len(shape))
        out.setflags(write=False)  # elements share memory: torch refuses writes
        return out
    strides = _expand_strides(a.shape, a.strides, shape)
    if xp is np and a.flags.c_contiguous:
        # likewise from a contiguous array's buffer (a (4, 1) mask to (4, 4): the whole
        # `expand` 68k -> 45k instructions)
        out = np.ndarray(shape, a.dtype, a, 0, strides)
        out.setflags(write=False)
        return out
    out = xp.broadcast_to(a, shape)  # read-only: elements share memory (torch refuses writes)
    if out.strides == strides:
        return out
    return _strided_view(xp, a, shape, strides)


_expand = defop("expand", "none", _expand_kernel,
                lambda g, a_shape: (g.sum_to_size(a_shape),), view=True)


@export(function=False, method=True)
def expand(self, *size, implicit=False):
    """Broadcast to `size` without copying (-1 keeps a dim); elements share memory.
    (`implicit` only marks expansions the JIT inserted; it changes nothing.)"""
    sizes = parse_size(size)
    if len(sizes) < self.ndim:
        raise RuntimeError(f"expand(ember.{dt.scalar_name(self.dtype)}Tensor{{"
                           f"{list(self.shape)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({self.ndim})")
    lead = len(sizes) - self.ndim
    shape = list(sizes)
    have = self._data.shape  # (NumPy's tuple: `self.shape` would make a Size per read)
    for i, want in enumerate(sizes):
        if i < lead:
            if want < 0:
                raise RuntimeError(f"The expanded size of the tensor ({want}) isn't allowed in "
                                   f"a leading, non-existing dimension {i}")
            continue
        n = have[i - lead]
        if want == -1:
            shape[i] = n
        elif n != want and (n != 1 or want < 0):
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                               f"existing size ({n}) at non-singleton dimension {i}.  "
                               f"Target sizes: {list(sizes)}.  Tensor sizes: {list(self.shape)}")
    return call_unary(_expand, self, {"shape": tuple(shape)})


@export(function=False, method=True)
def expand_as(self, other):
    """`self.expand(other.shape)`: a broadcast view in other's shape."""
    return expand(self, other.shape)


@export(method=True)
def broadcast_to(input, size):
    """Broadcast `input` to `size` without copying (-1 keeps a dim), as `expand` does."""
    return expand(input, size)


@export
def broadcast_shapes(*shapes):
    """The shape every argument broadcasts to (ints count as 1-d shapes)."""
    result = []
    for index, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if len(shape) > len(result):
            result = [1] * (len(shape) - len(result)) + result
        for k in range(1, len(shape) + 1):
            n, have = shape[-k], result[-k]
            if n != have and n != 1 and have != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at -{k}!"
                                   f" Mismatching argument at index {index} had {shape}; but "
                                   f"expected shape should be broadcastable to {result}")
            if have == 1:
                result[-k] = n
    return Size(result)


@export
def broadcast_tensors(*tensors):
    """Every tensor expanded (a view) to their common shape."""
    from ._dispatch import broadcast_error

    tensors = _tensors(tensors, "broadcast_tensors")
    try:
        shape = broadcast_shapes(*(t.shape for t in tensors))
    except RuntimeError:
        raise RuntimeError(broadcast_error([t.shape for t in tensors])) from None
    return tuple(_expand(t, shape=tuple(shape)) for t in tensors)


# ----------------------------------------------------------------------------------------------
# squeeze and unsqueeze


def _unsqueeze_kernel(xp, a, *, dim):
    # torch keeps every stride and gives the new dim the span of the dim it is inserted before
    # (1 at the end). NumPy's reshape agrees for the usual contiguous array (and is fast), but
    # may renumber the strides of size-1 dims.
    stride = a.shape[dim] * a.strides[dim] if dim < a.ndim else a.itemsize
    strides = a.strides[:dim] + (stride,) + a.strides[dim:]
    shape = a.shape[:dim] + (1,) + a.shape[dim:]
    if a.flags.c_contiguous:
        out = a.reshape(shape)  # never a copy for a contiguous array
        if out.strides == strides:
            return out
    return _strided_view(xp, a, shape, strides)


_unsqueeze = defop("unsqueeze", "none", _unsqueeze_kernel,
                   lambda g, dim: (g.squeeze(dim),), view=True)


@export(method=True)
def unsqueeze(input, dim):
    """Insert a size-1 dim at position `dim` (in -input.dim()-1 .. input.dim()): a view."""
    return call_unary(_unsqueeze, input, {"dim": wrap_dim(dim, input._data.ndim + 1)})


def _squeeze_kernel(xp, a, *, dims):
    return xp.squeeze(a, dims)


def _squeeze_rule(g, a_shape):
    return (g.reshape(a_shape),)


# torch names the node after the overload: squeeze(), squeeze(int), squeeze(tuple of ints)
_squeeze = defop("squeeze", "none", _squeeze_kernel, _squeeze_rule, view=True)
_squeeze_dim = defop("squeeze_dim", "none", _squeeze_kernel, _squeeze_rule, view=True,
                     node_name="SqueezeBackward1")
_squeeze_dims = defop("squeeze_dims", "none", _squeeze_kernel, _squeeze_rule, view=True,
                      node_name="SqueezeBackward2")


@export(method=True)
def squeeze(input, dim=None):
    """Drop size-1 dims (all of them, or those among `dim` that have size 1)."""
    shape = input._data.shape
    if dim is None:
        dims = tuple(i for i, n in enumerate(shape) if n == 1)
        return call_unary(_squeeze, input, {"dims": dims})
    dims = tuple(d for d in wrap_dims(dim, len(shape)) if shape[d] == 1)
    op = _squeeze_dims if isinstance(dim, (tuple, list)) else _squeeze_dim
    return call_unary(op, input, {"dims": dims})


def _at_least(ndim, t):
    """torch's atleast_Nd for one tensor: 0-d becomes all ones; 1-d (n) becomes (1, n) or
    (1, n, 1); 2-d (m, n) becomes (m, n, 1)."""
    if t.ndim >= ndim:
        return t
    if t.ndim == 0:
        return reshape(t, (1,) * ndim)
    if t.ndim == 1 and ndim >= 2:
        t = unsqueeze(t, 0)
    return t if t.ndim == ndim else unsqueeze(t, -1)


def _at_least_fn(ndim):
    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return _at_least(ndim, tensors[0])
        return tuple(_at_least(ndim, t) for t in _tensors(tensors, f"atleast_{ndim}d"))
    atleast.__name__ = f"atleast_{ndim}d"
    atleast.__doc__ = f"The tensor(s) with at least {ndim} dims (views)."
    return atleast


atleast_1d = export(_at_least_fn(1))
atleast_2d = export(_at_least_fn(2))
atleast_3d = export(_at_least_fn(3))


# ----------------------------------------------------------------------------------------------
# flatten


@export(method=True)
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one (a view when the layout allows it)."""
    shape = input._data.shape  # (NumPy's tuple: `input.shape` would make a Size per read)
    if not shape:
        return _reshaped(input, (1,))
    start, end = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input  # torch returns the tensor itself
    return _reshaped(input, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


@export(method=True)
def unflatten(input, dim, sizes):
    """Split dim `dim` into `sizes` (one may be -1): a view."""
    dim = wrap_dim(dim, input.ndim)
    sizes = parse_size((sizes,))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[dim]
    try:
        sizes = _infer_shape(sizes, n)
    except RuntimeError as e:
        if "ambiguous" in str(e):
            raise
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({n}) in the input tensor") from None
    shape = input.shape
    return view(input, tuple(shape[:dim]) + sizes + tuple(shape[dim + 1:]))


@export(method=True)
def ravel(input):
    """The elements as a 1-d tensor: a view of a contiguous tensor, else a copy."""
    return view(input.contiguous(), -1)


# ----------------------------------------------------------------------------------------------
# slicing views: narrow, select, split, unbind, diagonal, unfold, as_strided
#
# Their backward is `view_scatter`: zeros of the input's shape with each gradient written into
# the region the view op selects. It is written once for every such op by running the view's
# own kernel on the zeros; its backward is the view op again.


def _view_scatter_kernel(xp, *grads, shape, view, attrs):
    # split's pieces tile its input (their sizes add up to the dim), so every element is
    # written below and the zero fill, a pass over the whole input, can be skipped
    out = (xp.empty if view is _split else xp.zeros)(shape, dtype=grads[0].dtype)
    regions = view.kernel(xp, out, **attrs)
    if type(regions) is not tuple:
        regions = (regions,)
    for region, g in zip(regions, grads):
        region[...] = g
    return out


def _view_scatter_rule(g, view, attrs):
    out = view(g, **attrs)
    return out if type(out) is tuple else (out,)


_view_scatter = defop("view_scatter", "none", _view_scatter_kernel, _view_scatter_rule)


def _scatter_back(view, g, a_shape, **attrs):
    """The rule of a view op that picks elements of its input (each at most once)."""
    grads = g if type(g) is tuple else (g,)
    return (_view_scatter(*grads, shape=a_shape, view=view, attrs=attrs),)


def _dim_index(dim, index):
    return (slice(None),) * dim + (index, Ellipsis)


def _slice_kernel(xp, a, *, dim, start, stop, step=1):
    return a[_dim_index(dim, slice(start, stop, step))]


_slice = defop("slice", "none", _slice_kernel,
               lambda g, a_shape, dim, start, stop, step: _scatter_back(
                   _slice, g, a_shape, dim=dim, start=start, stop=stop, step=step),
               view=True)
_select = defop("select", "none", lambda xp, a, *, dim, index: a[_dim_index(dim, index)],
                lambda g, a_shape, dim, index: _scatter_back(_select, g, a_shape, dim=dim,
                                                             index=index),
                view=True)


def _split_kernel(xp, a, *, dim, bounds):
    return tuple(a[_dim_index(dim, slice(start, stop))] for start, stop in bounds)


def _split_rule(g, a_shape, dim, bounds):
    # both split ops scatter back through `_split` (see _view_scatter_kernel)
    return _scatter_back(_split, g, a_shape, dim=dim, bounds=bounds)


_split = defop("split", "none", _split_kernel, _split_rule, view=True,
               node_name="SplitWithSizesBackward0")
# split(int) and chunk: the same op under the node name torch gives that overload
_split_even = defop("split_even", "none", _split_kernel, _split_rule, view=True,
                    node_name="SplitBackward0")


def _need_dims(input, name):
    if input.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")


@export(method=True)
def narrow(input, dim, start, length):
    """`length` elements of dim `dim` from `start` (which may be negative): a view."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, input.ndim)
    start, length = operator.index(start), operator.index(length)
    n = input.shape[dim]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return call_unary(_slice, input, {"dim": dim, "start": start, "stop": start + length})


@export(method=True)
def select(input, dim, index):
    """The slice at `index` along `dim`, with that dim removed: a view."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, input.ndim)
    index = operator.index(index)
    n = input.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return call_unary(_select, input, {"dim": dim, "index": index + n if index < 0 else index})


@export(method=True)
def narrow_copy(input, dim, start, length):
    """`narrow`, copied."""
    return narrow(input, dim, start, length).clone()


def _pieces(input, dim, sizes, op=_split):
    """Consecutive pieces of the given sizes along `dim` (views)."""
    bounds, start = [], 0
    for size in sizes:
        bounds.append((start, start + size))
        start += size
    return op(input, dim=dim, bounds=tuple(bounds))


@export(method=True)
def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    """Pieces of `split_size` along `dim` (the last may be smaller), or of the given sizes.
    (torch's method names the sizes `split_size`, its function `split_size_or_sections`.)"""
    split_size_or_sections = _one_spec("split", split_size_or_sections, split_size=split_size)
    _need_dims(tensor, "split")
    dim = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [operator.index(s) for s in split_size_or_sections]
        if builtins.any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                               f"entries, but got split_sizes={sizes}")
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
        return _pieces(tensor, dim, sizes)
    size = operator.index(split_size_or_sections)
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    count = builtins.max(-(-n // size), 1) if size else 1
    return _pieces(tensor, dim, [size] * (count - 1) + [n - size * (count - 1)], _split_even)


@export(method=True)
def split_with_sizes(input, split_sizes, dim=0):
    """`split` with a list of sizes."""
    return split(input, list(split_sizes), dim)


@export(method=True)
def chunk(input, chunks, dim=0):
    """At most `chunks` pieces of equal size (the last may be smaller) along `dim`."""
    _need_dims(input, "chunk")
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    if n == 0:
        return _pieces(input, dim, [0] * chunks)
    return split(input, -(-n // chunks), dim)


@export(method=True)
def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """`sections` near-equal pieces (the first n % sections one longer), or the pieces between
    `indices` (Python slicing rules: negative indices count from the end)."""
    indices_or_sections = _one_spec("tensor_split", indices_or_sections, sections=sections,
                                    indices=indices,
                                    tensor_indices_or_sections=tensor_indices_or_sections)
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec.dtype.is_floating_point or spec.dtype is dt.bool:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                               f"integer dtype, but got {spec.dtype}")
        if spec.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec.ndim} dims")
        spec = spec.item() if spec.ndim == 0 else spec.tolist()
    if not isinstance(spec, (list, tuple)):
        sections = operator.index(spec)
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(n, sections)
        edges = [0]
        for k in range(sections):
            edges.append(edges[-1] + size + (k < extra))
    else:
        edges = [0] + [operator.index(i) for i in spec] + [n]
    # one slice per piece, not one multi-output op: torch allows in-place writes into these
    pieces = []
    for lo, hi in zip(edges, edges[1:]):
        start, stop, _ = slice(lo, hi).indices(n)
        pieces.append(_slice(input, dim=dim, start=start, stop=builtins.max(start, stop)))
    return tuple(pieces)


def _one_spec(name, positional, **by_keyword):
    """The one argument given, positionally or under one of the names torch's overloads give
    it (`sections=`, `indices=`, ...)."""
    given = [value for value in (positional, *by_keyword.values()) if value is not None]
    if len(given) != 1:
        names = ", ".join(by_keyword)
        raise TypeError(f"{name}() takes exactly one of its positional argument, {names}; got "
                        f"{len(given)}")
    return given[0]


def _split_along(name, dim, min_dims):
    """hsplit / vsplit / dsplit: tensor_split along `dim`; sections must divide evenly."""
    def fn(input, indices_or_sections=None, *, sections=None, indices=None):
        indices_or_sections = _one_spec(name, indices_or_sections, sections=sections,
                                        indices=indices)
        if input.ndim < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {input.ndim} dimensions!")
        d = 0 if name == "hsplit" and input.ndim == 1 else dim
        if not isinstance(indices_or_sections, (list, tuple)):
            sections = operator.index(indices_or_sections)
            if sections == 0 or input.shape[d] % sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {input.shape[d]} is not "
                                   f"divisible by the split_size {sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = name
    fn.__doc__ = f"tensor_split along dim {dim}, as NumPy's {name}."
    return export(fn, method=True)


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def _unbind_kernel(xp, a, *, dim):
    return tuple(a[_dim_index(dim, i)] for i in range(a.shape[dim]))


_unbind = defop("unbind", "none", _unbind_kernel, lambda g, dim: (stack(g, dim),), view=True)


@export(method=True)
def unbind(input, dim=0):
    """The slices along `dim`, as views."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return _unbind(input, dim=wrap_dim(dim, input.ndim))


def _diagonal_kernel(xp, a, *, offset, dim1, dim2):
    """Entries (i, i + offset) of dims (dim1, dim2), as a new last dim: one stride walks both
    dims at once (stride1 + stride2), starting offset columns right (or rows down)."""
    n1, n2 = a.shape[dim1], a.shape[dim2]
    length = builtins.max(0, builtins.min(n1 + builtins.min(offset, 0),
                                          n2 - builtins.max(offset, 0)))
    s1, s2 = a.strides[dim1], a.strides[dim2]
    start = builtins.max(offset, 0) * s2 + builtins.max(-offset, 0) * s1 if length else 0
    keep = [d for d in range(a.ndim) if d != dim1 and d != dim2]
    shape = tuple(a.shape[d] for d in keep) + (length,)
    strides = tuple(a.strides[d] for d in keep) + (s1 + s2,)
    return _strided_view(xp, a, shape, strides, start)


_diagonal = defop("diagonal", "none", _diagonal_kernel,
                  lambda g, a_shape, offset, dim1, dim2: _scatter_back(
                      _diagonal, g, a_shape, offset=offset, dim1=dim1, dim2=dim2),
                  view=True)


def _diagonal_dims(ndim, dim1, dim2):
    dim1, dim2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dim1, dim2


@export(method=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims (dim1, dim2) as the last dim: a view."""
    dim1, dim2 = _diagonal_dims(input.ndim, dim1, dim2)
    return _diagonal(input, offset=operator.index(offset), dim1=dim1, dim2=dim2)


def _unfold_kernel(xp, a, *, dim, size, step):
    if a.ndim == 0:
        return _strided_view(xp, a, (size,), (a.itemsize,))
    count = (a.shape[dim] - size) // step + 1
    stride = a.strides[dim]
    shape = a.shape[:dim] + (count,) + a.shape[dim + 1:] + (size,)
    strides = a.strides[:dim] + (stride * step,) + a.strides[dim + 1:] + (stride,)
    return _strided_view(xp, a, shape, strides)


def _unfold_backward_kernel(xp, g, *, shape, dim, size, step):
    """Windows may overlap (step < size): add window position k of every window at once."""
    out = xp.zeros(shape, dtype=g.dtype)
    if not shape:
        out[...] = g.sum(dtype=g.dtype)
        return out
    count = g.shape[dim]
    for k in range(size):
        out[_dim_index(dim, slice(k, k + (count - 1) * step + 1, step))] += g[..., k]
    return out


_unfold_backward = defop("unfold_backward", "none", _unfold_backward_kernel,
                         lambda g, dim, size, step: (_unfold(g, dim=dim, size=size, step=step),))
_unfold = defop("unfold", "none", _unfold_kernel,
                lambda g, a_shape, dim, size, step: (_unfold_backward(
                    g, shape=a_shape, dim=dim, size=size, step=step),),
                view=True)


@export(name="unfold", function=False, method=True)
def unfold(self, dimension, size, step):
    """Every window of `size` elements along `dimension`, `step` apart, as a new last dim:
    a view (windows overlap when step < size)."""
    dim = wrap_dim(dimension, self.ndim)
    n = self.shape[dim] if self.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _unfold(self, dim=dim, size=size, step=step)


def _positions(xp, shape, strides, offset):
    """The storage position (in elements) of every element of a strided layout."""
    pos = xp.full(shape, offset, dtype=xp.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        pos += (xp.arange(n, dtype=xp.int64) * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos


def _strided_grad_kernel(xp, g, *, src, dst, divide_src):
    """Move values between two strided layouts of one storage: each (shape, strides, offset).

    Every element of `g` (laid out as `src`) is added to its storage position; each element of
    the result (laid out as `dst`) reads its position. When several result elements share a
    position the value is split evenly between them (torch divides by that count, so the
    gradient of an input that overlaps itself is not counted twice); `divide_src` applies the
    same split on the source side instead, which makes the op its own adjoint with src and dst
    swapped."""
    src_pos, dst_pos = _positions(xp, *src), _positions(xp, *dst)
    every = xp.concatenate([src_pos.ravel(), dst_pos.ravel(), xp.zeros(1, dtype=xp.int64)])
    low, high = int(every.min()), int(every.max())
    src_pos, dst_pos = (src_pos - low).ravel(), dst_pos - low
    values = g.ravel().astype(xp.float64)
    if divide_src:
        values = values / xp.bincount(src_pos, minlength=high - low + 1)[src_pos]
    storage = xp.bincount(src_pos, weights=values, minlength=high - low + 1)
    out = storage[dst_pos]
    if not divide_src:
        counts = xp.bincount(dst_pos.ravel(), minlength=high - low + 1)[dst_pos]
        out = out / counts
    return out.astype(g.dtype)


_strided_grad = defop("as_strided_backward", "none", _strided_grad_kernel,
                      lambda g, src, dst, divide_src: (_strided_grad(
                          g, src=dst, dst=src, divide_src=not divide_src),))


def _as_strided_kernel(xp, a, *, size, stride, offset, input_stride):
    """`input_stride` (a's strides in elements) is for the rule only: the gradient is laid out
    like the input, and the node should not keep the input alive just to read its strides."""
    return _strided_view(xp, a, size, tuple(s * a.itemsize for s in stride),
                         offset * a.itemsize)


_as_strided = defop("as_strided", "none", _as_strided_kernel,
                    lambda g, a_shape, size, stride, offset, input_stride: (_strided_grad(
                        g, src=(size, stride, offset), dst=(a_shape, input_stride, 0),
                        divide_src=False),),
                    view=True)


def _relative_offset(input, size, stride, storage_offset):
    """`storage_offset` as an element offset from input's first element, after torch's checks
    that the requested layout lies inside the storage."""
    from .._storage import span_of

    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if builtins.any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(size)}: {list(size)}")
    root = input if input._base is None else input._base
    storage = span_of(root._data)
    own = (_address(input._data) - _address(storage)) // input.itemsize if storage.size else 0
    if storage_offset is None:
        storage_offset = own
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    numel = 1
    for n in size:
        numel *= n
    if numel == 0:
        return 0
    needed = storage_offset + 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage.size:
        item = input.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset}, and itemsize {item} requiring a storage "
                           f"size of {needed * item} are out of bounds for storage of size "
                           f"{storage.size * item}")
    return storage_offset - own


@export(method=True)
def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage with any sizes and strides (in elements), from
    `storage_offset` (default: input's own). Elements may overlap."""
    size, stride = parse_size((size,)), parse_size((stride,), "stride")
    offset = _relative_offset(input, size, stride, storage_offset)
    return _as_strided(input, size=size, stride=stride, offset=offset,
                       input_stride=input.stride())


# the *_scatter functions: a copy of input with `src` written where the view looks (torch's
# functional form of an in-place write through a view; autograd goes through CopySlices)


def _scatter_into(input, src, view):
    out = input.clone()
    region = view(out)
    if tuple(region.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(region.shape)}")
    region.copy_(src)
    return out


@export(method=True)
def select_scatter(input, src, dim, index):
    """A copy of `input` with `src` written into `input.select(dim, index)`.
    `src` must have that slice's shape (input's without `dim`). Gradients flow to both."""
    return _scatter_into(input, src, lambda t: select(t, dim, index))


@export(method=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of `input` with `src` written into the slice `start:end:step` of dim `dim`.
    `src` must have that slice's shape; `step` must be positive."""
    dim = wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, stop, _ = slice(start, end).indices(input.shape[dim])
    return _scatter_into(input, src, lambda t: _slice(t, dim=dim, start=start,
                                                      stop=builtins.max(start, stop), step=step))


@export(method=True)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of `input` with `src` written onto `input.diagonal(offset, dim1, dim2)`.
    `src` must have that diagonal's shape (input's without dim1 and dim2, plus its length last)."""
    return _scatter_into(input, src, lambda t: diagonal(t, offset, dim1, dim2))



# ----------------------------------------------------------------------------------------------
# joining: cat and stack


def _legacy_empty(shape):
    """torch.cat still skips 1-d empty tensors whatever the other shapes (old behaviour)."""
    return len(shape) == 1 and shape[0] == 0


def _cat_kernel(xp, *arrays, dim):
    kept = [a for a in arrays if a.size or a.ndim != 1] or arrays[:1]  # as _legacy_empty
    shape = list(kept[0].shape)
    shape[dim] = builtins.sum([a.shape[dim] for a in kept])
    out = xp.empty(shape, dtype=kept[0].dtype)  # contiguous whatever the inputs' layouts
    return xp.concatenate(kept, axis=dim, out=out)


def _cat_rule(g, shapes, dim):
    sizes = [s[dim] for s in shapes if not _legacy_empty(s)]
    pieces = iter(_pieces(g, dim, sizes) if sizes else ())
    return tuple(g.new_zeros((0,)) if _legacy_empty(s) else next(pieces) for s in shapes)


_cat = defop("cat", "arith", _cat_kernel, _cat_rule)


@export
def cat(tensors, dim=0):
    """Join tensors along an existing dim; dtypes promote as in arithmetic."""
    tensors = _tensors((tuple(tensors),), "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    shapes = [t._data.shape for t in tensors]  # NumPy's tuples: no Size made per read
    ref = next((s for s in shapes if not _legacy_empty(s)), shapes[0])
    if not all(shapes):  # a 0-d tensor's shape is ()
        i = next(i for i, s in enumerate(shapes) if not s)
        raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                           "concatenated")
    dim = 0 if _legacy_empty(ref) else wrap_dim(dim, len(ref))  # all empty: torch ignores dim
    for i, shape in enumerate(shapes):
        if shape == ref or _legacy_empty(shape) or len(shape) == len(ref) and \
                shape[:dim] == ref[:dim] and shape[dim + 1:] == ref[dim + 1:]:
            continue
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} "
                               f"and {len(shape)}")
        d = next(d for d in range(len(ref)) if d != dim and shape[d] != ref[d])
        raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                           f"Expected size {ref[d]} but got size {shape[d]} for tensor "
                           f"number {i} in the list.")
    return _cat(*tensors, dim=dim)


@export
def concat(tensors, dim=0):
    """Another name for `cat`: join tensors along an existing dim."""
    return cat(tensors, dim)


@export
def concatenate(tensors, dim=0):
    """NumPy's name for cat (torch takes `axis=` for `dim=` here too)."""
    return cat(tensors, dim)


def _stack_kernel(xp, *arrays, dim):
    shape = list(arrays[0].shape)
    shape.insert(dim, len(arrays))
    out = xp.empty(shape, dtype=arrays[0].dtype)
    if dim < arrays[0].ndim:
        # the new dim and the one after it, merged, are the inputs' dim concatenated: one
        # concatenate, without np.stack's Python pass that makes a new view of every input
        # (`ember.stack` of 64 tensors of 4: 563k -> 260k instructions, callgrind)
        xp.concatenate(arrays, axis=dim, out=out.reshape(
            shape[:dim] + [shape[dim] * shape[dim + 1]] + shape[dim + 2:]))
        return out
    return xp.stack(arrays, axis=dim, out=out)


_stack = defop("stack", "arith", _stack_kernel, lambda g, dim: tuple(g.unbind(dim)))


@export
def stack(tensors, dim=0):
    """Join equally shaped tensors along a new dim."""
    tensors = _tensors((tuple(tensors),), "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape  # NumPy's tuples: no Size made per tensor (as cat)
    for i, t in enumerate(tensors):
        if t._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t._data.shape)} at entry "
                               f"{i}")
    return _stack(*tensors, dim=wrap_dim(dim, len(shape) + 1))


def _nonempty(tensors, name):
    tensors = _tensors((tuple(tensors),), name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@export
def hstack(tensors):
    """Along dim 1 (dim 0 for 1-d tensors)."""
    tensors = [_at_least(1, t) for t in _nonempty(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@export
def vstack(tensors):
    """Along dim 0, 1-d tensors as rows."""
    return cat([_at_least(2, t) for t in _nonempty(tensors, "vstack")], 0)


export(vstack, name="row_stack")


@export
def dstack(tensors):
    """Along dim 2 (depth), after atleast_3d."""
    return cat([_at_least(3, t) for t in _nonempty(tensors, "dstack")], 2)


@export
def column_stack(tensors):
    """0-d and 1-d tensors as columns, joined along dim 1."""
    tensors = _nonempty(tensors, "column_stack")
    return cat([reshape(t, t.numel(), 1) if t.ndim <= 1 else t for t in tensors], 1)


# ----------------------------------------------------------------------------------------------
# copies: repeat, repeat_interleave, flip, roll, rot90, tril/triu, diag, meshgrid


def _repeat_rule(g, a_shape, repeats):
    """Output dim k holds repeats[k] copies of input dim k: view it as (copies, size) pairs and
    sum the copies."""
    padded = (1,) * (len(repeats) - len(a_shape)) + tuple(a_shape)
    pairs = [n for r, s in zip(repeats, padded) for n in (r, s)]
    copies = tuple(range(0, len(pairs), 2))
    return (g.reshape(pairs).sum(copies).reshape(a_shape),)


# repeat, roll, tril and triu give contiguous results, as torch's do (NumPy would keep a
# transposed input's layout, and a later view() would then fail where torch's works)
_repeat = defop("repeat", "none",
                lambda xp, a, *, repeats: _c_order(xp.tile(a, repeats)), _repeat_rule)


@export(function=False, method=True)
def repeat(self, *repeats):
    """Tile the tensor `repeats[k]` times along dim k (leading ones add new dims): a copy."""
    sizes = parse_size(repeats)
    if len(sizes) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = (1,) * (len(sizes) - self.ndim) + tuple(self.shape)
    shape = [n * r for n, r in zip(padded, sizes)]
    if builtins.any(r < 0 for r in sizes):
        bad = builtins.min(shape)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    return _repeat(self, repeats=sizes)


@export(method=True)
def tile(input, dims):
    """`repeat`, with missing leading counts taken as 1."""
    dims = parse_size((dims,))
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _repeat_interleave_backward_kernel(xp, g, *, repeats, dim, size):
    """Sum each run of repeated copies back into its source element."""
    if isinstance(repeats, int):
        runs = g.reshape(g.shape[:dim] + (size, repeats) + g.shape[dim + 1:])
        return runs.sum(axis=dim + 1, dtype=g.dtype)
    out = xp.zeros(g.shape[:dim] + (size,) + g.shape[dim + 1:], dtype=g.dtype)
    owner = xp.repeat(xp.arange(size), repeats)
    xp.add.at(out, (slice(None),) * dim + (owner,), g)
    return out


_repeat_interleave_backward = defop(
    "repeat_interleave_backward", "none", _repeat_interleave_backward_kernel,
    lambda g, repeats, dim: (_repeat_interleave(g, repeats=repeats, dim=dim),))
_repeat_interleave = defop(
    "repeat_interleave", "none", lambda xp, a, *, repeats, dim: xp.repeat(a, repeats, axis=dim),
    lambda g, a_shape, repeats, dim: (_repeat_interleave_backward(
        g, repeats=repeats, dim=dim, size=a_shape[dim]),))


def _repeat_counts(repeats, n):
    """repeats as an int or a tuple of n non-negative ints, checked as torch does."""
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if repeats.dtype.is_floating_point or repeats.dtype is dt.bool:
            raise RuntimeError("repeats has to be Long or Int tensor")
        if repeats.ndim == 1 and repeats.numel() != 1:
            counts = tuple(repeats.tolist())
            if builtins.any(c < 0 for c in counts):
                raise RuntimeError("repeats can not be negative")
            if len(counts) != n:
                raise RuntimeError(f"repeats must have the same size as input along dim, but "
                                   f"got repeats.size(0) = {len(counts)} and input.size(0) = "
                                   f"{n}")
            return counts
        repeats = repeats.item()
    repeats = operator.index(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    return repeats


@export(method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (or slice along `dim`) `repeats` times, next to itself. With only
    a tensor of counts: `arange(len(counts))` repeated by them."""
    if repeats is None:
        from .._creation import arange

        return repeat_interleave(arange(input.numel(), device=input.device), input)
    if dim is None:
        input, dim = reshape(input, -1), 0
    elif input.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"{dim + 1 if dim >= 0 else dim})")
    else:
        dim = wrap_dim(dim, input.ndim)
    n = input.shape[dim]
    counts = _repeat_counts(repeats, n)
    total = counts * n if isinstance(counts, int) else builtins.sum(counts)
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got "
                           f"{output_size}")
    return _repeat_interleave(input, repeats=counts, dim=dim)


# flip copies (torch's flip is not a view); order "K" keeps the input's layout, as torch does
_flip = defop("flip", "none", lambda xp, a, *, dims: xp.flip(a, dims).copy(order="K"),
              lambda g, dims: (_flip(g, dims=dims),))


@export(method=True)
def flip(input, *args, dims=None):
    """Reverse the order of elements along `dims` (given positionally or as dims=): a copy."""
    if dims is not None and args:
        raise TypeError("flip() got multiple values for argument 'dims'")
    dims = args if dims is None else (dims,)
    return _flip(input, dims=wrap_dims(parse_size(dims, "dims"), input.ndim))


@export(method=True)
def fliplr(input):
    """Reverse the order along dim 1 (left/right) of a tensor of at least 2 dims: a copy."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, dims=(1,))


@export(method=True)
def flipud(input):
    """Reverse the order along dim 0 (up/down) of a tensor of at least 1 dim: a copy."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, dims=(0,))


_roll = defop("roll", "none",
              lambda xp, a, *, shifts, dims: _c_order(xp.roll(a, shifts, dims)),
              lambda g, shifts, dims: (_roll(g, shifts=tuple(-s for s in shifts), dims=dims),))


@export(method=True)
def roll(input, shifts, dims=None):
    """Shift elements cyclically along `dims` (of the flattened tensor when None): a copy."""
    shifts = parse_size((shifts,), "shifts") if isinstance(shifts, (list, tuple)) \
        else (operator.index(shifts),)
    if dims is not None:
        dims = parse_size((dims,), "dims") if isinstance(dims, (list, tuple)) else (dims,)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None and len(shifts) != 1 or dims is not None and len(dims) != len(shifts):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{0 if dims is None else len(dims)}")
    if dims is None:
        return _roll(input, shifts=shifts, dims=None)
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return _roll(input, shifts=shifts, dims=tuple(wrap_dim(d, input.ndim) for d in dims))


@export(method=True)
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees k times, from the first dim of `dims` towards the second."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(_flip(input, dims=(d1,)), d0, d1)
    if k == 2:
        return _flip(input, dims=tuple(sorted((d0, d1))))
    if k == 3:
        return transpose(_flip(input, dims=(d0,)), d0, d1)
    return input.clone()


def _triangle(name, kernel, side):
    """tril / triu: keep one triangle of the last two dims (a copy), zero the rest."""
    triangle = defop(name, "none",
                     lambda xp, a, *, diagonal: _c_order(kernel(xp)(a, diagonal)),
                     lambda g, diagonal: (triangle(g, diagonal=diagonal),),
                     jvp=LINEAR, batch=batch_rules.leading)

    def check(input):
        if input.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")

    def fn(input, diagonal=0):
        check(input)
        return triangle(input, diagonal=operator.index(diagonal))

    def fn_(self, diagonal=0):
        check(self)
        return triangle.inplace(self, diagonal=operator.index(diagonal))

    fn.__name__, fn_.__name__ = name, name + "_"
    fn.__doc__ = (f"Keep the elements on and {side} diagonal `diagonal` of the last two dims "
                  "(0: the main one, > 0 above it, < 0 below it), zero the rest: a copy.")
    fn_.__doc__ = f"In-place version of `{name}`."
    export(fn, method=True)
    export(fn_, function=False, method=True)
    return fn


tril = _triangle("tril", lambda xp: xp.tril, "below")
triu = _triangle("triu", lambda xp: xp.triu, "above")


def _diag_embed_kernel(xp, a, *, offset, dim1, dim2):
    n = a.shape[-1] + abs(offset)
    shape = list(a.shape[:-1])
    for d in sorted((dim1, dim2)):
        shape.insert(d, n)
    out = xp.zeros(shape, dtype=a.dtype)
    _diagonal_kernel(xp, out, offset=offset, dim1=dim1, dim2=dim2)[...] = a
    return out


_diag_embed = defop("diag_embed", "none", _diag_embed_kernel,
                    lambda g, offset, dim1, dim2: (diagonal(g, offset, dim1, dim2),))


@export(method=True)
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices (in dims dim1, dim2 of the result) whose `offset` diagonal is input's last dim."""
    dim1, dim2 = _diagonal_dims(input.ndim + 1, dim1, dim2)
    return _diag_embed(input, offset=operator.index(offset), dim1=dim1, dim2=dim2)


@export(method=True)
def diag(input, diagonal=0):
    """A 1-d tensor -> the square matrix with it on diagonal `diagonal`; a matrix -> a copy
    of that diagonal."""
    if input.ndim == 1:
        return _diag_embed(input, offset=operator.index(diagonal), dim1=0, dim2=1)
    if input.ndim == 2:
        return _diagonal(input, offset=operator.index(diagonal), dim1=0, dim2=1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


@export(method=True)
def diagflat(input, offset=0):
    """The flattened input on diagonal `offset` of a square matrix."""
    return _diag_embed(reshape(input, -1), offset=operator.index(offset), dim1=0, dim2=1)


@export
def meshgrid(*tensors, indexing=None):
    """Coordinate grids (expanded views): output k varies along dim k ('ij'). 'xy' (NumPy's
    default) swaps the roles of the first two inputs: the grids are (len(y), len(x), ...)."""
    tensors = _tensors(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tensors[2:]
    shape = tuple(t.numel() for t in tensors)
    grids = []
    for k, t in enumerate(tensors):
        along = tuple(-1 if d == k else 1 for d in range(len(tensors)))
        grids.append(expand(view(t, along), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# ----------------------------------------------------------------------------------------------
# in-place view ops: the tensor itself takes the view's layout (t_, squeeze_, ...)


def _become(self, view):
    """Make `self` the view `view` of its old self: new layout, new history. Torch counts the
    metadata change as a write, so values saved for backward are caught as stale."""
    from ..autograd import grad_mode

    if grad_mode.state.grad_enabled and self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    self._data = view._data
    if view._batch_level:  # a BatchedTensor (vmap): its batch takes the new layout too
        self._value = view._value
    self._vc.value += 1
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
        self._output_nr = 0
    if self._base is not None:  # still a view of the same base, by the longer recipe
        self._view_fn = view._view_fn
        self._view_of_fn = view._view_of_fn
    return self


@export(function=False, method=True)
def transpose_(self, dim0, dim1):
    """In place: self becomes its transpose of `dim0` and `dim1` (same memory, new strides)."""
    return _become(self, transpose(self, dim0, dim1))


export(transpose_, name="swapdims_", function=False, method=True)


@export(function=False, method=True)
def swapaxes_(self, axis0, axis1):
    """In place: self becomes its transpose of axis0 and axis1."""
    return transpose_(self, axis0, axis1)


@export(function=False, method=True)
def t_(self):
    """In place: self (at most 2 dims) becomes its transpose."""
    return _become(self, t(self))


@export(function=False, method=True)
def squeeze_(self, dim=None):
    """In place: drop size-1 dims from self (all of them, or those among `dim`)."""
    return _become(self, squeeze(self, dim))


@export(function=False, method=True)
def unsqueeze_(self, dim):
    """In place: insert a size-1 dim into self at position `dim`."""
    return _become(self, unsqueeze(self, dim))


@export(function=False, method=True)
def as_strided_(self, size, stride, storage_offset=None):
    """In place: self takes the sizes, strides and storage offset given, over the same storage."""
    return _become(self, as_strided(self, size, stride, storage_offset))


# ----------------------------------------------------------------------------------------------
# block_diag, cartesian_prod, combinations: new tensors assembled from views and cat, so they
# differentiate for free


@export
def block_diag(*tensors):
    """The inputs (0-d as 1x1, 1-d as a row) along the diagonal of one matrix, zeros elsewhere;
    the dtype is their promoted one."""
    blocks = []
    for k, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {k} has {t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        from .._creation import empty

        return empty((1, 0))
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = dt.promote_types(dtype, b.dtype)
    width = builtins.sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        right = width - left - b.shape[1]
        zeros = [b.new_zeros((b.shape[0], n), dtype=dtype) for n in (left, right)]
        rows.append(cat([zeros[0], b.to(dtype), zeros[1]], 1))
        left += b.shape[1]
    return cat(rows, 0)


def _vector(name, t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


@export
def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D input, as rows (itertools.product's
    order); a single input comes back as it is."""
    for t in tensors:
        _vector("cartesian_prod", t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@export
def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of a 1-D input's elements, as rows (itertools' order)."""
    import itertools

    from .._creation import tensor

    _vector("combinations", input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    choose = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    if r == 0:  # an empty vector outside the graph, as torch's
        return input.detach().new_empty((0,))
    index = list(choose(range(input.shape[0]), r))
    index = tensor(index, dtype=dt.int64, device=input.device).reshape(len(index), r)
    return input[index]  # indexing, even when empty, so the result stays in the graph


# ----------------------------------------------------------------------------------------------
# the *_copy functions (a view's values in new memory: torch's functional forms of views),
# unsafe_split and friends (split without the view bookkeeping torch skips; here the same),
# as_strided_scatter


def _copy_of(view_fn, name):
    def copy(input, *args, **kwargs):
        result = view_fn(input, *args, **kwargs)
        if isinstance(result, tuple):
            return tuple(r.clone() for r in result)
        return result.clone()
    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"torch.{name}: {view_fn.__name__}() of input, copied into new memory."
    return copy


def _slice_view(input, dim=0, start=None, end=None, step=1):
    """input[start:end:step] along `dim` (what torch.slice_copy copies)."""
    dim = wrap_dim(dim, input.ndim)
    index = [builtins.slice(None)] * input.ndim
    index[dim] = builtins.slice(start, end, step)
    return input[tuple(index)]


def _expand_view(input, size, *, implicit=False):
    return expand(input, size)


def _detach_view(input):
    """(torch 2.13's detach_copy result claims to require grad, with no backward; ember's
    does not.)"""
    return input.detach()


def _alias_view(input):
    return input.view(input.shape)


def _view_or_reshape(input, *shape):
    """view_copy's shape: what view would give, for any strides (the copy needs no view)."""
    if len(shape) == 1 and isinstance(shape[0], dt.dtype):
        return view(input, shape[0])
    return reshape(input, *shape)


for _name, _view_fn in (
        ("alias_copy", _alias_view), ("as_strided_copy", as_strided),
        ("detach_copy", _detach_view), ("diagonal_copy", diagonal),
        ("expand_copy", _expand_view), ("permute_copy", permute), ("select_copy", select),
        ("slice_copy", _slice_view), ("split_copy", split),
        ("split_with_sizes_copy", split_with_sizes), ("squeeze_copy", squeeze),
        ("t_copy", t), ("transpose_copy", transpose), ("unbind_copy", unbind),
        ("unfold_copy", unfold), ("unsqueeze_copy", unsqueeze), ("view_copy", _view_or_reshape)):
    export(_copy_of(_view_fn, _name), name=_name)


@export(method=True)
def unsafe_split(input, split_size, dim=0):
    """split under torch's parameter names for unsafe_split (torch skips a view check; the
    pieces are the same)."""
    return split(input, split_size, dim)


export(chunk, name="unsafe_chunk", method=True)
export(split_with_sizes, name="unsafe_split_with_sizes", method=True)


@export(method=True)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with `src` written where as_strided(size, stride, storage_offset)
    looks."""
    return _scatter_into(input, src, lambda t: as_strided(t, size, stride, storage_offset))
# forward mode and vmap (see ops/_op.py). Every op here is linear in its tensor input: its
# tangent is the op applied to the tangent. Batching: ops that name dims shift them past the
# batch dim; ops that take a shape get the batch size in front.


def _t_batch(op, values, batched, attrs):
    a = values[0]
    return _transpose(a, dim0=1, dim1=2) if a.ndim == 3 else _view(a, shape=tuple(a.shape))


def _permute_batch(op, values, batched, attrs):
    return _permute(values[0], dims=(0,) + batch_rules.shift(attrs["dims"]))


def _expand_batch(op, values, batched, attrs):
    shape = attrs["shape"]
    a = batch_rules.pad(values[0], len(shape))
    return _expand(a, shape=(a.shape[0],) + tuple(shape))


def _repeat_batch(op, values, batched, attrs):
    repeats = attrs["repeats"]
    return _repeat(batch_rules.pad(values[0], len(repeats)), repeats=(1,) + tuple(repeats))


def _roll_batch(op, values, batched, attrs):
    a, dims = values[0], attrs["dims"]
    if dims is not None:
        return _roll(a, shifts=attrs["shifts"], dims=batch_rules.shift(dims))
    flat = reshape(a, a.shape[0], -1)
    return reshape(_roll(flat, shifts=attrs["shifts"], dims=(1,)), a.shape)


def _view_scatter_batch(op, values, batched, attrs):
    """Gradients written into a batched buffer where the view's batching rule says."""
    view = attrs["view"]
    size = batch_rules.size_of(values, batched)
    if not isinstance(view.batch_rule, (batch_rules.dims, batch_rules.sizes)):
        from .._functorch.vmap import per_sample

        return per_sample(op, values, batched, attrs)
    return _view_scatter(*batch_rules.all_batched(values, batched),
                         shape=(size,) + tuple(attrs["shape"]), view=view,
                         attrs=view.batch_rule.translate(attrs["attrs"], size))


def _joined_jvp(op):
    """cat / stack: the tangents joined as the inputs were, zeros for inputs without one
    (integer inputs too: their values are not part of the tangent), in the result's dtype."""
    def rule(tangents, inputs, out, dim):
        return op(*(t if t is not None else x.new_zeros(x.shape, dtype=out.dtype)
                    for t, x in zip(tangents, inputs)), dim=dim)
    return rule


for _op in (_view, _transpose, _t, _permute, _expand, _unsqueeze, _squeeze, _squeeze_dim,
            _squeeze_dims, _view_scatter, _slice, _select, _split, _split_even, _unbind,
            _diagonal, _unfold_backward, _unfold, _strided_grad, _as_strided, _repeat,
            _repeat_interleave_backward, _repeat_interleave, _flip, _roll, _diag_embed,
            _unsafe_view):
    _op.jvp(LINEAR)
_cat.jvp(_joined_jvp(_cat))
_stack.jvp(_joined_jvp(_stack))
for _op in (_unsqueeze, _slice, _select, _split, _split_even, _unbind, _unfold, _cat, _stack,
            _repeat_interleave, _repeat_interleave_backward):
    _op.batch(batch_rules.dims("dim"))
for _op in (_squeeze, _squeeze_dim, _squeeze_dims, _flip):
    _op.batch(batch_rules.dims("dims"))
_view.batch(batch_rules.sizes("shape"))
_unsafe_view.batch(batch_rules.sizes("shape"))
_view_dtype.batch(batch_rules.leading)
_transpose.batch(batch_rules.dims("dim0", "dim1"))
_t.batch(_t_batch)
_permute.batch(_permute_batch)
_expand.batch(_expand_batch)
_view_scatter.batch(_view_scatter_batch)
_diagonal.batch(batch_rules.dims("dim1", "dim2"))
_diag_embed.batch(batch_rules.dims("dim1", "dim2"))
_unfold_backward.batch(batch_rules.sizes("shape", dims=("dim",)))
_repeat.batch(_repeat_batch)
_roll.batch(_roll_batch)
del _op

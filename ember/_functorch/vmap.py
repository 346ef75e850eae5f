"""vmap: run a function written for one sample on a whole batch, op by op.

    vmap(f)(x)        # x: (B, ...); f sees one sample of shape (...); result (B, ...)

Inside the call, a batched argument is a `BatchedTensor`: it *looks* like one sample (its
shape, dtype and strides are a sample's, so every function's argument checks and dim
arithmetic work unchanged) and holds the whole batch in `_value`, batch dim first. Each op on
it comes to `VmapLevel.process` (see levels.py), which passes the values to the op's batching
rule (`@op.batch`, ops/_op.py; the shared ones are in batch_rules.py): the rule runs the op
once on the whole batch -- `add` by aligning the sample dims, `sum(dim=1)` as `sum(dim=2)`,
`matmul` as a batched matmul -- and the results come back wrapped. An op without a rule runs
once per sample (`per_sample`), counted in `FALLBACKS` so the tests can list those ops.

What is not an op cannot see the batch: its `_data` is one sample's view, marked so that
reading its values raises (`_SampleData`) instead of silently using the first sample; `.item()`
and data-dependent control flow raise torch's errors.

Autograd composes in either order, because a node is recorded wherever an op's arguments
require grad: `grad(vmap(f))` records the batched ops on the values (beneath vmap), and
`vmap(grad(f))` makes the BatchedTensor itself the leaf, so the graph is recorded on
BatchedTensors and the backward rules run as batched ops -- per-sample gradients.

Nested vmaps are levels over levels: an inner BatchedTensor's value is an outer one.
`randomness=` ('error', 'same', 'different') says what random functions do inside.

Read next: `batch_rules.py`, then `eager_transforms.py`.
"""
import collections
import contextlib
import functools

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.graph import record
from ..utils._pytree import broadcast_prefix, tree_flatten, tree_unflatten
from . import levels

__all__ = ["vmap", "BatchedTensor", "VmapLevel", "FALLBACKS"]

FALLBACKS = collections.Counter()  # op name -> calls that ran once per sample (no batch rule)
_grad = grad_mode.state
_new = object.__new__
_RANDOMNESS = ("error", "different", "same")


class _SampleData(np.ndarray):
    """The `_data` of a BatchedTensor: a view of its first sample, for the code that reads a
    tensor's shape, dtype or strides. Its values stand for one sample of many, so computing
    with them raises -- code that reads values outside the ops does not support vmap -- save
    for a reduction of the whole array to one number (`int(index.min())`, a range check),
    which is answered for all the samples together (`_batch` is the whole batch)."""

    _batch = None

    def __array_finalize__(self, obj):
        self._batch = None  # a view of a sample view is not one sample of `_batch`

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "reduce" and ufunc in _WHOLE and kwargs.get("axis") is None \
                and len(inputs) == 1 and self._batch is not None and "out" not in kwargs:
            return getattr(ufunc, method)(self._batch, axis=None, **_without(kwargs, "axis"))
        raise _values_read()

    def __array_function__(self, func, types, args, kwargs):
        if func in _METADATA:
            return func._implementation(*args, **kwargs)
        if func in _WHOLE_FUNCTIONS and len(args) == 1 and kwargs.get("axis") is None \
                and self._batch is not None:
            return func(self._batch, **kwargs)
        raise _values_read()

    def __getitem__(self, key):
        raise _values_read()

    def __setitem__(self, key, value):
        raise _values_read()

    def _refuse(self, *args, **kwargs):
        raise _values_read()

    item = tolist = copy = astype = tobytes = fill = __iter__ = _refuse
    __bool__ = __float__ = __int__ = __index__ = __complex__ = _refuse


_METADATA = {np.shape, np.ndim, np.size, np.result_type}
_WHOLE = {np.minimum, np.maximum, np.logical_or, np.logical_and}
_WHOLE_FUNCTIONS = {np.min, np.max, np.amin, np.amax, np.any, np.all}


def _values_read():
    return RuntimeError("vmap: this function reads the values of a batched tensor outside ember's "
                        "ops (for example to check them, or through NumPy), which vmap does not "
                        "support yet; call it outside vmap, or per sample")


def _without(kwargs, name):
    return {k: v for k, v in kwargs.items() if k != name}


def _sample_view(array):
    """A view of sample 0 of a batch array (a fresh empty array for an empty batch)."""
    if array.shape[0] == 0:
        return _empty_sample(array)
    if isinstance(array, np.ndarray):
        sample = np.ndarray.__getitem__(array, (0, Ellipsis)).view(_SampleData)
        sample._batch = array
        return sample
    return array[0, ...]  # CuPy arrays: no guard


def _empty_sample(array):
    empty = np.empty if isinstance(array, np.ndarray) else type(array)
    if empty is np.empty:
        return np.empty(array.shape[1:], array.dtype).view(_SampleData)
    import cupy

    return cupy.empty(array.shape[1:], array.dtype)


class BatchedTensor(Tensor):
    """A tensor inside `vmap`: one sample as seen by the function, the whole batch in
    `_value` (batch dim first) as seen by the ops. See the module docstring."""

    __slots__ = ("_value", "_batch_level")

    def __repr__(self, *, tensor_contents=None):
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._batch_level}, bdim=0, value=\n    {inner}\n)"

    __str__ = __repr__

    def item(self):
        """Refused inside vmap, as torch does."""
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't "
                           "support vmap over calling .item() on a Tensor, please try to "
                           "rewrite what you're doing with other operations.")

    def _python_scalar(self):
        return self.item()

    def __bool__(self):
        raise RuntimeError("vmap: It looks like you're attempting to use a Tensor in some "
                           "data-dependent control flow. We don't support that yet, please "
                           "rewrite it without branching on tensor values.")

    def _no_data(self, *args, **kwargs):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage "
                           "(a batched tensor inside vmap)")

    tolist = numpy = __array__ = data_ptr = untyped_storage = _no_data

    @property
    def requires_grad(self):
        return self._requires_grad or self._value.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def detach(self):
        """Detached at every level: the batched value is detached too."""
        return batched(self._value.detach(), self._batch_level)

    @property
    def data(self):
        return self.detach()

    @data.setter
    def data(self, new):
        raise RuntimeError("vmap: assigning .data of a batched tensor is not supported")

    def __deepcopy__(self, memo):
        raise RuntimeError("vmap: a batched tensor cannot be copied with copy.deepcopy")

    def __reduce_ex__(self, protocol):
        raise RuntimeError("vmap: a batched tensor cannot be pickled or saved")


def batched(value, level_index):
    """Wrap `value` (batch dim first) as a BatchedTensor of level `level_index`."""
    t = _new(BatchedTensor)
    t._value = value
    t._batch_level = level_index
    t._data = _sample_view(value._data)
    t._dtype = value._dtype
    t._device = value._device
    t._vc = value._vc  # in-place writes to the value change the batched tensor's version
    t._base = None
    t._grad_fn = None
    t._output_nr = 0
    t._requires_grad = False
    return t


def fresh_leaf(t):
    """A new BatchedTensor on the same value that autograd can treat as a leaf of its own
    (func.grad's inputs): the value keeps its own history beneath."""
    leaf = batched(t._value, t._batch_level)
    if t._tangents:
        leaf._tangents = dict(t._tangents)
    return leaf


# ----------------------------------------------------------------------------------------------
# the level


class VmapLevel(levels.Level):
    """An active vmap: the batch size and what random functions do."""

    def __init__(self, size, randomness):
        self.size = size
        self.randomness = randomness
        self.untracked = set()  # ids of unbatched leaves only a transform inside wants grads of

    def process(self, op, args, attrs, target):
        if target is not None:
            return self._inplace(op, target, args, attrs)
        values, flags = self._unwrap(args)
        _keep_logical_promotion(op, args, values, flags)
        with levels.below(self):
            result = run_rule(op, values, flags, attrs)
        multi = type(result) is tuple
        outputs = tuple(batched(r, self.index) for r in (result if multi else (result,)))
        if op.view:
            _mark_views(op, args[0], attrs, outputs)
        if _grad.grad_enabled and op.rule is not None and _any_requires_grad(args):
            record(op, args, attrs, outputs, multi)
        return outputs if multi else outputs[0]

    def _unwrap(self, args):
        index = self.index
        values = []
        flags = []
        for x in args:
            mine = isinstance(x, Tensor) and x._batch_level == index
            if mine:
                x = x._value
            elif self.untracked and isinstance(x, Tensor) and id(x) in self.untracked:
                x = _without_history(x)
            values.append(x)
            flags.append(mine)
        return values, tuple(flags)

    def _inplace(self, op, target, args, attrs):
        """`target.op_(*args)`: the batching rule's out-of-place result written into the
        target's value; a batched argument cannot be written into an unbatched target."""
        values, flags = self._unwrap((target,) + args)
        _keep_logical_promotion(op, (target,) + args, values, flags)
        if not flags[0]:
            raise RuntimeError(f"vmap: {op.name}_(self, *extra_args) is not possible because "
                               "there exists a Tensor `other` in extra_args that has more "
                               "elements than `self`. This happened due to `other` being "
                               "vmapped over but `self` not being vmapped over in a vmap. "
                               "Please try to use out-of-place operators instead of inplace "
                               "operators.")
        recording = _grad.grad_enabled and op.rule is not None and _any_requires_grad(
            (target,) + args)
        if recording:
            _check_inplace_recordable(target)
        with levels.below(self):
            result = run_rule(op, values, flags, attrs)
            if op.promote not in ("none", "same") and not dt.can_cast(result.dtype,
                                                                       target.dtype):
                raise RuntimeError(f"result type {dt.scalar_name(result.dtype)} can't be cast "
                                   f"to the desired output type {dt.scalar_name(target.dtype)}")
            old = values[0].clone() if recording else None
            values[0].copy_(result)
        if recording:
            _record_inplace(op, target, batched(old, self.index), args, attrs)
        return target


def _keep_logical_promotion(op, args, values, flags):
    """A sample that is 0-d is a weak operand in promotion (float32 + a 0-d float64 stays
    float32), but its batch is not 0-d: such batches are cast to the dtype the samples
    compute in, so the rule promotes as each sample would."""
    if op.promote in ("none", "same") or not any(
            f and a._data.ndim == 0 for a, f in zip(args, flags)):
        return
    from ..ops._dispatch import _promotion

    compute = _promotion(op.promote, args)[0]
    for k, (a, f) in enumerate(zip(args, flags)):
        if f and a._data.ndim == 0 and a._dtype is not compute:
            values[k] = values[k].to(compute)


def _without_history(t):
    alias = t.detach()
    if t._tangents:
        alias._tangents = dict(t._tangents)
    return alias


@contextlib.contextmanager
def untracked_in_vmaps(tensors):
    """While the block runs, the active vmaps give their batching rules detached aliases of
    these unbatched leaves: only a transform inside the vmaps (func.grad) differentiates with
    respect to them, on the graph recorded on the BatchedTensors, so recording the batched
    values' graph too would be wasted work."""
    ids = {id(t) for t in tensors
           if not isinstance(t, BatchedTensor) and t.grad_fn is None and t._requires_grad}
    vmaps = [lv for lv in levels.active.values() if isinstance(lv, VmapLevel)]
    for level in vmaps:
        level.untracked |= ids
    try:
        yield
    finally:
        for level in vmaps:
            level.untracked -= ids


def _any_requires_grad(args):
    return any(isinstance(x, Tensor) and x._requires_grad for x in args)


def _mark_views(op, source, attrs, outputs):
    from ..ops._dispatch import _mark_views as mark

    mark(op, source, attrs, outputs)


def _check_inplace_recordable(target):
    from ..ops._dispatch import _check_inplace_allowed

    _check_inplace_allowed(target)
    if target._base is not None and target._view_fn is not None:
        raise NotImplementedError("vmap: an in-place operation on a view of a batched tensor "
                                  "that requires grad is not supported; clone() it first")


def _record_inplace(op, target, old, args, attrs):
    """The target's new history, as dispatch_inplace gives it: `op(old target, *args)`."""
    old._grad_fn = target._grad_fn
    old._output_nr = target._output_nr
    old._requires_grad = target._requires_grad
    if old._requires_grad and old._grad_fn is None:
        old._grad_acc = target._grad_acc
    record(op, (old,) + args, attrs, (target,))


def run_rule(op, values, flags, attrs):
    """The op on the batch: its batching rule, else once per sample."""
    rule = op.batch_rule
    if rule is None:
        return per_sample(op, values, flags, attrs)
    return rule(op, values, flags, attrs)


def per_sample(op, values, flags, attrs):
    """The fallback: run the op on each sample and stack the results (counted)."""
    from ..ops.shape import stack

    FALLBACKS[op.name] += 1
    size = next(v.shape[0] for v, f in zip(values, flags) if f)
    if size == 0:
        raise NotImplementedError(f"vmap over an empty batch: {op.name} has no batching rule")
    results = [op(*[v.select(0, k) if f else v for v, f in zip(values, flags)], **attrs)
               for k in range(size)]
    if type(results[0]) is tuple:
        return tuple(stack([r[i] for r in results]) for i in range(len(results[0])))
    return stack(results)


def all_samples(t):
    """The tensor holding every sample of `t` (t itself outside vmap), for library code whose
    one check over all samples gives each sample the right answer (is there a NaN anywhere,
    so that the exact slower path must be taken)."""
    while isinstance(t, BatchedTensor):
        t = t._value
    return t


def level_of(t):
    """The active VmapLevel that batches `t`, or None."""
    level = levels.active.get(t._batch_level) if isinstance(t, Tensor) else None
    return level if isinstance(level, VmapLevel) else None


def innermost_vmap():
    """The innermost active (and not hidden) vmap level, or None."""
    found = [lv for i, lv in levels.active.items()
             if isinstance(lv, VmapLevel) and levels.visible(i)]
    return found[-1] if found else None


# ----------------------------------------------------------------------------------------------
# random functions under vmap


def random_function(fn):
    """Make a random function (rand, bernoulli, Tensor.uniform_, ...) follow the innermost
    vmap's `randomness`: 'error' refuses; 'same' gives every sample the same random numbers;
    'different' draws for each sample on its own. Outside vmap it is `fn` itself (one test)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not levels.active:
            return fn(*args, **kwargs)
        level = innermost_vmap()
        if level is None:
            return fn(*args, **kwargs)
        return level.random_call(wrapper, fn.__name__.endswith("_"), args, kwargs)
    return wrapper


def _random_call(self, fn, inplace, args, kwargs):
    """Run random function `fn` on this level's batch (see `random_function`)."""
    if self.randomness == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. "
                           "Please either use the 'same' or 'different' randomness flags on "
                           "vmap or perform the randomness operation out of vmap")
    mine = [isinstance(x, Tensor) and x._batch_level == self.index
            for x in tuple(args) + tuple(kwargs.values())]
    if inplace and self.randomness == "different" and not mine[0]:
        raise RuntimeError("vmap: Cannot ask for different inplace randomness on an unbatched "
                           "tensor. This will appear like same randomness. If this is "
                           "necessary for your usage, please file an issue with functorch.")
    if not any(mine) and self.randomness == "same":
        with levels.below(self):
            return fn(*args, **kwargs)
    return _random_per_sample(self, fn, inplace, args, kwargs)


def _random_per_sample(level, fn, inplace, args, kwargs):
    """Call `fn` once per sample (the same generator state each time for 'same') and stack."""
    from .._random import default_generator
    from ..ops.shape import stack

    generator = kwargs.get("generator") or default_generator
    state = generator.get_state() if level.randomness == "same" else None
    names = list(kwargs)
    results = []
    with levels.below(level):
        for k in range(level.size):
            if state is not None:
                generator.set_state(state)
            picked = [x._value.select(0, k) if isinstance(x, Tensor) and
                      x._batch_level == level.index else x
                      for x in tuple(args) + tuple(kwargs.values())]
            results.append(fn(*picked[:len(args)], **dict(zip(names, picked[len(args):]))))
    if inplace:
        return args[0]
    return batched(stack(results), level.index)


VmapLevel.random_call = _random_call


# ----------------------------------------------------------------------------------------------
# vmap itself


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.vmap: `func` mapped over dim `in_dims` of its (nested) tensor arguments; the
    results are stacked along `out_dims`. Keyword arguments are passed through unmapped."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _name(func):
    return getattr(func, "__name__", repr(func))


def _call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    leaves, spec = tree_flatten(args)
    dims = _in_dims(func, in_dims, args, leaves)
    size = _batch_size(leaves, dims)
    if chunk_size is not None and chunk_size < size:
        return _chunked(func, dims, out_dims, randomness, chunk_size, leaves, spec, size, kwargs)
    level = levels.enter(VmapLevel(size, randomness))
    try:
        inputs = [batched(x.movedim(d, 0), level.index) if d is not None else x
                  for x, d in zip(leaves, dims)]
        out = func(*tree_unflatten(inputs, spec), **kwargs)
    finally:
        levels.leave(level)
    return _outputs(func, out, out_dims, level, size)


def _in_dims(func, in_dims, args, leaves):
    """One in_dim (or None) per leaf of args, checked and made non-negative."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None or isinstance(in_dims,
                                                                                  bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         "to be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")

    def mismatch():
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure "
                         f"{tree_flatten(args)[1]}.")

    dims = broadcast_prefix(in_dims if isinstance(in_dims, tuple) else in_dims, args, mismatch)
    out = []
    for x, d in zip(leaves, dims):
        if d is not None:
            if not isinstance(x, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim="
                                 f"{d} for an input but the input is of type {type(x)}. We "
                                 "cannot vmap over non-Tensor arguments, please use None as the "
                                 "respective in_dim")
            if not isinstance(d, int) or not -x.ndim <= d < x.ndim:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim="
                                 f"{d} for some input, but that input is a Tensor of "
                                 f"dimensionality {x.ndim} so expected in_dim to satisfy "
                                 f"-{x.ndim} <= in_dim < {x.ndim}.")
            d %= x.ndim
        out.append(d)
    return out


def _batch_size(leaves, dims):
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _outputs(func, out, out_dims, level, size):
    """The function's results with the batch moved out of the BatchedTensors to `out_dims`."""
    leaves, spec = tree_flatten(out)
    name = _name(func)

    def mismatch():
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")

    dims = broadcast_prefix(out_dims, out, mismatch)
    if not leaves and out is None:
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                         f"{type(out)}. Did you mean to set out_dims= to None for output?")
    results = []
    for x, d in zip(leaves, dims):
        if not isinstance(x, Tensor):
            if d is None:
                results.append(x)
                continue
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(x)}. Did you mean to set out_dims= to None for output?")
        mine = x._batch_level == level.index
        if d is None:
            if mine:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            results.append(x)
            continue
        value = x._value if mine else x.expand((size,) + tuple(x.shape))
        results.append(value.movedim(0, d))
    return tree_unflatten(results, spec)


def _chunked(func, dims, out_dims, randomness, chunk_size, leaves, spec, size, kwargs):
    """vmap over `chunk_size` samples at a time; the results concatenated along out_dims."""
    from ..ops.shape import cat

    pieces = []
    for start in range(0, size, chunk_size):
        stop = min(start + chunk_size, size)
        chunk = [x.narrow(d, start, stop - start) if d is not None else x
                 for x, d in zip(leaves, dims)]
        inner = vmap(func, tree_unflatten(dims, spec), out_dims, randomness)
        pieces.append(tree_flatten(inner(*tree_unflatten(chunk, spec), **kwargs)))
    out_spec = pieces[0][1]
    out_dims_flat = broadcast_prefix(out_dims, tree_unflatten(pieces[0][0], out_spec),
                                     lambda: None)
    joined = []
    for i, d in enumerate(out_dims_flat):
        parts = [leaves_i[i] for leaves_i, _ in pieces]
        joined.append(parts[0] if d is None else cat(parts, d))
    return tree_unflatten(joined, out_spec)

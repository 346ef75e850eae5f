"""The hot path: run an Op on tensors.

    device check -> promotion -> kernel on raw arrays -> wrap results -> record a graph node

Every public math function ends here, so this file is kept short and fast: promotion results
are cached per (kind, operand types), and a node is only built when grad mode is on and some
input requires grad. One global test lets something else see every op first: `_observer`, the
innermost of a stack of observers (a profiler; vmap and forward-mode AD, ember/_functorch/),
each of which runs the op through the ones below it with `call_below`. The hottest public
functions (operators, elementwise math, sums, max/min, small products, common views, `x[i]`)
enter through `call_unary` / `call_binary` (clamp through `call_numbers`), which run the common
case -- CPU tensors of one dtype, no observer, no autocast -- without `call`'s passes over
`*args` and keywords. In-place ops
(`dispatch_inplace`) compute out of place, write the result into the target's memory, bump its
version counter and rebase its history (torch's `CopySlices` when the target is a view).

Kernels make inf and nan as torch's do, silently (`_numpy_errors.py` keeps NumPy from warning
about ember's kernels); where NumPy's error state is not ember's and warnings are errors, a
kernel that raised is rerun with NumPy's reports off -- free until it happens, where an
errstate around every kernel would cost a microsecond each.

Read next: `autograd/graph.py` (the node that gets recorded).
"""
import numpy as np

from .. import _dtype as dt
from .._backend import namespace
from .._device import CPU
from .._tensor import Tensor
from ..autograd import anomaly_mode as _anomaly
from ..autograd import grad_mode
from ..autograd.graph import ViewFn, compile_recorder, rebase_inplace, record

_grad = grad_mode.state
_make = Tensor._make
_new = object.__new__
_SCALAR_CATEGORY = {bool: dt.BOOL, int: dt.INTEGER, float: dt.FLOATING, complex: dt.COMPLEX,
                    np.bool_: dt.BOOL, np.float64: dt.FLOATING, np.float32: dt.FLOATING,
                    np.int64: dt.INTEGER, np.int32: dt.INTEGER, np.complex128: dt.COMPLEX,
                    np.complex64: dt.COMPLEX}
_promotions = {}  # (kind, operand signature) -> (compute dtype, output dtype)
_BOOL_NP = dt.bool.np
_FLOATING = dt.FLOATING
_NDARRAY = np.ndarray
dt.DEFAULT_DTYPE_CACHES.append(_promotions)  # entries depend on the default float dtype
_observer = None  # the innermost of `_observers`, or None (the one test on the hot path)
_observers = []   # profilers, FLOP counters (autograd/_instrument.py), transforms (_functorch)
_autocast = None  # set while an autocast region is on (amp/autocast_mode.py): casts inputs


def call(op, *args, **attrs):
    """`op(*args, **attrs)`: run `op` on tensors and Python scalars (this is `Op.__call__`)."""
    if _observer is not None:
        return _observer(op, args, attrs, None)
    if _autocast is not None:
        args = _autocast(op.name, args)
    # One pass over the operands gathers their raw arrays, their common device (0-d CPU tensors
    # may join any device), whether one wants grad, and whether promotion has its common case:
    # tensors of one dtype beside Python floats/ints only. (One loop, not three: the tiny-op
    # loop of issue 22 counted ~2k instructions an op in the separate passes.)
    arrays = []
    device = dtype = None
    wants_grad = mixed = numbers = False
    uniform = True
    for x in args:
        if isinstance(x, Tensor):
            arrays.append(x._data)
            if x._requires_grad:
                wants_grad = True
            if device is None:
                device = x._device
                dtype = x._dtype
            else:
                if x._device is not device:
                    mixed = True
                if x._dtype is not dtype:
                    uniform = False
        else:
            arrays.append(x)
            if type(x) is float or type(x) is int:
                numbers = True
            else:
                uniform = False
    if device is None:
        raise TypeError(f"{op.name}(): expected at least one Tensor argument")
    if mixed:
        device, args = _settle_devices(args)
        arrays = [x._data if isinstance(x, Tensor) else x for x in args]
    xp = np if device.type == "cpu" else namespace(device)

    # promotion and the kernel on raw arrays
    promote = op.promote
    if promote == "none":
        out_np = None
    elif promote == "same":
        out_np = dtype.np
    elif uniform and dtype.category >= dt.FLOATING:  # no cast, no promotion lookup
        if numbers:
            scalar = dtype.np.type
            arrays = [scalar(a) if type(a) is float or type(a) is int else a for a in arrays]
        out_np = _BOOL_NP if promote == "compare" else dtype.np
    else:
        compute, out_dtype = _promotion(promote, args)
        arrays = _as_arrays(args, compute.np)
        out_np = out_dtype.np
    if op.writes:
        arrays[0] = arrays[0].copy()
    try:
        # (without attributes, no keyword dict to copy: ~0.3k instructions an op)
        result = op.kernel(xp, *arrays, **attrs) if attrs else op.kernel(xp, *arrays)
    except ValueError as e:
        raise _explain(e, args) from None
    except RuntimeWarning:  # an inf or nan, with warnings as errors: torch is silent
        return quietly(call, op, *args, **attrs)
    if op.writes:
        result = arrays[0]
    elif op.moves:
        device = attrs["device"]
        xp = np if device.type == "cpu" else namespace(device)

    # wrap: NumPy hands back scalars for 0-d results, and its dtype choices are not torch's
    if type(result) is not tuple:  # one result (nearly every op): no tuple of outputs
        if type(result) is _NDARRAY and result.dtype is out_np:  # _wrap's common case, inline
            out = _make(result, False, None, 0, device)
        else:
            out = _wrap(result, out_np, device, xp)
        if op.view:
            _mark_views(op, args[0], attrs, (out,))
        if wants_grad and op.rule is not None and _grad.grad_enabled:
            (op.recorder or compile_recorder(op))(args, attrs, out)  # as graph.record
        return out
    outputs = tuple(_wrap(r, out_np, device, xp) for r in result)
    if op.view:
        _mark_views(op, args[0], attrs, outputs)
    if wants_grad and op.rule is not None and _grad.grad_enabled:
        record(op, args, attrs, outputs, True)
    return outputs


def call_unary(op, a, attrs=None):
    """`op(a, **attrs)` for an op of one tensor (elementwise ops, sums, views): `call`'s common
    case -- a CPU tensor, floating unless the op keeps its dtype or picks its own, no
    observer, no autocast -- without the generic passes over `*args` and the keywords;
    anything else goes to `call`. (16 elements, under no_grad: `x.exp()` 14.3k -> 10.0k
    instructions, `x.sum()` 25.9k -> 22.0k, `x.view(4, 4)` 39.2k -> 23.5k, callgrind.)"""
    if _observer is None and _autocast is None and isinstance(a, Tensor) and \
            a._device is CPU and (a._dtype.category >= _FLOATING or op.promote == "none"
                                  or op.promote == "same"):
        return _run_plain(op, a, None, a._requires_grad, a._data, None, attrs)
    if not isinstance(a, Tensor):
        raise not_a_tensor(op.name, a)
    return call(op, a, **attrs) if attrs else call(op, a)


def not_a_tensor(name, value):
    """torch's TypeError for a function of one tensor given something else (`exp(3)`)."""
    return TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                     f"{type(value).__name__}")


def call_binary(op, a, b):
    """`op(a, b)` for an elementwise op of a tensor and a tensor or Python number: `call`'s
    common case -- tensors of one floating dtype on the CPU, or one such tensor and a float or
    int, no observer, no autocast -- without the generic passes over `*args`; anything else
    goes to `call`. (16 elements under no_grad: `a * b` 16.2k -> 12.0k instructions, `a + 1.0`
    23.6k -> 15.4k, callgrind.)"""
    if _observer is None and _autocast is None and isinstance(a, Tensor) and \
            a._device is CPU and a._dtype.category >= _FLOATING:
        kind = type(b)
        if kind is float or kind is int:  # the number in a's dtype, as `call` makes it
            return _run_plain(op, a, b, a._requires_grad, a._data, a._dtype.np.type(b), None)
        if isinstance(b, Tensor) and b._dtype is a._dtype and b._device is CPU:
            return _run_plain(op, a, b, a._requires_grad or b._requires_grad, a._data, b._data,
                              None)
    return call(op, a, b)


def _run_plain(op, a, b, wants_grad, x, y, attrs):
    """The kernel on arrays x (and y, unless None), the result wrapped, a view marked and the
    node recorded, as `call` does for the operands `call_unary` / `call_binary` accept."""
    promote = op.promote
    out_np = _BOOL_NP if promote == "compare" else None if promote == "none" else a._dtype.np
    try:
        if attrs:
            result = op.kernel(np, x, **attrs)
        else:
            result = op.kernel(np, x) if y is None else op.kernel(np, x, y)
    except ValueError as e:
        raise _explain(e, (a, b)) from None
    except RuntimeWarning:  # an inf or nan, with warnings as errors: torch is silent
        args = (a,) if y is None else (a, b)
        return quietly(call, op, *args, **attrs) if attrs else quietly(call, op, *args)
    if type(result) is not _NDARRAY:  # NumPy's scalar for a 0-d result
        result = np.asarray(result)
    if result.dtype is out_np or out_np is None:
        out = _make(result, False, None, 0, CPU)
    else:
        out = _wrap(result, out_np, CPU, np)
    if op.view:
        _mark_views(op, a, attrs, (out,))
    if wants_grad and op.rule is not None and _grad.grad_enabled:
        (op.recorder or compile_recorder(op))((a,) if y is None else (a, b), attrs or {}, out)
    return out


def call_numbers(op, a, *numbers):
    """`op(a, *numbers)` for an op of one tensor and operands that are Python numbers or None
    (clamp's bounds): `call`'s common case -- a floating CPU tensor, float / int / None
    operands, no observer, no autocast -- with the numbers made scalars of a's dtype as `call`
    makes them, but without its passes over the operands (a None sends `call` to the
    promotion table); anything else goes to `call`. (16 elements under no_grad, the clamp op
    with two bounds 33.7k -> 26.1k instructions, with one 33.2k -> ~22k, callgrind.)"""
    if _observer is not None or _autocast is not None or not isinstance(a, Tensor) or \
            a._device is not CPU or a._dtype.category < _FLOATING:
        return call(op, a, *numbers)
    scalar = a._dtype.np.type
    values = []
    for v in numbers:
        kind = type(v)
        if kind is float or kind is int:
            values.append(scalar(v))
        elif v is None:
            values.append(None)
        else:
            return call(op, a, *numbers)
    try:
        result = op.kernel(np, a._data, *values)
    except ValueError as e:
        raise _explain(e, (a,) + numbers) from None
    except RuntimeWarning:  # an inf or nan, with warnings as errors: torch is silent
        return quietly(call, op, a, *numbers)
    out = _wrap(result, a._dtype.np, CPU, np)
    if a._requires_grad and op.rule is not None and _grad.grad_enabled:
        (op.recorder or compile_recorder(op))((a,) + numbers, {}, out)
    return out


def autocast_args(name, *tensors):
    """`tensors` as op `name` gets them inside an autocast region (unchanged outside one), for
    the public functions that check their operands' dtypes before the op runs (matmul,
    linear, conv, ...): there the casts must come before the checks."""
    if _autocast is None:
        return tensors
    return _autocast(name, tensors)


def add_observer(fn):
    """Let `fn(op, args, attrs, target)` see every op first (target: self of an in-place op)."""
    global _observer
    _observers.append(fn)
    _observer = fn


def remove_observer(fn):
    global _observer
    _observers.remove(fn)
    _observer = _observers[-1] if _observers else None


def call_below(fn, op, args, attrs, target=None):
    """Run the op as observer `fn` would pass it on: seen only by the observers below fn."""
    global _observer
    saved = _observer
    index = _observers.index(fn)
    _observer = _observers[index - 1] if index else None
    try:
        if target is None:
            return call(op, *args, **attrs)
        return dispatch_inplace(op, target, args, attrs)
    finally:
        _observer = saved


def _wrap(r, out_np, device, xp):
    if type(r) is not xp.ndarray:
        r = xp.asarray(r)
    if out_np is not None and r.dtype is not out_np and r.dtype != out_np:
        r = r.astype(out_np)
    return _make(r, False, None, 0, device)


def _settle_devices(args):
    """The device for tensors on more than one device, and the arguments to run on it. As in
    torch, a 0-d CPU tensor may join tensors on another device (it is moved there); any other
    mix is an error."""
    devices = {x._device for x in args if isinstance(x, Tensor)
               and not (x._device.type == "cpu" and x._data.ndim == 0)}
    if len(devices) > 1:
        raise _device_mix(*sorted(devices, key=str)[:2])
    if not devices:
        return CPU, args
    device = devices.pop()
    return device, tuple(x.to(device) if isinstance(x, Tensor) and x._device is not device
                         else x for x in args)


def _device_mix(a, b):
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {a} and {b}!")


def dispatch_inplace(op, self, args, attrs):
    """Run `op(self, *args)` and write the result into self's memory."""
    if _observer is not None:
        return _observer(op, args, attrs, self)
    inputs = (self,) + args
    recording = _grad.grad_enabled and op.rule is not None and _any_requires_grad(inputs)
    if _grad.grad_enabled:
        _check_inplace_allowed(self)
    if recording and self._base is not None and self._view_fn is not None:
        _check_not_multi_output_view(self._view_fn)
    device = self._device
    if any(isinstance(x, Tensor) and x._device is not device for x in args):
        settled, args = _settle_devices(inputs)
        if settled is not device:
            raise _device_mix(device, settled)
        args = args[1:]
        inputs = (self,) + args
    xp = np if device.type == "cpu" else namespace(device)
    if op.promote in ("none", "same"):
        arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    else:
        compute, out_dtype = _promotion(op.promote, inputs)
        if not dt.can_cast(out_dtype, self._dtype):
            raise RuntimeError(f"result type {dt.scalar_name(out_dtype)} can't be cast to the "
                               f"desired output type {dt.scalar_name(self._dtype)}")
        arrays = _as_arrays(inputs, compute.np)
    old = self._data.copy() if recording and _saves_first_input(op) else None
    if op.writes:
        _check_writeable(self._data)
        arrays[0] = self._data
    try:
        # a writer changes self's memory as it goes, so it may not be rerun: it runs quietly
        result = (quietly if op.writes else _run)(op.kernel, xp, *arrays, **attrs)
    except ValueError as e:
        raise _explain(e, inputs) from None
    except RuntimeWarning:  # an inf or nan, with warnings as errors: torch is silent
        result = quietly(op.kernel, xp, *arrays, **attrs)
    if not op.writes:
        try:
            _write(self, result)
        except RuntimeWarning:  # a cast of nan or inf into integers
            quietly(_write, self, result)
    self._vc.value += 1
    if _anomaly.enabled:
        _anomaly.remember_inplace(self, op)  # so a version-counter error can say where
    if recording:
        rebase_inplace(op, self, old, args, attrs)
    return self


# ----------------------------------------------------------------------------------------------
# steps


def _run(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def quietly(fn, *args, **kwargs):
    """fn(...) with NumPy's floating-point warnings off (torch returns inf and nan silently)."""
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


def _promotion(kind, args):
    """(compute dtype, output dtype) under promotion `kind`, cached per operand types."""
    key = [kind]
    for x in args:
        if isinstance(x, Tensor):
            key.append(x._dtype)
            key.append(x._data.ndim != 0)
        elif x is not None:
            key.append(type(x))
    key = tuple(key)
    hit = _promotions.get(key)
    if hit is None:
        hit = _promotions[key] = _promote(kind, args)
    return hit


def _promote(kind, args):
    dims, zeros, scalar_cat = [], [], None
    for x in args:
        if isinstance(x, Tensor):
            (dims if x._data.ndim else zeros).append(x._dtype)
        elif x is not None:
            cat = _scalar_category(x)
            scalar_cat = cat if scalar_cat is None else max(scalar_cat, cat)
    if kind == "same":
        first = (dims + zeros)[0]
        return first, first
    common = dt.result_dtype(dims, zeros, scalar_cat)
    if kind == "float" and common.category < dt.FLOATING:
        common = dt.get_default_dtype()
    return common, (dt.bool if kind == "compare" else common)


def _scalar_category(x):
    cat = _SCALAR_CATEGORY.get(type(x))
    if cat is None:
        if isinstance(x, (int, np.integer)):
            return dt.INTEGER
        if isinstance(x, (float, np.floating)):
            return dt.FLOATING
        if isinstance(x, (complex, np.complexfloating)):
            return dt.COMPLEX
        raise TypeError(f"expected a Tensor or a number, but got {type(x).__name__}")
    return cat


def _as_arrays(args, np_dtype):
    """Raw operands in the compute dtype: tensors cast only when needed, scalars made typed."""
    arrays = []
    for x in args:
        if isinstance(x, Tensor):
            a = x._data
            if a.dtype is not np_dtype and a.dtype != np_dtype:
                a = a.astype(np_dtype)
            arrays.append(a)
        elif x is None:
            arrays.append(None)
        else:
            try:
                arrays.append(np_dtype.type(x))
            except OverflowError:  # torch wraps out-of-range ints (uint8 < -1 compares to 255)
                arrays.append(np.array(x).astype(np_dtype)[()])  # [()]: a scalar, for CuPy
    return arrays


def _any_requires_grad(args):
    for x in args:
        if isinstance(x, Tensor) and x._requires_grad:
            return True
    return False


def _mark_views(op, source, attrs, outputs):
    """Outputs of a view op share `source`'s memory: same version counter, same base, and a
    recipe (`_view_fn`) to rebuild them from the base for in-place autograd. (The recipe is
    allocated with object.__new__ and its slots set here, not by calling ViewFn: a view of a
    4x4 tensor 27.1k -> 26.5k instructions, callgrind.)"""
    base = source._base
    if base is None:
        base, parent, replayable = source, None, _grad.grad_enabled
    else:  # a view made outside grad mode, or of such a view, cannot be replayed for autograd
        parent = source._view_fn
        replayable = _grad.grad_enabled and parent is not None
    try:  # the counter's slot, not the `_vc` property: ~1.5k instructions less a view
        counter = source._counter or source._vc  # (None: no counter yet; the property makes one)
    except AttributeError:  # a tensor not made by `_make`: the slot is unset
        counter = source._vc
    view_of_fn = base._grad_fn
    count = len(outputs)
    for i in range(count):
        out = outputs[i]
        out._counter = counter
        out._base = base
        out._view_of_fn = view_of_fn
        if replayable:
            recipe = out._view_fn = _new(ViewFn)
            recipe.op = op
            recipe.attrs = attrs
            recipe.parent = parent
            recipe.index = i
            recipe.num_outputs = count
        else:
            out._view_fn = None


def _check_inplace_allowed(self):
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = self._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _check_not_multi_output_view(fn):
    """torch refuses to record in-place writes into outputs of split/chunk/unbind (or views of
    them): one backward node serves all the outputs, so it cannot be rebased for one."""
    while fn is not None:
        if fn.num_outputs > 1:
            name = fn.op.node_name.replace("Backward0", "")
            raise RuntimeError(f"Output {fn.index} of {name} is a view and is being modified "
                               "inplace. This view is the output of a function that returns "
                               "multiple views. Such functions do not allow the output views to "
                               "be modified inplace. You should replace the inplace operation "
                               "by an out-of-place one.")
        fn = fn.parent


def _saves_first_input(op):
    return any(kind == "input" and index == 0 for kind, index in op.saves) or any(
        kind == "inputs" for kind, _ in op.saves)


def overlapping(shape, strides):
    """Whether two elements share memory: a stride of 0 over a dim longer than 1 (an expanded
    tensor), with no elements at all counting as no overlap."""
    return 0 not in shape and any(s == 0 and n > 1 for n, s in zip(shape, strides))


def _check_writeable(array):
    """Refuse writes into an expanded tensor: NumPy marks those read-only; CuPy has no such
    flag, so there the strides tell."""
    flag = getattr(array.flags, "writeable", None)
    read_only = not flag if flag is not None else overlapping(array.shape, array.strides)
    if read_only:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the "
            "operation.")


def _write(self, result):
    """Store `result` into self's memory (casting like torch's in-place ops)."""
    target = self._data
    if result.shape != target.shape and not _broadcasts_to(result.shape, target.shape):
        raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the broadcast "
                           f"shape {list(result.shape)}")
    _check_writeable(target)
    target[...] = result


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _explain(error, args):
    """Turn NumPy's broadcasting ValueError into torch's RuntimeError naming sizes and dim."""
    if "broadcast" not in str(error):
        return error
    shapes = [x._data.shape for x in args if isinstance(x, Tensor)]
    message = broadcast_error(shapes)
    return RuntimeError(message) if message else error


def broadcast_error(shapes):
    """torch's message for the first pair of shapes that do not broadcast, or None."""
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            for k in range(1, min(len(a), len(b)) + 1):
                if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                    dim = max(len(a), len(b)) - k
                    return (f"The size of tensor a ({a[-k]}) must match the size of tensor b "
                            f"({b[-k]}) at non-singleton dimension {dim}")
    return None

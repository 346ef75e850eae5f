"""User-defined autograd functions: `Function`, its `ctx`, and `once_differentiable`.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):            # runs with grad mode off, on ember Tensors
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):           # one gradient per forward output ...
            y, = ctx.saved_tensors
            return g * y                # ... and one (or None) per forward input

    y = Exp.apply(x)                    # y.grad_fn is an `ExpBackward` node

The `ctx` *is* the graph node, as in torch: every Function subclass gets its own node class
`<Name>Backward` (a `graph.Node` subclass made by `__init_subclass__`), and `apply` creates one
instance per call, passes it to `forward` as `ctx`, then attaches it to the tensor outputs. The
engine runs it like any op's node: `BackwardCFunction.apply` calls the user's `backward`.

Torch's newer style is supported too: `forward(*args)` without ctx plus
`setup_context(ctx, inputs, output)`, which is where state for backward is saved.

What `apply` does beyond calling forward:
  * saved tensors are packed after forward (as `graph.save_tensor` / `save_output` do for ops),
    so modifying one in place before backward raises the usual version-counter error, and a
    saved output does not keep its own node alive in a reference cycle;
  * `mark_dirty` inputs (modified in place by forward) get the node as their new history;
  * `mark_non_differentiable` outputs, and non-float ones, do not require grad;
  * an input returned unchanged is returned as a new alias carrying the node (torch does this
    too: the input's own history must not change);
  * backward receives zeros for outputs that got no gradient, unless
    `ctx.set_materialize_grads(False)`; non-tensor outputs always get None.

Read next: `functional.py` (jacobian, hessian, vjp, jvp on top of `grad`).
"""
import functools
import inspect
import warnings

from .. import _backend
from .._dtype import FLOATING
from .._functorch import levels as _levels
from .._tensor import Tensor
from . import grad_mode, graph
from .graph import CopySlices, Node, edge_of, save_output, save_tensor, unpack_saved

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]

_grad = grad_mode.state


class FunctionCtx:
    """What `forward` / `setup_context` may call on `ctx` to prepare backward."""

    __slots__ = ()

    def save_for_backward(self, *tensors):
        """Keep tensors for backward; read them back with `ctx.saved_tensors`. Only tensors
        (and None) are allowed: other values can be stored as plain attributes of ctx."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place (they must also be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that get no gradient (indices, masks); backward still receives a
        (zero) gradient for each of them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self._materialize_grads = bool(value)

    def save_for_forward(self, *tensors):
        """Keep tensors for `jvp` (forward-mode AD); read them back with `ctx.saved_tensors`
        inside jvp."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but "
                                f"got argument {i} of type {type(t).__name__}")
        self._saved_for_forward = tensors

    def mark_shared_storage(self, *pairs):
        """Deprecated: raises RuntimeError, as torch does (shared storages are tracked anyway)."""
        raise RuntimeError("ctx.mark_shared_storage is deprecated. Tensors with shared storages "
                           "are automatically tracked.")


class _FunctionOp(graph._Named):
    """The op-like record of a Function's node: its name; saved tensors are freed by backward."""

    def __init__(self, node_name):
        super().__init__(node_name)
        self.saves_tensors = True


class BackwardCFunction(FunctionCtx, Node):
    """The node (and ctx) of one `Function.apply` call. Subclassed per Function as
    `<Name>Backward`; no `__slots__`, so user code may set any attribute on ctx."""

    _forward_cls = None
    _op = _FunctionOp("BackwardCFunction")

    def __init__(self, args):
        edges = []
        meta = []
        for x in args:
            if isinstance(x, Tensor):
                wants = x._requires_grad
                edges.append(edge_of(x) if wants else (None, 0))
                meta.append((x._data.shape, x._dtype) if wants else None)
        super().__init__(self._op, tuple(edges), meta, (), 0)
        self.needs_input_grad = tuple(isinstance(x, Tensor) and x._requires_grad for x in args)
        self._is_tensor_input = tuple(isinstance(x, Tensor) for x in args)
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._saved_for_forward = None  # what save_for_forward kept; saved_tensors in jvp
        self._in_jvp = False
        self._outputs_meta = ()  # (shape, dtype, device) per forward output, None if not a Tensor

    @property
    def saved_tensors(self):
        """The tensors given to `save_for_backward`, checked against in-place modification
        (inside `jvp`: those given to `save_for_forward`)."""
        if self._in_jvp:
            return tuple(self._saved_for_forward or ())
        if self._saved is None:
            self._unpack()  # raises graph's "backward through the graph a second time" error
        return tuple(unpack_saved(value, self) for value in self._saved)

    def apply(self, grads):
        """Engine entry point: output gradients -> the user's backward -> input gradients."""
        return self._check_input_grads(self._user_backward()(self, *self._output_grads(grads)))

    def _user_backward(self):
        """The Function's `backward`, or its `vjp` (torch's other name for it), not both."""
        cls = self._forward_cls
        if cls.vjp is Function.vjp:
            return cls.backward
        if cls.backward is not Function.backward:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return cls.vjp

    def _output_grads(self, grads):
        out = []
        for g, meta in zip(grads, self._outputs_meta):
            if meta is None:
                g = None  # a non-tensor output
            elif g is None and self._materialize_grads:
                shape, dtype, device = meta
                g = Tensor._make(_backend.namespace(device).zeros(shape, dtype.np), device=device)
            out.append(g)
        return out

    def _check_input_grads(self, grads):
        """One gradient (or None) per forward argument; keep those of tensor arguments."""
        if type(grads) is not tuple:
            grads = (grads,)
        for g in grads:
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        expected = len(self._is_tensor_input)
        if len(grads) > expected and all(g is None for g in grads[expected:]):
            grads = grads[:expected]  # torch accepts trailing Nones
        if len(grads) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {expected}, got {len(grads)})")
        kept = []
        for i, (g, is_tensor) in enumerate(zip(grads, self._is_tensor_input)):
            if is_tensor:
                kept.append(g)
            elif g is not None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   "input was not a Variable")
        return tuple(kept)

    def release(self):
        if self._saved:
            self._saved = None


def _default_setup_context(ctx, inputs, output):
    """Placeholder: a Function that overrides this uses the ctx-less `forward(*args)` style."""
    raise NotImplementedError("setup_context is not implemented.")


class Function:
    """Base class of custom differentiable operations; see the module docstring."""

    _backward_cls = BackwardCFunction

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,),
                                 {"_forward_cls": cls, "_op": _FunctionOp(name)})

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself.",
                      DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @staticmethod
    def forward(*args, **kwargs):
        """The computation on ember Tensors, which `apply` runs with grad mode off; override it.

        Either `forward(ctx, *args)`, which fills `ctx` itself, or `forward(*args)` together with a
        `setup_context(ctx, inputs, output)` that does. Non-tensor arguments are passed through.
        """
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    setup_context = staticmethod(_default_setup_context)

    @staticmethod
    def backward(ctx, *grad_outputs):
        """The reverse-mode rule (`vjp` is the same method): given one gradient per output of
        `forward`, return one gradient per input of `forward` (None for non-tensor inputs or inputs
        that need none). `ctx.needs_input_grad` says which are wanted.

        It runs with grad mode off, or on under `create_graph=True`, so that what it computes with
        ember ops can be differentiated again.
        """
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """The forward-mode rule: the output tangents, given one tangent per input (zeros for
        inputs without one); `ctx.saved_tensors` holds what `save_for_forward` kept."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    generate_vmap_rule = False  # True: vmap runs forward (and backward) on the batch as is

    @staticmethod
    def vmap(info, in_dims, *args):
        """The batching rule: the outputs on the whole batch and their batch dims, given
        `info` (batch_size, randomness) and each input's batch dim (None: not batched)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the Function: forward now, the node for backward attached to its outputs."""
        if _levels.active:
            level = _levels.owner(tuple(args) + tuple(kwargs.values()))
            if level is not None:
                return _apply_under(level, cls, args, kwargs)
        return cls._apply(*args, **kwargs)

    @classmethod
    def _apply(cls, *args, **kwargs):
        return _finish(*_forward(cls, args, kwargs))


def _forward(cls, args, kwargs):
    """Run the Function's forward (grad mode off): (ctx, bound args, output, executable)."""
    new_style = cls.setup_context is not _default_setup_context
    args, kwargs = _bind(cls.forward, args, kwargs, new_style)
    ctx = cls._backward_cls(args)
    executable = _grad.grad_enabled and any(ctx.needs_input_grad)
    previous = _grad.grad_enabled
    _grad.grad_enabled = False
    try:
        if new_style:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    finally:
        _grad.grad_enabled = previous
    return ctx, args, output, executable


def _bind(forward, args, kwargs, new_style):
    """Keyword arguments go to their positions (so `needs_input_grad` and the gradient count
    see them); the new style also fills in defaults, as torch does."""
    if not kwargs and not new_style:
        return args, kwargs
    params = inspect.signature(forward)
    bound = params.bind(*args, **kwargs) if new_style else params.bind(None, *args, **kwargs)
    if new_style:
        bound.apply_defaults()
        return bound.args, bound.kwargs
    return bound.args[1:], bound.kwargs


# ----------------------------------------------------------------------------------------------
# after forward: attach the node to the outputs


def _finish(ctx, args, output, executable):
    is_tuple = isinstance(output, tuple)
    outputs = tuple(output) if is_tuple else (output,)
    _check_dirty(ctx, args, outputs, executable)
    ctx._outputs_meta = tuple((o._data.shape, o._dtype, o._device) if isinstance(o, Tensor)
                              else None for o in outputs)
    ctx._num_outputs = len(outputs)
    if not executable:
        return output
    results = tuple(_attach(ctx, args, o, i) for i, o in enumerate(outputs))
    _pack_saved(ctx, outputs, results)
    return results if is_tuple else results[0]


def _check_dirty(ctx, args, outputs, executable):
    for t in ctx._dirty:
        if not any(t is a for a in args):
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                          "Tensors that have been mutated should be passed to ctx.mark_dirty().")
        elif not any(t is o for o in outputs):
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
        elif executable and t._requires_grad and t.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")


def _attach(ctx, args, out, nr):
    """The i-th output as the caller sees it: with `ctx` as its grad_fn when differentiable."""
    if not isinstance(out, Tensor):
        return out
    if any(out is d for d in ctx._dirty):
        if out._base is not None and out._view_fn is not None and out._dtype.category >= FLOATING:
            _rebase_dirty_view(ctx, out, nr)
            return out
    elif any(out is a for a in args):
        out = _alias(out)  # the input itself keeps its own history
    if any(out is n for n in ctx._non_differentiable) or out._dtype.category < FLOATING:
        return out
    out._grad_fn = ctx
    out._output_nr = nr
    out._requires_grad = True
    return out


def _alias(t):
    """A new tensor sharing t's memory and version (torch returns such a view of an input)."""
    alias = Tensor._make(t._data, device=t._device)
    alias._vc = t._vc
    alias._base = t if t._base is None else t._base
    alias._view_fn = None  # not replayable: in-place on it goes through the leaf checks
    return alias


def _rebase_dirty_view(ctx, view, nr):
    """A view modified in place by forward: as for in-place ops (graph._rebase_view), the base
    becomes CopySlices(old base, new view values) and the view is re-derived from it."""
    values = Tensor._make(view._data, True, ctx, nr, view._device)
    values._vc = view._vc
    base = view._base
    base_edge = edge_of(base) if base._requires_grad else (None, 0)
    copy = CopySlices(base_edge, (ctx, nr), view._view_fn, (base._data.shape, base._dtype),
                      (view._data.shape, view._dtype))
    base._grad_fn = copy
    base._output_nr = 0
    base._requires_grad = True
    graph._replay_view(view, copy)


def _pack_saved(ctx, raw_outputs, outputs):
    """Pack `save_for_backward` tensors now that forward is done: versions are read after any
    in-place writes of forward, and saved outputs are stored without their node (no cycle)."""
    packed = []
    for t in ctx._to_save:
        if t is None:
            packed.append(None)
            continue
        for raw, out in zip(raw_outputs, outputs):
            if t is raw:
                t = out
                break
        if t._grad_fn is ctx:
            packed.append(save_output(t, name_current_history=False))
        else:
            packed.append(save_tensor(t))
    ctx._to_save = ()
    ctx._saved = tuple(packed)


# ----------------------------------------------------------------------------------------------
# under function transforms: vmap runs the Function's vmap rule (or its forward on the batch,
# with generate_vmap_rule); a dual level runs forward on the primals, then its jvp


def _apply_under(level, cls, args, kwargs):
    from .forward_ad import DualLevel

    if cls.setup_context is _default_setup_context and not getattr(level, "public", False):
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    if isinstance(level, DualLevel):
        return _apply_with_tangents(level, cls, args, kwargs)
    if cls.generate_vmap_rule:
        return cls._apply(*args, **kwargs)  # forward's ops batch themselves
    if cls.vmap is Function.vmap:
        raise RuntimeError("To use autograd.Function with vmap, you must either override the "
                           "vmap staticmethod or set generate_vmap_rule=True.")
    return _apply_vmap_rule(level, cls, args, kwargs)


def _apply_with_tangents(level, cls, args, kwargs):
    """Forward on the primals (the level's tangents hidden), then `jvp` for the outputs'."""
    from .forward_ad import _tangent_at

    if cls.jvp is Function.jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    with _levels.below(level):
        ctx, bound, output, executable = _forward(cls, args, kwargs)
        zeros = [_tangent_at(x, level.index) for x in bound]
        zeros = [t if t is not None or not isinstance(x, Tensor) else x.new_zeros(x.shape)
                 for x, t in zip(bound, zeros)]
        ctx._in_jvp = True
        try:
            found = cls.jvp(ctx, *zeros)
        finally:
            ctx._in_jvp = False
        output = _finish(ctx, bound, output, executable)
    outputs = output if isinstance(output, tuple) else (output,)
    found = found if isinstance(found, tuple) else (found,)
    for out, t in zip(outputs, found):
        if isinstance(out, Tensor) and t is not None and out._dtype.category >= FLOATING:
            out._tangents = {**(out._tangents or {}), level.index: t}
    return output


def _apply_vmap_rule(level, cls, args, kwargs):
    """The Function's own vmap staticmethod on the batched values, its results wrapped back.
    When an input requires grad, the Function's node is recorded on the batched tensors as
    usual (setup_context, then backward on batched gradients)."""
    args, kwargs = _bind(cls.forward, args, kwargs, True)
    values = [x._value if isinstance(x, Tensor) and x._batch_level == level.index else x
              for x in args]
    in_dims = tuple(0 if v is not x else None for v, x in zip(values, args))
    with _levels.below(level):
        output, out_dims = cls.vmap(_VmapInfo(level.size, level.randomness), in_dims, *values,
                                    **kwargs)
    output = _batched_outputs(level, output, out_dims)
    ctx = cls._backward_cls(args)
    if not (_grad.grad_enabled and any(ctx.needs_input_grad)):
        return output
    with grad_mode.no_grad():
        cls.setup_context(ctx, args, output)
    return _finish(ctx, args, output, True)


def _batched_outputs(level, output, out_dims):
    from .._functorch.vmap import batched

    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    dims = (out_dims,) * len(outputs) if not isinstance(out_dims, tuple) else out_dims
    wrapped = []
    for out, d in zip(outputs, dims):
        if isinstance(out, Tensor):
            if d is None:
                out, d = out.expand((level.size,) + tuple(out.shape)), 0
            out = batched(out.movedim(d, 0), level.index)
        wrapped.append(out)
    return wrapped[0] if single else tuple(wrapped)


class _VmapInfo:
    """What a Function's vmap staticmethod is told: the batch size and the randomness."""

    def __init__(self, batch_size, randomness):
        self.batch_size = batch_size
        self.randomness = randomness


# ----------------------------------------------------------------------------------------------
# once_differentiable


class DelayedError(Node):
    """grad_fn of results that must not be differentiated again: running it raises."""

    _op = graph._Named("DelayedError")

    def __init__(self, message, num_outputs):
        super().__init__(self._op, (), [], (), num_outputs)
        self.message = message

    def apply(self, grads):
        raise RuntimeError(self.message)


def once_differentiable(fn):
    """Decorator for `backward`: it runs with grad mode off. If a double backward is attempted
    (create_graph=True with differentiable incoming gradients), the results carry a node that
    raises instead of silently returning wrong higher-order gradients."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not _grad.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = type(outputs) is not tuple
        error = DelayedError("trying to differentiate twice a function that was marked with "
                             "@once_differentiable", 1 if single else len(outputs))
        wrapped = tuple(_fail_later(o, error, i)
                        for i, o in enumerate((outputs,) if single else outputs))
        return wrapped[0] if single else wrapped
    return wrapper


def _fail_later(t, error, nr):
    if not isinstance(t, Tensor):
        return t
    return Tensor._make(t._data, True, error, nr, t._device)


class InplaceFunction(Function):
    """Legacy base class (torch keeps it for old code): a Function with an `inplace` flag."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Legacy torch class; not supported."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("NestedIOFunction is a legacy torch API that ember does not "
                                  "implement; use a static-method Function")

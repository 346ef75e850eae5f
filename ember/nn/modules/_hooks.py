"""Calling a Module with hooks: forward pre/post hooks, backward hooks, global hooks.

`Module.__call__` comes here only when some hook is registered. The order is torch's:

    forward pre-hooks (global, then the module's)      may replace args (and kwargs)
    inputs  -> [input hook node]                       only with full backward hooks
    forward(*args, **kwargs)
    forward hooks (global, then the module's)          may replace the output
    outputs -> [output hook node]                      only with full backward hooks

Full backward hooks need two groups of gradients: w.r.t. the module's outputs (`grad_output`)
and w.r.t. its positional tensor inputs (`grad_input`). The inputs and the outputs go through
identity graph nodes ("BackwardHookFunctionBackward", as in torch). In backward the output node
runs first: it records grad_output and runs the backward pre-hooks, which may replace it. The
input node runs later, once every gradient w.r.t. the inputs is summed; it calls the hooks with
both groups, and they may replace grad_input. Positions that are not tensors get None; tensor
inputs that do not require grad get zeros, and outputs that received no gradient get None,
exactly as torch reports them.

A forward hook registered with always_call=True also runs when forward (or another hook)
raised, with output None.

Read next: `container.py`.
"""
import sys
import warnings
from collections import OrderedDict

from ... import _creation
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.graph import Node, _Named, edge_of
from ...utils.hooks import RemovableHandle

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_backward_hook"]

_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_is_full_backward_hook = None  # True / False once full / old-style hooks are global


def any_global_hooks():
    return bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks)


def register_module_forward_pre_hook(hook):
    """`hook(module, args)` before every module's forward (before the module's own hooks)."""
    return RemovableHandle(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """`hook(module, args, output)` after every module's forward."""
    handle = RemovableHandle(_global_forward_hooks, hook, extra_dict=[
        _global_forward_hooks_with_kwargs, _global_forward_hooks_always_called])
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """Register `hook(module, grad_output)` on every module, run before the module's gradients are
    computed; it may return a replacement grad_output. Returns a RemovableHandle."""
    return RemovableHandle(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """Register `hook(module, grad_input, grad_output)` on every module, run once the gradients with
    respect to the module's inputs are computed; it may return a replacement grad_input. Returns a
    RemovableHandle. Raises RuntimeError if a global non-full backward hook is registered."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = True
    return RemovableHandle(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """The deprecated old-style global backward hook (see Module.register_backward_hook)."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is True:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as "
                           "a global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = False
    return RemovableHandle(_global_backward_hooks, hook)


# ----------------------------------------------------------------------------------------------
# one call


def call_with_hooks(module, args, kwargs):
    call = _Call(module, args, kwargs)
    try:
        return call.run()
    except Exception:
        call.run_always_called_hooks()
        raise


class _Call:
    """The state of one hooked call: what the always_call hooks see if something raises."""

    def __init__(self, module, args, kwargs):
        self.module = module
        self.args = args
        self.kwargs = kwargs
        self.result = None
        self.called = set()  # always_call hooks that already ran

    def run(self):
        module = self.module
        full_hooks, old_hooks = _backward_hooks(module)
        pre_hooks = list(_global_backward_pre_hooks.values()) + \
            list(module._backward_pre_hooks.values())
        self._run_forward_pre_hooks()
        backward_hook = None
        if full_hooks or pre_hooks:
            backward_hook = _BackwardHook(module, full_hooks, pre_hooks)
            self.args = backward_hook.setup_input_hook(self.args)
        self.result = module.forward(*self.args, **self.kwargs)
        self._run_forward_hooks()
        if backward_hook is not None:
            if not isinstance(self.result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              "Tensor or a tuple of Tensors but received "
                              f"{type(self.result)}", stacklevel=4)
            self.result = backward_hook.setup_output_hook(self.result)
        if old_hooks:
            _register_old_style_hooks(module, old_hooks, self.result)
        return self.result

    def _run_forward_pre_hooks(self):
        module = self.module
        for hook_id, hook in (*_global_forward_pre_hooks.items(),
                              *module._forward_pre_hooks.items()):
            if hook_id in module._forward_pre_hooks_with_kwargs:
                result = hook(module, self.args, self.kwargs)
                if result is None:
                    continue
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                self.args, self.kwargs = result
            else:
                result = hook(module, self.args)
                if result is not None:
                    self.args = result if isinstance(result, tuple) else (result,)

    def _run_forward_hooks(self):
        for hook_id, hook in (*_global_forward_hooks.items(),
                              *self.module._forward_hooks.items()):
            if self._always_called(hook_id):
                self.called.add(hook_id)
            result = self._call_forward_hook(hook_id, hook)
            if result is not None:
                self.result = result

    def _always_called(self, hook_id):
        return hook_id in self.module._forward_hooks_always_called or \
            hook_id in _global_forward_hooks_always_called

    def _call_forward_hook(self, hook_id, hook):
        if hook_id in self.module._forward_hooks_with_kwargs or \
                hook_id in _global_forward_hooks_with_kwargs:
            return hook(self.module, self.args, self.kwargs, self.result)
        return hook(self.module, self.args, self.result)

    def run_always_called_hooks(self):
        """After an exception: the always_call hooks that did not run yet, each guarded (the
        original exception is the one the caller sees)."""
        for hook_id, hook in (*_global_forward_hooks.items(),
                              *self.module._forward_hooks.items()):
            if not self._always_called(hook_id) or hook_id in self.called:
                continue
            try:
                result = self._call_forward_hook(hook_id, hook)
            except Exception as e:
                warnings.warn("module forward hook with ``always_call=True`` raised an "
                              f"exception that was silenced as another error was raised in "
                              f"forward: {e}", stacklevel=4)
                continue
            if result is not None:
                self.result = result


def _backward_hooks(module):
    """(full hooks, old-style hooks): global ones first, then the module's."""
    full, old = [], []
    for is_full, hooks in ((_global_is_full_backward_hook, _global_backward_hooks),
                           (module._is_full_backward_hook, module._backward_hooks)):
        if is_full is True:
            full.extend(hooks.values())
        elif is_full is False:
            old.extend(hooks.values())
    return full, old


def _register_old_style_hooks(module, hooks, result):
    """register_backward_hook's semantics: a hook on the grad_fn of the first output tensor,
    seeing that node's gradients (which are the module's only if forward is one op)."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) \
            else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(lambda grad_input, grad_output, hook=hook:
                              hook(module, grad_input, grad_output))


# ----------------------------------------------------------------------------------------------
# full backward hooks


class _BackwardHook:
    """Links grad_output (seen by the output node) with grad_input (seen by the input node)
    for one call of a module."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.inputs_hooked = False
        self.n_outputs = 0

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        args, node = _wrap(args, _InputHook(self))
        self.inputs_hooked = node is not None
        return args

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        self.n_outputs = len(outputs)
        outputs, _ = _wrap(outputs, _OutputHook(self))
        return outputs[0] if single else outputs

    def on_grad_output(self, grad_outputs):
        """The output node ran: record grad_output (after the pre-hooks)."""
        for hook in self.pre_hooks:
            result = hook(self.module, grad_outputs)
            if result is None:
                continue
            if len(result) != len(grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(result)}, but expected "
                                   f"{len(grad_outputs)}")
            grad_outputs = tuple(result)
        self.grad_outputs = grad_outputs
        if not self.inputs_hooked:  # no input needs a gradient: the input node never runs
            self._call_hooks_without_inputs()
        return grad_outputs

    def _call_hooks_without_inputs(self):
        warnings.warn("Full backward hook is firing when gradients are computed with respect "
                      "to module outputs since no inputs require gradients. See "
                      "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                      "#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=_user_stacklevel())
        grad_inputs = (None,) * self.n_inputs
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is not None and not (isinstance(result, tuple) and
                                           all(g is None for g in result)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                   "should always return None or None for all gradients.")
        self.grad_outputs = None

    def on_grad_input(self, grad_inputs):
        """The input node ran: call the hooks with both groups. Returns grad_input."""
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            if result is None:
                continue
            if len(result) != len(grad_inputs):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(result)}, but expected {len(grad_inputs)}")
            grad_inputs = tuple(result)
        self.grad_outputs = None
        return grad_inputs


class _HookNode(Node):
    """An identity node over the tensors at some positions of a tuple (args or outputs).

    `wrapped`: positions of the tensors routed through it (those that require grad), on
    `devices`; `others`: (position, shape, dtype, device) of the other tensors in the tuple;
    `size`: the length of the tuple."""

    __slots__ = ("hook", "wrapped", "devices", "others", "size")
    _op = _Named("BackwardHookFunctionBackward")

    def __init__(self, hook):
        self.hook = hook


class _InputHook(_HookNode):
    __slots__ = ()

    def apply(self, grads):
        if self.hook.grad_outputs is None:
            # the gradient reached the inputs without passing the outputs (double backward)
            return tuple(grads)
        grad_inputs = [None] * self.size
        for (pos, shape, dtype, device) in self.others:
            grad_inputs[pos] = _creation.zeros(shape, dtype=dtype, device=device)
        for pos, g, (shape, dtype), device in zip(self.wrapped, grads, self._meta,
                                                  self.devices):
            # torch gives zeros, not None, for an input that got no gradient
            grad_inputs[pos] = g if g is not None else _creation.zeros(shape, dtype=dtype,
                                                                       device=device)
        grad_inputs = self.hook.on_grad_input(tuple(grad_inputs))
        return tuple(grad_inputs[pos] for pos in self.wrapped)


class _OutputHook(_HookNode):
    __slots__ = ()

    def apply(self, grads):
        grad_outputs = [None] * self.size
        for pos, g in zip(self.wrapped, grads):
            grad_outputs[pos] = g
        grad_outputs = self.hook.on_grad_output(tuple(grad_outputs))
        return tuple(grad_outputs[pos] for pos in self.wrapped)


def _wrap(values, node):
    """Route the tensors of `values` that require grad through `node`. Returns the new tuple
    and the node, or `values` unchanged and None when nothing requires grad."""
    tensors = [(i, v) for i, v in enumerate(values) if isinstance(v, Tensor)]
    wrapped = [(i, t) for i, t in tensors if t.requires_grad]
    if not wrapped or not grad_mode.is_grad_enabled():
        return values, None
    node.size = len(values)
    node.wrapped = [i for i, _ in wrapped]
    node.devices = [t.device for _, t in wrapped]
    node.others = [(i, t.shape, t.dtype, t.device) for i, t in tensors if not t.requires_grad]
    Node.__init__(node, node._op, tuple(edge_of(t) for _, t in wrapped),
                  tuple((t._data.shape, t._dtype) for _, t in wrapped), (), len(wrapped))
    values = list(values)
    for nr, (i, t) in enumerate(wrapped):
        new = Tensor._make(t._data, True, node, nr, t._device)
        new._vc = t._vc  # the same memory: in-place writes must be seen by both
        values[i] = new
    return tuple(values), node


def _user_stacklevel():
    """The warnings stacklevel of the innermost frame outside ember (the user's backward())."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("ember."):
        frame, level = frame.f_back, level + 1
    return level

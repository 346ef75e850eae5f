"""Running a Module with hooks: forward pre/post hooks, full backward hooks, global hooks.

Full backward hooks need to see two groups of gradients: w.r.t. the module's outputs
(`grad_output`) and w.r.t. its tensor inputs (`grad_input`). We route the inputs and the outputs
through identity graph nodes; the output node records grad_output (and runs backward
pre-hooks, which may replace it), the input node then calls the hooks with both groups:

    inputs -> [InputHook] -> forward(...) -> [OutputHook] -> outputs
"""
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.graph import Node, _Named, edge_of
from ...utils.hooks import RemovableHandle

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook"]

_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()


def any_global_hooks():
    return bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks)


def register_module_forward_pre_hook(hook):
    return RemovableHandle(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, always_call=False):
    return RemovableHandle(_global_forward_hooks, hook)


def register_module_full_backward_hook(hook):
    return RemovableHandle(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    return RemovableHandle(_global_backward_pre_hooks, hook)


def call_with_hooks(module, args, kwargs):
    args, kwargs = _run_pre_hooks(module, args, kwargs)
    backward_hooks = list(_global_backward_hooks.values()) + list(
        module._backward_hooks.values())
    backward_pre_hooks = list(_global_backward_pre_hooks.values()) + list(
        module._backward_pre_hooks.values())
    state = None
    if (backward_hooks or backward_pre_hooks) and grad_mode.is_grad_enabled():
        state = _BackwardState(module, backward_hooks, backward_pre_hooks)
        args = state.wrap_inputs(args)
    try:
        output = module.forward(*args, **kwargs)
    except Exception:
        for hook_id, hook in module._forward_hooks.items():
            if hook_id in module._forward_hooks_always_called:
                hook(module, args, None)
        raise
    output = _run_forward_hooks(module, args, kwargs, output)
    if state is not None:
        output = state.wrap_outputs(output)
    return output


def _run_pre_hooks(module, args, kwargs):
    hooks = list(_global_forward_pre_hooks.items()) + list(module._forward_pre_hooks.items())
    for hook_id, hook in hooks:
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    return args, kwargs


def _run_forward_hooks(module, args, kwargs, output):
    hooks = list(_global_forward_hooks.items()) + list(module._forward_hooks.items())
    for hook_id, hook in hooks:
        if hook_id in module._forward_hooks_with_kwargs:
            result = hook(module, args, kwargs, output)
        else:
            result = hook(module, args, output)
        if result is not None:
            output = result
    return output


class _BackwardState:
    """Collects grad_output then grad_input for one call of a module with backward hooks."""

    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.n_inputs = 0
        self.inputs_wrapped = False
        self.grad_output = None

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.n_inputs = sum(1 for a in args if isinstance(a, Tensor))
        if not positions:
            return args
        self.inputs_wrapped = True
        wrapped = _identity(_InputHook(self), [args[i] for i in positions])
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        self.input_positions = [sum(1 for a in args[:i] if isinstance(a, Tensor))
                                for i in positions]
        return tuple(args)

    def wrap_outputs(self, output):
        single = isinstance(output, Tensor)
        outputs = (output,) if single else output
        if not isinstance(outputs, tuple):
            return output
        positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and
                     o.requires_grad]
        if not positions:
            return output
        wrapped = _identity(_OutputHook(self), [outputs[i] for i in positions])
        outputs = list(outputs)
        for i, t in zip(positions, wrapped):
            outputs[i] = t
        return outputs[0] if single else tuple(outputs)

    def on_grad_output(self, grads):
        for hook in self.pre_hooks:
            result = hook(self.module, tuple(grads))
            if result is not None:
                grads = list(result if isinstance(result, tuple) else (result,))
        self.grad_output = tuple(grads)
        if not self.inputs_wrapped:  # nothing upstream wants a gradient: call the hooks now
            self.call_hooks((None,) * self.n_inputs)
        return grads

    def call_hooks(self, grad_input):
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                grad_input = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        return grad_input


class _HookNode(Node):
    """An identity node over several tensors that calls back into `_BackwardState`."""

    __slots__ = ("state",)
    _op = _Named("BackwardHookFunctionBackward")

    def __init__(self, state):
        self.state = state


class _InputHook(_HookNode):
    __slots__ = ()

    def apply(self, grads):
        positions = self.state.input_positions
        grad_input = [None] * self.state.n_inputs
        for pos, g in zip(positions, grads):
            grad_input[pos] = g
        result = self.state.call_hooks(tuple(grad_input))
        return tuple(result[pos] for pos in positions)


class _OutputHook(_HookNode):
    __slots__ = ()

    def apply(self, grads):
        return tuple(self.state.on_grad_output(list(grads)))


def _identity(node, tensors):
    """New tensors sharing `tensors`' memory, whose gradients flow through `node`."""
    Node.__init__(node, node._op, tuple(edge_of(t) for t in tensors),
                  [(t._data.shape, t._dtype) for t in tensors], (), len(tensors),
                  tuple((t._data.shape, t._dtype) for t in tensors) if len(tensors) > 1
                  else None)
    out = []
    for i, t in enumerate(tensors):
        new = Tensor._make(t._data, True, node, i, t._device)
        new._vc = t._vc
        out.append(new)
    return out

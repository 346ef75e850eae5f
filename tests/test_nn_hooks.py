"""Module hooks vs torch: forward pre-hooks and hooks (kwargs, prepend, always_call, replacing
values), handles, full backward hooks and pre-hooks (the grad_input / grad_output values torch
reports, including None and zeros), the old-style backward hook, and global module hooks."""
import warnings

import numpy as np
import pytest

import ember

from .test_nn_module import cases_of, outcome, register, same

X = np.arange(6.0).reshape(2, 3) / 7
HOOKS = {}
case = register(HOOKS)


def _linear(m):
    layer = m.nn.Linear(3, 2).double()
    with m.no_grad():
        layer.weight.copy_(m.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=m.float64))
        layer.bias.fill_(0.5)
    return layer


def _two_inputs(m):
    class TwoIn(m.nn.Module):
        def forward(self, a, b, scale=2.0):
            return a * b * scale, a + b
    return TwoIn()


def _log_backward(module, log, name="h"):
    module.register_full_backward_hook(lambda mod, gi, go: log.append((name, gi, go)))


# ----------------------------------------------------------------------------------------------
# forward hooks


@case
def forward_pre_hooks(m):
    layer = _linear(m)
    log = []
    handle = layer.register_forward_pre_hook(lambda mod, args: log.append("a"))
    layer.register_forward_pre_hook(lambda mod, args: log.append("b") or (args[0] * 0,),
                                    prepend=True)
    layer.register_forward_pre_hook(lambda mod, args, kw: log.append(("c", sorted(kw))),
                                    with_kwargs=True)
    first = layer(m.tensor(X))
    handle.remove()
    second = layer(m.tensor(X))
    return log, first, second


@case
def forward_pre_hook_single_value_and_kwargs(m):
    layer = _linear(m)
    layer.register_forward_pre_hook(lambda mod, args: args[0] * 2)
    two = _two_inputs(m)
    two.register_forward_pre_hook(lambda mod, args, kw: (args, {"scale": 10.0}),
                                  with_kwargs=True)
    return layer(m.tensor(X)), two(m.tensor(X), m.tensor(X), scale=1.0)


@case
def forward_pre_hook_bad_return(m):
    two = _two_inputs(m)
    two.register_forward_pre_hook(lambda mod, args, kw: args, with_kwargs=True)
    two(m.tensor(X), m.tensor(X), scale=1.0)


@case
def forward_hooks(m):
    layer = _linear(m)
    log = []
    layer.register_forward_hook(lambda mod, args, out: log.append(("a", out)))
    layer.register_forward_hook(lambda mod, args, out: out * 2)
    layer.register_forward_hook(lambda mod, args, kw, out: log.append(("k", sorted(kw), out)),
                                with_kwargs=True)
    layer.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
    return log, layer(m.tensor(X))


def _failing(m):
    class Boom(m.nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    return Boom()


@case
def always_call_hooks(m):
    module = _failing(m)
    log = []
    module.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                 always_call=True)
    module.register_forward_hook(lambda mod, args, kw, out: log.append(("always-kw", out)),
                                 always_call=True, with_kwargs=True)
    module.register_forward_hook(lambda mod, args, out: log.append(("normal", out)))
    log.append(outcome(m, lambda m: module(1)))
    return log


@case
def always_call_after_failing_pre_hook(m):
    module = m.nn.Identity()
    log = []
    module.register_forward_pre_hook(lambda mod, args: 1 / 0)
    module.register_forward_hook(lambda mod, args, out: log.append(("always", out)),
                                 always_call=True)
    log.append(outcome(m, lambda m: module(1)))
    return log


@case
def always_call_runs_once(m):
    layer = m.nn.Identity()
    log = []
    layer.register_forward_hook(lambda mod, args, out: log.append("always"), always_call=True)
    layer.register_forward_hook(lambda mod, args, out: 1 / 0)
    log.append(outcome(m, lambda m: layer(1)))
    return log


@case
def handles(m):
    layer = _linear(m)
    log = []
    with layer.register_forward_hook(lambda *args: log.append(1)):
        layer(m.tensor(X))
    layer(m.tensor(X))
    h = layer.register_forward_hook(lambda *args: None, with_kwargs=True, always_call=True)
    h.remove()
    h.remove()  # a second remove is harmless
    p = layer.register_forward_pre_hook(lambda *args: None, with_kwargs=True)
    p.remove()
    return (log, len(layer._forward_hooks), len(layer._forward_hooks_with_kwargs),
            len(layer._forward_hooks_always_called), len(layer._forward_pre_hooks_with_kwargs))


# ----------------------------------------------------------------------------------------------
# full backward hooks


@case
def backward_linear(m):
    layer = _linear(m)
    log = []
    _log_backward(layer, log)
    layer.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", go)))
    x = m.tensor(X, requires_grad=True)
    (layer(x) ** 2).sum().backward()
    return log, x.grad, layer.weight.grad


@case
def backward_input_without_grad(m):
    layer = _linear(m)
    log = []
    _log_backward(layer, log)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (layer(m.tensor(X)) ** 2).sum().backward()
    return log, [str(w.message)[:60] for w in caught], layer.bias.grad


@case
def backward_no_input_grad_hook_must_return_none(m):
    layer = _linear(m)
    layer.register_full_backward_hook(lambda mod, gi, go: (m.ones(2, 3),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer(m.tensor(X)).sum().backward()


@case
def backward_replaces_grad_input(m):
    layer = _linear(m)
    layer.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,))
    x = m.tensor(X, requires_grad=True)
    (layer(x) ** 2).sum().backward()
    return x.grad, layer.weight.grad


@case
def backward_pre_hook_replaces_grad_output(m):
    layer = _linear(m)
    log = []
    layer.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0 + 1,))
    _log_backward(layer, log)
    x = m.tensor(X, requires_grad=True)
    (layer(x) ** 2).sum().backward()
    return log, x.grad, layer.weight.grad


@case
def backward_wrong_counts(m):
    def hooked(register):
        layer = _linear(m)
        register(layer)
        return lambda m: layer(m.tensor(X, requires_grad=True)).sum().backward()
    return (outcome(m, hooked(lambda l: l.register_full_backward_hook(
                lambda mod, gi, go: (gi[0], gi[0])))),
            outcome(m, hooked(lambda l: l.register_full_backward_pre_hook(
                lambda mod, go: (go[0], go[0])))))


@case
def backward_sequential(m):
    seq = m.nn.Sequential(_linear(m), m.nn.Identity(), m.nn.Linear(2, 1).double())
    with m.no_grad():
        seq[2].weight.fill_(0.3)
        seq[2].bias.fill_(0.1)
    log = []
    for i, module in enumerate(seq):
        _log_backward(module, log, i)
    _log_backward(seq, log, "seq")
    x = m.tensor(X, requires_grad=True)
    (seq(x) ** 2).sum().backward()
    return log, x.grad


@case
def backward_two_inputs_one_without_grad(m):
    two = _two_inputs(m)
    log = []
    _log_backward(two, log)
    two.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", go)))
    a, b = m.tensor(X, requires_grad=True), m.tensor(X + 1)
    o1, o2 = two(a, b, scale=3.0)
    (o1.sum() + (o2 ** 2).sum()).backward()
    return log, a.grad


@case
def backward_unused_output_and_input(m):
    class UsesA(m.nn.Module):
        def forward(self, a, b):
            return a * 2, a * 3
    module = UsesA()
    log = []
    _log_backward(module, log)
    a, b = m.tensor(X, requires_grad=True), m.tensor(X, requires_grad=True)
    o1, _ = module(a, b)
    o1.sum().backward()
    return log, a.grad, b.grad


@case
def backward_non_tensor_positions(m):
    class Mixed(m.nn.Module):
        def forward(self, a, k, b):
            return a * k + b, 3, a.detach()
    module = Mixed()
    log = []
    _log_backward(module, log)
    a, b = m.tensor(X, requires_grad=True), m.tensor(X, requires_grad=True)
    out = module(a, 3, b)
    out[0].sum().backward()
    return log, out[2].requires_grad, out[1]


@case
def backward_kwarg_tensors_not_reported(m):
    class KW(m.nn.Module):
        def forward(self, a, b=None):
            return a * b
    module = KW()
    log = []
    _log_backward(module, log)
    a, b = m.tensor(X, requires_grad=True), m.tensor(X, requires_grad=True)
    module(a, b=b).sum().backward()
    return log, b.grad


@case
def backward_identity_module(m):
    log = []
    module = m.nn.Identity()
    _log_backward(module, log)
    a = m.tensor(X, requires_grad=True)
    (module(a) * 2).sum().backward()
    return log


@case
def backward_hook_on_parameter_input(m):
    layer = _linear(m)
    log = []
    _log_backward(layer, log)
    layer(layer.weight.t()).sum().backward()
    return log


@case
def backward_hooks_run_each_backward(m):
    layer = _linear(m)
    log = []
    _log_backward(layer, log)
    y = layer(m.tensor(X, requires_grad=True))
    y.sum().backward(retain_graph=True)
    (2 * y).sum().backward()
    return log


@case
def backward_hooks_off_under_no_grad(m):
    layer = _linear(m)
    log = []
    _log_backward(layer, log)
    with m.no_grad():
        y = layer(m.tensor(X))
    return y.requires_grad, log


@case
def backward_hook_node_name(m):
    layer = _linear(m)
    _log_backward(layer, [])
    y = layer(m.tensor(X, requires_grad=True))
    return y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()


@case
def backward_hook_removed(m):
    layer = _linear(m)
    log = []
    handle = layer.register_full_backward_hook(lambda *args: log.append(1))
    handle.remove()
    y = layer(m.tensor(X, requires_grad=True))
    y.sum().backward()
    return log, y.grad_fn.name() == "BackwardHookFunctionBackward"


@case
def mixing_old_and_full_backward_hooks(m):
    layer = _linear(m)
    layer.register_full_backward_hook(lambda *args: None)
    layer.register_backward_hook(lambda *args: None)


@case
def old_style_backward_hook(m):
    # one op (a product): its node's gradients are the module's
    class Scale(m.nn.Module):
        def forward(self, x):
            return x * 3.0
    module = Scale()
    log = []
    module.register_backward_hook(lambda mod, gi, go: log.append((gi, go)))
    x = m.tensor(X, requires_grad=True)
    with warnings.catch_warnings():  # torch warns that the old form is deprecated
        warnings.simplefilter("ignore")
        module(x).sum().backward()
    return log, x.grad


# ----------------------------------------------------------------------------------------------
# global hooks


@case
def global_hooks(m):
    mm = m.nn.modules.module
    log = []
    handles = [
        mm.register_module_forward_pre_hook(lambda mod, args: log.append(
            ("gpre", type(mod).__name__))),
        mm.register_module_forward_hook(lambda mod, args, out: log.append(
            ("gfw", type(mod).__name__))),
        mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(
            ("gbw", type(mod).__name__, gi))),
        mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(
            ("gbwpre", type(mod).__name__)))]
    try:
        seq = m.nn.Sequential(_linear(m))
        seq[0].register_forward_hook(lambda mod, args, out: log.append("local"))
        x = m.tensor(X, requires_grad=True)
        seq(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    seq(x)
    return log


@case
def global_always_call_and_kwargs(m):
    mm = m.nn.modules.module
    log = []
    handles = [mm.register_module_forward_hook(lambda mod, args, out: log.append(("g", out)),
                                               always_call=True),
               mm.register_module_forward_hook(
                   lambda mod, args, kw, out: log.append(("kw", sorted(kw))), with_kwargs=True)]
    try:
        log.append(outcome(m, lambda m: _failing(m)(1)))
        _two_inputs(m)(m.ones(1), m.ones(1), scale=2.0)
    finally:
        for h in handles:
            h.remove()
    return log


@cases_of(HOOKS)
def test_hooks_like_torch(fn):
    same(fn)


def test_global_hooks_are_reexported_from_module_py():
    mm = ember.nn.modules.module
    for name in ["register_module_forward_pre_hook", "register_module_forward_hook",
                 "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
                 "register_module_backward_hook", "register_module_module_registration_hook",
                 "register_module_parameter_registration_hook",
                 "register_module_buffer_registration_hook"]:
        assert callable(getattr(mm, name)), name


def test_registration_hooks_can_replace_values():
    mm = ember.nn.modules.module
    seen = []
    handles = [mm.register_module_parameter_registration_hook(
        lambda mod, name, p: seen.append(("param", name))),
        mm.register_module_buffer_registration_hook(
            lambda mod, name, b: ember.zeros(5) if name == "swap" else None),
        mm.register_module_module_registration_hook(
            lambda mod, name, sub: seen.append(("module", name)))]
    try:
        layer = ember.nn.Linear(2, 2)
        layer.register_buffer("swap", ember.ones(1))
        layer.child = ember.nn.Identity()
    finally:
        for h in handles:
            h.remove()
    assert seen == [("param", "weight"), ("param", "bias"), ("module", "child")]
    assert layer.swap.shape == (5,)
    ember.nn.Linear(2, 2)
    assert len(seen) == 3  # removed


def test_backward_hook_gradients_through_double_backward():
    torch = pytest.importorskip("torch")

    def run(m):
        layer = _linear(m)
        log = []
        layer.register_full_backward_hook(
            lambda mod, gi, go: log.append(round(gi[0].sum().item(), 6)))
        x = m.tensor(X, requires_grad=True)
        (g,) = m.autograd.grad((layer(x) ** 2).sum(), x, create_graph=True)
        g.sum().backward()
        return log, x.grad.numpy().round(6).tolist()
    assert run(ember) == run(torch)

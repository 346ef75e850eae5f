"""ember.autograd: the recorded graph, the backward engine and their user-facing tools.

    grad_mode.py     no_grad / enable_grad / set_grad_enabled / inference_mode
    graph.py         Node (grad_fn), AccumulateGrad, saved values, in-place rebasing
    engine.py        backward() and grad(): the iterative graph walk
    function.py      Function: user-defined forward/backward pairs
    functional.py    jacobian, hessian, vjp, jvp, hvp, vhp
    anomaly_mode.py  detect_anomaly / set_detect_anomaly
    gradcheck.py     finite-difference checks of the rules
    explain.py       explain(): every backward step in words, checked numerically
    profiler.py      torch.autograd.profiler's API over ember.profiler
"""
from . import anomaly_mode, engine, function, functional, grad_mode, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .explain import explain  # noqa: F401
from .function import Function, NestedIOFunction, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401


def _is_checkpoint_valid():
    """False inside a backward pass run by `grad()` or `backward(inputs=...)`, where a
    reentrant checkpoint cannot work (torch.autograd._is_checkpoint_valid)."""
    from . import engine

    return engine.checkpoint_valid


class Variable:
    """Legacy torch API: `Variable(t, requires_grad=...)` returns a plain Tensor sharing t's
    memory (Variables and Tensors were merged in torch 0.4)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from .._tensor import Tensor

        if data is None:
            from .. import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)

    _execution_engine = engine.ImperativeEngine()  # torch code queues final callbacks here


def variable(*args, **kwargs):
    """Removed from torch (raises, as torch's does): use ember.tensor(...)."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


def is_view_replay_enabled():
    """False, as torch's default: views keep their own history (torch's as_strided replay of
    views is not enabled)."""
    return False


_PROFILER_NAMES = ("profiler", "profiler_legacy", "profiler_util", "DeviceType",
                   "ProfilerActivity", "ProfilerConfig", "ProfilerEvent", "ProfilerState",
                   "kineto_available")


def __getattr__(name):
    """The profiler modules and types torch.autograd re-exports, loaded on first use (the
    profiler builds on the op layer, which needs autograd first)."""
    if name not in _PROFILER_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    if name.startswith("profiler"):
        return importlib.import_module(f"{__name__}.{name}")
    return getattr(importlib.import_module(f"{__name__}.profiler"), name)


def __dir__():
    return sorted(set(globals()) | set(_PROFILER_NAMES))

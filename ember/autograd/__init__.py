"""ember.autograd: the recorded graph, the backward engine and their user-facing tools.

    grad_mode.py     no_grad / enable_grad / set_grad_enabled / inference_mode
    graph.py         Node (grad_fn), AccumulateGrad, saved values, in-place rebasing
    engine.py        backward() and grad(): the iterative graph walk
    function.py      Function: user-defined forward/backward pairs
    functional.py    jacobian, hessian, vjp, jvp, hvp, vhp
    forward_ad.py    forward-mode AD: dual_level, make_dual, unpack_dual
    anomaly_mode.py  detect_anomaly / set_detect_anomaly
    gradcheck.py     finite-difference checks of the rules
    explain.py       explain(): every backward step in words, checked numerically
"""
from . import anomaly_mode, forward_ad, function, functional, grad_mode, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, is_anomaly_enabled, set_detect_anomaly  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .explain import explain  # noqa: F401
from .function import Function, NestedIOFunction, once_differentiable  # noqa: F401
from .grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401


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

"""ember.autograd: the recorded graph, the backward engine and their user-facing tools.

    grad_mode.py     no_grad / enable_grad / set_grad_enabled / inference_mode
    graph.py         Node (grad_fn), AccumulateGrad, saved values, in-place rebasing
    engine.py        backward() and grad(): the iterative graph walk
    anomaly_mode.py  detect_anomaly / set_detect_anomaly
    gradcheck.py     finite-difference checks of the rules
"""
from . import anomaly_mode, grad_mode, graph  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .engine import backward, grad  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .grad_mode import (enable_grad, inference_mode, no_grad,  # noqa: F401
                        set_grad_enabled)

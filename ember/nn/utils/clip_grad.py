"""Gradient clipping: rescale (or clamp) the `.grad` of parameters in place.

    get_total_norm(grads, p)       = || (||g_1||_p, ||g_2||_p, ...) ||_p
                                     (one vector made of all gradients; inf: the largest |g|)
    clip_grads_with_norm_(params, max_norm, total)
                                     g *= min(max_norm / (total + 1e-6), 1)
    clip_grad_norm_ = both of the above; returns the total norm (a 0-d tensor)
    clip_grad_value_(params, c)    g = clamp(g, -c, c)

`foreach` selects torch's fused multi-tensor kernels; ember has one implementation (a vectorised
NumPy call per tensor), so every value is accepted and gives the same result.

Read next: `convert_parameters.py`.
"""
import types
import warnings

from ... import _creation
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm
from ...ops.shape import stack

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The p-norm of all `tensors` seen as one vector (each tensor's norm, then the norm of
    those norms), on the first tensor's device."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _creation.tensor(0.0)
    device = tensors[0].device
    with no_grad():
        norms = [vector_norm(t, norm_type).to(device) for t in tensors]
        total = vector_norm(stack(norms), norm_type)  # stack promotes mixed dtypes
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every gradient by min(max_norm / (total_norm + 1e-6), 1), in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        # always multiply (by at most 1) rather than branch on the norm: torch does the same,
        # which avoids reading the norm back from the device
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the gradients' total p-norm to `max_norm`; returns the norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        from_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator is needed twice
        if from_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of `clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)

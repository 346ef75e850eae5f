"""ember.nn.grad: the gradients of a convolution with respect to its input and its weight
(torch.nn.grad), computed by running that convolution's backward.

Read next: `functional.py`.
"""
from .. import _creation
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from ..ops.nn import conv as _conv

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _backward(conv, shape, like, x, w, grad_output, wrt_input, **options):
    """d conv / d (input or weight) applied to grad_output; differentiable again when an
    operand requires grad."""
    leaf = _creation.zeros(shape, dtype=like.dtype, device=like.device).requires_grad_()
    with enable_grad():
        if wrt_input:
            out = conv(leaf, w, None, **options)
        else:
            out = conv(x, leaf, None, **options)
        create = grad_output.requires_grad or (w if wrt_input else x).requires_grad
        (result,) = _grad(out, leaf, grad_output, create_graph=create)
    return result


def _pair(n):
    conv = getattr(_conv, f"conv{n}d")

    def conv_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1,
                   groups=1):
        return _backward(conv, tuple(input_size), weight, None, weight, grad_output, True,
                         stride=stride, padding=padding, dilation=dilation, groups=groups)

    def conv_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                    groups=1):
        return _backward(conv, tuple(weight_size), input, input, None, grad_output, False,
                         stride=stride, padding=padding, dilation=dilation, groups=groups)

    conv_input.__name__ = f"conv{n}d_input"
    conv_input.__doc__ = (f"The gradient of conv{n}d with respect to an input of size "
                          "input_size, given weight and grad_output.")
    conv_weight.__name__ = f"conv{n}d_weight"
    conv_weight.__doc__ = (f"The gradient of conv{n}d with respect to a weight of size "
                           "weight_size, given input and grad_output.")
    return conv_input, conv_weight


conv1d_input, conv1d_weight = _pair(1)
conv2d_input, conv2d_weight = _pair(2)
conv3d_input, conv3d_weight = _pair(3)

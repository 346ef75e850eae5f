"""Activations and the softmax family: the ops behind `F.relu` ... `F.softmax`, plus the
torch-level names torch has for them (`torch.selu`, `torch.softmax`, `Tensor.softmax`, ...).

Every elementwise activation is one op: the kernel computes the value on raw arrays, the rule
gives the derivative with ember ops (so `create_graph=True` can differentiate it again).
float16 and bfloat16 inputs are computed in float32 and rounded once, as torch does.
`inplace=True` runs the same op through `Op.inplace`, which writes into the input (views
included) and rewrites its autograd history.

softmax and log_softmax subtract the maximum along `dim` before exponentiating, so exp never
overflows; their rules are single expressions of the saved output y:

    softmax:      dx = y * (g - sum(g * y))        (= g*y - y*sum(g*y))
    log_softmax:  dx = g - exp(y) * sum(g)

Composites, as in torch (their grad_fn names are torch's too): relu6 (hardtanh), selu (elu
with fixed constants), softsign, tanhshrink, softmin, rrelu (a random slope per element in
training, the mean slope in eval), gumbel_softmax.

Read next: norm.py.
"""
import functools
import math
import warnings

import numpy as np  # np.errstate only: torch returns inf/nan silently where NumPy would warn

from ... import _dtype as dt
from ..._utils import wrap_dim
from ...autograd import grad_mode
from .._op import REGISTRY, defop, export, op
from ..pointwise import where
from ..shape import cat

__all__ = ["threshold", "threshold_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_",
           "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
           "prelu", "rrelu", "rrelu_", "gelu", "silu", "mish", "softplus", "softshrink",
           "hardshrink", "tanhshrink", "softsign", "tanh", "sigmoid", "hardsigmoid", "hardswish",
           "logsigmoid", "glu", "softmax", "log_softmax", "softmin", "gumbel_softmax"]

# kernels of pointwise.py reused on raw arrays (both are exact and overflow-free)
_relu = REGISTRY["relu"]
_erf_kernel = REGISTRY["erf"].kernel
_sigmoid_kernel = REGISTRY["sigmoid"].kernel

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_K = math.sqrt(2 / math.pi)  # tanh approximation: tanh(K (x + C x^3))
_GELU_C = 0.044715


# ----------------------------------------------------------------------------------------------
# kernel helpers


def _quiet(kernel):
    """Run `kernel` with NumPy's floating-point warnings off."""
    @functools.wraps(kernel)  # Op reads the kernel's signature through __wrapped__
    def run(*args, **attrs):
        with np.errstate(all="ignore"):
            return kernel(*args, **attrs)
    return run


def _floating(name, xp, a):
    """`a` ready for a floating-point kernel: torch's error for other dtypes, and float16 /
    bfloat16 widened to float32 (dispatch rounds the result back to a's dtype)."""
    d = dt.from_numpy_dtype(a.dtype)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name(d)}'")
    return a.astype(xp.float32) if a.dtype.itemsize == 2 else a


def _not_bool(name, a):
    if a.dtype.kind == "b":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")


def _run(op_, input, inplace, **attrs):
    return op_.inplace(input, **attrs) if inplace else op_(input, **attrs)


# ----------------------------------------------------------------------------------------------
# elementwise activations: one op each


def _hardtanh_kernel(xp, a, *, min_val, max_val):
    _not_bool("hardtanh", a)
    # bounds in a's dtype: integer tensors truncate them (torch: hardtanh(int, -1.5) -> -1)
    return xp.clip(a, a.dtype.type(min_val), a.dtype.type(max_val))


def _threshold_kernel(xp, a, *, threshold, value):
    _not_bool("threshold_cpu", a)
    return xp.where(a > a.dtype.type(threshold), a, a.dtype.type(value))


def _leaky_relu_kernel(xp, a, *, negative_slope):
    x = _floating("leaky_relu_cpu", xp, a)
    return xp.where(x > 0, x, x * negative_slope)


def _elu_kernel(xp, a, *, alpha, scale, input_scale):
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    x = _floating("elu_cpu", xp, a)
    negative = xp.expm1(xp.minimum(x, 0) * input_scale) * (alpha * scale)
    return xp.where(x > 0, x * scale, negative)


def _elu_rule(g, a, alpha, scale, input_scale):
    # exp of the clamped input: the unused branch must stay finite for double backward
    slope = (alpha * scale * input_scale) * (a.clamp(max=0) * input_scale).exp()
    return (where(a > 0, g * scale, g * slope),)


@_quiet
def _softplus_kernel(xp, a, *, beta, threshold):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (torch's cut)."""
    x = _floating("softplus_cpu", xp, a)
    z = x * beta
    return xp.where(z > threshold, x, xp.log1p(xp.exp(xp.minimum(z, threshold))) / beta)


def _softshrink_kernel(xp, a, *, lambd):
    x = _floating("softshrink_cpu", xp, a)
    return xp.where(x > lambd, x - lambd, xp.where(x < -lambd, x + lambd, 0))


def _hardshrink_kernel(xp, a, *, lambd):
    x = _floating("hardshrink_cpu", xp, a)
    return xp.where((x >= -lambd) & (x <= lambd), 0, x)


def _hardsigmoid_kernel(xp, a):
    x = _floating("hardsigmoid_cpu", xp, a)
    return xp.clip(x + 3, 0, 6) / 6


def _hardswish_kernel(xp, a):
    x = _floating("hardswish_cpu", xp, a)
    return x * xp.clip(x + 3, 0, 6) / 6


def _silu_kernel(xp, a):
    x = _floating("silu_cpu", xp, a)
    return x * _sigmoid_kernel(xp, x)


def _mish_kernel(xp, a):
    x = _floating("mish_cpu", xp, a)
    return x * xp.tanh(xp.logaddexp(0, x))  # logaddexp(0, x) = softplus(x), overflow-free


@_quiet
def _logsigmoid_kernel(xp, a):
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)): exp's argument is never positive."""
    x = _floating("log_sigmoid_cpu", xp, a)
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


def _gelu_kernel(xp, a, *, approximate):
    x = _floating("GeluKernelImpl", xp, a)
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_GELU_K * (x + _GELU_C * x * x * x)))
    return 0.5 * x * (1 + _erf_kernel(xp, x * _SQRT_HALF))


def _gelu_rule(g, a, approximate):
    if approximate == "tanh":
        t = ((a + _GELU_C * a * a * a) * _GELU_K).tanh()
        slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _GELU_K * (1 + 3 * _GELU_C * a * a)
    else:  # d/dx x Phi(x) = Phi(x) + x phi(x)
        slope = 0.5 * (1 + (a * _SQRT_HALF).erf()) + a * (-0.5 * a * a).exp() * _INV_SQRT_2PI
    return (g * slope,)


def _silu_rule(g, a):
    s = a.sigmoid()
    return (g * s * (1 + a * (1 - s)),)


def _mish_rule(g, a):
    t = _softplus(a, beta=1.0, threshold=20.0).tanh()
    return (g * (t + a * a.sigmoid() * (1 - t * t)),)


def _hardswish_rule(g, a):
    return (where(a < -3, 0, where(a <= 3, g * (a / 3 + 0.5), g)),)


# name                              promotion kernel            backward
_hardtanh = defop("hardtanh",       "same", _hardtanh_kernel,
                  lambda g, a, min_val, max_val: (where((a <= min_val) | (a >= max_val), 0, g),))
_threshold = defop("threshold",     "same", _threshold_kernel,
                   lambda g, a, threshold: (where(a <= threshold, 0, g),))
_leaky_relu = defop("leaky_relu",   "same", _leaky_relu_kernel,
                    lambda g, a, negative_slope: (where(a > 0, g, g * negative_slope),))
_elu = defop("elu",                 "same", _elu_kernel, _elu_rule)
_celu = defop("celu",               "same", _elu_kernel, _elu_rule)
_softplus = defop("softplus",       "same", _softplus_kernel,
                  lambda g, a, beta, threshold: (where(a * beta > threshold, g,
                                                       g * (a * beta).sigmoid()),))
_softshrink = defop("softshrink",   "same", _softshrink_kernel,
                    lambda g, a, lambd: (where((a >= -lambd) & (a <= lambd), 0, g),))
_hardshrink = defop("hardshrink",   "same", _hardshrink_kernel,
                    lambda g, a, lambd: (where((a >= -lambd) & (a <= lambd), 0, g),))
_hardsigmoid = defop("hardsigmoid", "same", _hardsigmoid_kernel,
                     lambda g, a: (where((a > -3) & (a < 3), g / 6, 0),))
_hardswish = defop("hardswish",     "same", _hardswish_kernel, _hardswish_rule)
_silu = defop("silu",               "same", _silu_kernel, _silu_rule)
_mish = defop("mish",               "same", _mish_kernel, _mish_rule)
_logsigmoid = defop("log_sigmoid",  "same", _logsigmoid_kernel,
                    lambda g, a: (g * (-a).sigmoid(),))
_gelu = defop("gelu",               "same", _gelu_kernel, _gelu_rule)


# ----------------------------------------------------------------------------------------------
# prelu and glu: an elementwise op with a second operand


def _channel_view(xp, weight, ndim):
    """prelu's weight shaped to broadcast along dim 1 (one slope, or one per channel)."""
    if weight.size == 1:
        return weight.reshape(())
    return weight.reshape((-1,) + (1,) * (ndim - 2))


@op("same", name="prelu", node_name="PreluKernelBackward0")
def _prelu(xp, a, weight):
    x = _floating("prelu_cpu", xp, a)
    w = _channel_view(xp, weight.astype(x.dtype, copy=False), a.ndim)
    return xp.where(x > 0, x, w * x)


@_prelu.grad
def _prelu(g, a, weight, needs_input_grad):
    w = weight.reshape(()) if weight.numel() == 1 else \
        weight.reshape((-1,) + (1,) * (a.ndim - 2))
    positive = a > 0
    grad_a = where(positive, g, g * w) if needs_input_grad[0] else None
    grad_w = None
    if needs_input_grad[1]:
        per_element = where(positive, 0, g * a)
        if weight.numel() == 1:
            grad_w = per_element.sum().reshape(weight.shape)
        else:
            grad_w = per_element.sum([d for d in range(a.ndim) if d != 1])
    return grad_a, grad_w


@op("same", name="glu")
def _glu(xp, a, *, dim):
    """First half of `dim` times the sigmoid of the second half."""
    x = _floating("glu_cpu", xp, a)
    first, second = xp.split(x, 2, axis=dim)
    return first * _sigmoid_kernel(xp, second)


@_glu.grad
def _glu(g, a, dim):
    first, second = a.chunk(2, dim)
    s = second.sigmoid()
    return (cat([g * s, g * first * s * (1 - s)], dim),)


# ----------------------------------------------------------------------------------------------
# softmax and log_softmax


def _along(kernel):
    """Run a reduction-along-`dim` kernel on a 0-d input as on one element, and return empty
    inputs as they are (max over an empty dim has no value)."""
    @functools.wraps(kernel)
    def run(xp, a, *, dim):
        if a.size == 0:
            return xp.empty_like(a)
        if a.ndim == 0:
            return kernel(xp, a.reshape(1), dim=0).reshape(())
        return kernel(xp, a, dim=dim)
    return run


@op("same", name="softmax", node_name="SoftmaxBackward0")
@_along
@_quiet
def _softmax(xp, a, *, dim):
    x = _floating("softmax_lastdim_kernel_impl", xp, a)
    e = xp.exp(x - x.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


@_softmax.grad
def _softmax(g, out, dim):
    y, g = _float32_if_half(out, g)
    return ((y * (g - (g * y).sum(dim, keepdim=True))).to(out.dtype),)


@op("same", name="log_softmax", node_name="LogSoftmaxBackward0")
@_along
@_quiet
def _log_softmax(xp, a, *, dim):
    x = _floating("log_softmax_lastdim_kernel_impl", xp, a)
    shifted = x - x.max(axis=dim, keepdims=True)
    shifted -= xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted


@_log_softmax.grad
def _log_softmax(g, out, dim):
    y, g = _float32_if_half(out, g)
    return ((g - y.exp() * g.sum(dim, keepdim=True)).to(out.dtype),)


def _float32_if_half(*tensors):
    """Half-precision rules sum in float32, as torch's kernels do (a float16 sum over a row
    loses digits the forward kept)."""
    if tensors[0].dtype.itemsize == 2:
        return [t.float() for t in tensors]
    return tensors


def _implicit_dim(name, ndim, stacklevel):
    """torch's deprecated choice when `dim` is not given: 0 for 0-, 1- and 3-d inputs, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel + 1)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_input(name, input, dim, stacklevel, dtype):
    if dim is None:
        dim = _implicit_dim(name, input.ndim, stacklevel + 1)
    if dtype is not None:
        input = input.to(dtype)
    return input, wrap_dim(dim, input.ndim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along `dim` (computed as exp(x - max) / sum(exp(x - max)))."""
    input, dim = _softmax_input("softmax", input, dim, _stacklevel, dtype)
    return _softmax(input, dim=dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - log(sum(exp(x))) along `dim`, without forming the overflow-prone sum of exps."""
    input, dim = _softmax_input("log_softmax", input, dim, _stacklevel, dtype)
    return _log_softmax(input, dim=dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along `dim`."""
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(-input, dim=wrap_dim(dim, input.ndim))


@export(name="softmax", method=True)
def _torch_softmax(input, dim, dtype=None):
    """torch.softmax / Tensor.softmax: `dim` is required."""
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(input, dim=wrap_dim(dim, input.ndim))


@export(name="log_softmax", method=True)
def _torch_log_softmax(input, dim, dtype=None):
    """torch.log_softmax / Tensor.log_softmax: `dim` is required."""
    if dtype is not None:
        input = input.to(dtype)
    return _log_softmax(input, dim=wrap_dim(dim, input.ndim))


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + Gumbel noise) / tau); with hard=True the forward value is one-hot
    at the argmax while the gradient is the soft sample's (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -logits.new_empty(logits.shape).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = logits.new_zeros(logits.shape).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ----------------------------------------------------------------------------------------------
# public functions: F.<name>(input, ..., inplace=False), F.<name>_ and torch.<name>


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else `value`."""
    return _run(_threshold, input, inplace, threshold=threshold, value=value)


def threshold_(input, threshold, value):
    return _threshold.inplace(input, threshold=threshold, value=value)


def relu(input, inplace=False):
    """max(x, 0)."""
    return _relu.inplace(input) if inplace else _relu(input)


@export(method=True)  # torch.relu_ is a function too (pointwise.py gives only the method)
def relu_(input):
    return _relu.inplace(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clipped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run(_hardtanh, input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh on [0, 6]."""
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, else alpha * (exp(x) - 1)."""
    return _run(_elu, input, inplace, alpha=alpha, scale=1.0, input_scale=1.0)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _run(_elu, input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _run(_celu, input, inplace, alpha=alpha, scale=1.0, input_scale=1.0 / alpha)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, else negative_slope * x."""
    return _run(_leaky_relu, input, inplace, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


@export(method=True)
def prelu(input, weight):
    """leaky_relu with a learnt slope: one for all channels, or one per channel (dim 1)."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    return _prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each non-positive element gets its own slope drawn
    from U(lower, upper); in eval the slope is the mean, (lower + upper) / 2."""
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower, upper, training, inplace, generator):
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    if not input.is_floating_point():
        raise NotImplementedError(f"\"rrelu_with_noise_cpu\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")
    with grad_mode.no_grad():
        slopes = input.new_empty(input.shape).uniform_(lower, upper, generator=generator)
        noise = where(input <= 0, slopes, 1.0)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


def gelu(input, approximate="none"):
    """x * Phi(x) (Phi: the standard normal CDF), or its tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x)."""
    return _run(_silu, input, inplace)


def mish(input, inplace=False):
    """x * tanh(softplus(x))."""
    return _run(_mish, input, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear where beta * x > threshold."""
    return _softplus(input, beta=beta, threshold=threshold)


@export(method=True)
def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return _hardshrink(input, lambd=lambd)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _softshrink(input, lambd=lambd)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def softsign(input):
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return _run(_hardsigmoid, input, inplace)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6."""
    return _run(_hardswish, input, inplace)


def logsigmoid(input):
    """log(sigmoid(x)), computed without overflow."""
    return _logsigmoid(input)


def glu(input, dim=-1):
    """a * sigmoid(b), where a and b are the two halves of `input` along `dim`."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = wrap_dim(dim, input.ndim)
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size "
                           f"{input.shape[dim]}")
    return _glu(input, dim=dim)


# torch-level functions: torch.selu(input) etc. take no `inplace` argument


@export(name="selu")
def _torch_selu(input):
    return selu(input)


@export(name="selu_")
def _torch_selu_(input):
    return selu(input, inplace=True)


@export(name="celu")
def _torch_celu(input, alpha=1.0):
    return celu(input, alpha)


@export(name="celu_")
def _torch_celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


@export(name="threshold")
def _torch_threshold(input, threshold, value):
    return _threshold(input, threshold=threshold, value=value)


@export(name="threshold_")
def _torch_threshold_(input, threshold, value):
    return _threshold.inplace(input, threshold=threshold, value=value)


@export(name="rrelu")
def _torch_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, False, generator)


@export(name="rrelu_")
def _torch_rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu(input, lower, upper, training, True, generator)

"""Activations and the softmax family: the ops behind `F.relu` ... `F.softmax`, plus the
torch-level names torch has for them (`torch.selu`, `torch.softmax`, `Tensor.softmax`, ...).

Every elementwise activation is one op whose kernel computes the value on raw arrays. Its rule
has two paths (the pattern of rnn.py):
  * plain backward -- the engine runs rules with grad mode off: one fused op,
    `<name>_backward(g, a)`, computes g * f'(a) in a single kernel;
  * create_graph=True -- grad mode is on inside the rule: the same derivative written with
    ember ops, so that it can be differentiated again.
float16 and bfloat16 inputs are computed in float32 and rounded once, as torch does.
`inplace=True` runs the same op through `Op.inplace`, which writes into the input (views
included) and rewrites its autograd history.

The kernels are written for NumPy, where each ufunc call is one pass over memory:
  * in-place ufuncs on temporaries the kernel owns (`t *= x`, `xp.exp(t, out=t)`) and few
    fresh arrays (a new large array costs page faults);
  * no xp.where on a data-dependent mask: NumPy's where branches per element and runs about
    ten times slower on an unpredictable mask (the sign of activations) than arithmetic.
    Exact substitutes: clipping (max(x, 0) = clip(x, 0, inf); NumPy's clip with two bounds is
    its fast loop) and `_select`, a where on the bit patterns;
  * float32 stays float32. gelu's erf(x / sqrt 2) for float32 is tanh(x P(x^2)), P fitted
    for ember (`_PHI_TANH`); float64 uses the exact erf of pointwise.py. erf is the bulk of
    gelu's work, so the op also returns Phi(x) as a hidden workspace output, which its
    backward reads instead of evaluating erf again (2048x1024 on two threads: backward
    4.5 -> 2.0 ms, forward ~0.6 ms slower for the second output).

softmax and log_softmax subtract the maximum along `dim` before exponentiating, so exp never
overflows; their backward kernels are single expressions of the saved output y:

    softmax:      dx = y * (g - sum(g * y))
    log_softmax:  dx = g - exp(y) * sum(g)

Composites, as in torch (their grad_fn names are torch's too): relu6 (hardtanh), selu (elu
with fixed constants), softsign, tanhshrink, softmin, rrelu (a random slope per element in
training, the mean slope in eval), gumbel_softmax.

Read next: norm.py.
"""
import functools
import math
import warnings

import numpy as np  # np.errstate (torch gives inf/nan silently where NumPy warns); rrelu noise

from ... import _dtype as dt
from ..._functorch import batch_rules
from ..._parallel import by_rows
from ..._utils import wrap_dim
from ...autograd.forward_ad import rules_must_differentiate
from .._dispatch import call_unary
from .._op import ELEMENTWISE, REGISTRY, defop, export, op
from ..pointwise import _quiet, where
from ..reduce import _BLAS_SUM_MIN
from ..shape import cat

__all__ = ["threshold", "threshold_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_",
           "elu", "elu_", "selu", "selu_", "celu", "celu_", "leaky_relu", "leaky_relu_",
           "prelu", "rrelu", "rrelu_", "gelu", "silu", "mish", "softplus", "softshrink",
           "hardshrink", "tanhshrink", "softsign", "tanh", "sigmoid", "hardsigmoid", "hardswish",
           "logsigmoid", "glu", "softmax", "log_softmax", "softmin", "gumbel_softmax"]

_relu = REGISTRY["relu"]
_erf_kernel = REGISTRY["erf"].kernel  # the exact erf (float64 inside), for float64 gelu

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_K = math.sqrt(2 / math.pi)  # tanh approximation: tanh(K (x + C x^3))
_GELU_C = 0.044715
_INF = math.inf

# erf(x / sqrt 2) = tanh(x P(x^2)) for float32 gelu. P (coefficients from x^0 up) was fitted
# for ember in float64 by Lawson's weighted minimax on 0 <= x <= 6, minimising the error of
# erf itself (artanh(erf) grows like x^2/2, smooth, so seven terms suffice): at most 5.8e-8,
# 1.3e-7 once evaluated in float32 arithmetic (float32's spacing just below 1 is 6e-8; torch's
# vectorised float32 erf is good to 1.5e-7). The leading coefficient is positive, so x P(x^2)
# keeps growing beyond the fitted range and tanh saturates at +-1 as erf does.
_PHI_TANH = (7.978849414598754e-01, 3.6333084576584636e-02, -3.25949790066737e-05,
             -5.530619204855184e-05, 3.964744073293977e-06, -1.322633090194614e-07,
             1.7561698026652513e-09)


# ----------------------------------------------------------------------------------------------
# kernel helpers


def _elementwise(kernel):
    """An elementwise kernel with NumPy's floating-point warnings off, whose 0-d inputs run as
    1-element arrays: arithmetic on 0-d arrays returns scalars, which the kernels' in-place
    ufuncs could not write into."""
    @functools.wraps(kernel)
    def run(xp, a, *args, **attrs):
        with np.errstate(all="ignore"):
            if a.ndim:
                return kernel(xp, a, *args, **attrs)
            args = [t.reshape(1) if t.ndim == 0 else t for t in args]
            out = kernel(xp, a.reshape(1), *args, **attrs)
            if type(out) is tuple:
                return tuple(o.reshape(()) for o in out)
            return out.reshape(())
    return run


def _floating(name, xp, a):
    """`a` ready for a floating-point kernel: torch's error for other dtypes, and float16 /
    bfloat16 widened to float32 (dispatch rounds the result back to a's dtype)."""
    d = dt.from_numpy_dtype(a.dtype)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{dt.scalar_name(d)}'")
    return a.astype(xp.float32) if a.dtype.itemsize == 2 else a


def _widened(xp, g, x):
    """The incoming gradient in the dtype the kernel computes in (x's, after `_floating`)."""
    return g if g.dtype == x.dtype else g.astype(x.dtype)


def _ordered_dtype(name, a):
    """Clipping and thresholds compare values: bools and complex numbers are refused."""
    if a.dtype.kind in "bc":
        kind = "Bool" if a.dtype.kind == "b" else dt.scalar_name(dt.from_numpy_dtype(a.dtype))
        raise NotImplementedError(f"\"{name}\" not implemented for '{kind}'")


def _run(op_, input, inplace, **attrs):
    return op_.inplace(input, **attrs) if inplace else op_(input, **attrs)


_UINT = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def _bits(xp, v, dtype):
    """An array (or a number, made one) of `dtype`, viewed as unsigned integers as wide."""
    if not isinstance(v, xp.ndarray):
        v = xp.asarray(v, dtype=dtype)
    return v.view(_UINT[dtype.itemsize])


def _select(xp, mask, a, b, dtype, invert=False, overwrite_a=False):
    """xp.where(mask, a, b) -- or where(~mask, a, b) with invert=True -- for arrays or numbers
    of `dtype`, as a new array. Computed on the bit patterns, b ^ ((a ^ b) & m) with m all ones
    where a is picked: exact for every value (nan and inf too), and a few branch-free integer
    passes instead of NumPy's per-element branch. overwrite_a=True lets it use array `a` (a
    temporary of the kernel's) as scratch instead of allocating a ^ b."""
    m = mask.astype(_UINT[dtype.itemsize])
    if invert:
        m -= 1                 # 1 -> 0 and 0 -> all ones (unsigned arithmetic wraps)
    else:
        xp.negative(m, out=m)  # 1 -> all ones
    if isinstance(b, (int, float)) and b == 0:
        m &= _bits(xp, a, dtype)
        return m.view(dtype)
    b_bits = _bits(xp, b, dtype)
    if overwrite_a:
        a_bits = _bits(xp, a, dtype)
        a_bits ^= b_bits
        m &= a_bits
    else:
        m &= _bits(xp, a, dtype) ^ b_bits
    m ^= b_bits
    return m.view(dtype)


def _positive_part(xp, x):
    """max(x, 0) as a new array (nan stays nan); clip with two bounds is NumPy's fast loop."""
    return xp.clip(x, 0, _INF)


def _negative_part(xp, x):
    """min(x, 0) as a new array (nan stays nan)."""
    return xp.clip(x, -_INF, 0)


def _sigmoid(xp, x):
    """1 / (1 + exp(-x)) as a new array; where exp(-x) overflows the result is 1/inf = 0 (the
    true value is below float32's smallest normal number). 1 + exp(t) is computed as
    2 + expm1(t), one rounding either way: NumPy's expm1 is a quarter faster than its exp."""
    s = xp.negative(x)
    xp.expm1(s, out=s)
    s += 2
    return xp.reciprocal(s, out=s)


def _erf_of_scaled32(xp, x, u, out):
    """erf(x / sqrt 2) for float32 x, given u = x * x: tanh(x P(u)), written into `out` (which
    may not be u)."""
    xp.multiply(u, _PHI_TANH[-1], out=out)
    out += _PHI_TANH[-2]
    for c in _PHI_TANH[-3::-1]:
        out *= u
        out += c
    out *= x
    return xp.tanh(out, out=out)


# ----------------------------------------------------------------------------------------------
# elementwise activations: a kernel, a fused backward kernel, and a rule choosing between that
# and the differentiable ember-op derivative


@_elementwise
def _hardtanh_kernel(xp, a, *, min_val, max_val):
    _ordered_dtype("hardtanh", a)
    # bounds in a's dtype: integer tensors truncate them (torch: hardtanh(int, -1.5) -> -1)
    return xp.clip(a, a.dtype.type(min_val), a.dtype.type(max_val))


@_elementwise
def _hardtanh_backward_kernel(xp, g, a, *, min_val, max_val):
    """g, except 0 where a <= min_val or a >= max_val (a nan a keeps g, as in torch)."""
    return _select(xp, (a <= min_val) | (a >= max_val), g, 0, g.dtype, invert=True)


def _hardtanh_rule(g, a, min_val, max_val):
    if rules_must_differentiate():
        return (where((a <= min_val) | (a >= max_val), 0, g),)
    return (_hardtanh_backward(g, a, min_val=min_val, max_val=max_val),)


@_elementwise
def _threshold_kernel(xp, a, *, threshold, value):
    _ordered_dtype("threshold_cpu", a)
    return _select(xp, a > a.dtype.type(threshold), a, a.dtype.type(value), a.dtype)


@_elementwise
def _leaky_relu_kernel(xp, a, *, negative_slope):
    """max(x, 0) + slope * min(x, 0): one of the terms is always zero, so this is exact."""
    x = _floating("leaky_relu_cpu", xp, a)
    y = _negative_part(xp, x)
    y *= negative_slope
    y += _positive_part(xp, x)
    return y


@_elementwise
def _leaky_relu_backward_kernel(xp, g, a, *, negative_slope):
    x = _floating("leaky_relu_backward", xp, a)
    slope = _select(xp, x > 0, 1.0, negative_slope, x.dtype)
    slope *= _widened(xp, g, x)
    return slope


def _leaky_relu_rule(g, a, negative_slope):
    if rules_must_differentiate():
        return (where(a > 0, g, g * negative_slope),)
    return (_leaky_relu_backward(g, a, negative_slope=negative_slope),)


@_elementwise
def _elu_kernel(xp, a, *, alpha, scale, input_scale):
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1): the two branches
    computed on max(x, 0) and min(x, 0), so each is zero where the other applies."""
    x = _floating("elu_cpu", xp, a)
    y = _negative_part(xp, x)
    if input_scale != 1:
        y *= input_scale
    xp.expm1(y, out=y)
    y *= alpha * scale
    positive = _positive_part(xp, x)
    if scale != 1:
        positive *= scale
    y += positive
    return y


@_elementwise
def _elu_backward_kernel(xp, g, a, *, alpha, scale, input_scale):
    """g * alpha * scale * input_scale * exp(input_scale * a) where a <= 0, else g * scale."""
    x = _floating("elu_backward_cpu", xp, a)
    slope = _negative_part(xp, x)  # exp of the clamped input: the unused branch stays finite
    if input_scale != 1:
        slope *= input_scale
    xp.exp(slope, out=slope)
    slope *= alpha * scale * input_scale
    slope = _select(xp, x <= 0, slope, scale, x.dtype, overwrite_a=True)  # nan: scale (torch)
    slope *= _widened(xp, g, x)
    return slope


def _elu_rule(g, a, alpha, scale, input_scale):
    if not rules_must_differentiate():
        return (_elu_backward(g, a, alpha=alpha, scale=scale, input_scale=input_scale),)
    slope = (alpha * scale * input_scale) * (a.clamp(max=0) * input_scale).exp()
    return (where(a > 0, g * scale, g * slope),)


@_elementwise
def _softplus_kernel(xp, a, *, beta, threshold):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (torch's cut)."""
    x = _floating("softplus_cpu", xp, a)
    z = x * beta
    linear = z > threshold
    xp.clip(z, -_INF, threshold, out=z)  # exp must not overflow where x itself is the value
    xp.exp(z, out=z)
    xp.log1p(z, out=z)
    if beta != 1:
        z /= beta
    return _select(xp, linear, z, x, x.dtype, invert=True, overwrite_a=True) if linear.any() \
        else z


@_elementwise
def _softplus_backward_kernel(xp, g, a, *, beta, threshold):
    """g * sigmoid(beta a) = g / (1 + exp(-beta a)), and g itself where beta a > threshold."""
    x = _floating("softplus_backward_cpu", xp, a)
    g = _widened(xp, g, x)
    e = x * -beta
    linear = e < -threshold
    xp.expm1(e, out=e)
    e += 2                        # 1 + exp(-beta a), as in `_sigmoid`
    dx = xp.divide(g, e, out=e)
    return _select(xp, linear, dx, g, x.dtype, invert=True, overwrite_a=True) if linear.any() \
        else dx


def _softplus_rule(g, a, beta, threshold):
    if rules_must_differentiate():
        return (where(a * beta > threshold, g, g * (a * beta).sigmoid()),)
    return (_softplus_backward(g, a, beta=beta, threshold=threshold),)


@_elementwise
def _softshrink_kernel(xp, a, *, lambd):
    """x - clip(x, -lambd, lambd): x - lambd above lambd, x + lambd below -lambd, 0 between."""
    x = _floating("softshrink_cpu", xp, a)
    y = xp.clip(x, -lambd, lambd)
    return xp.subtract(x, y, out=y)


@_elementwise
def _hardshrink_kernel(xp, a, *, lambd):
    x = _floating("hardshrink_cpu", xp, a)
    return _select(xp, (x >= -lambd) & (x <= lambd), x, 0, x.dtype, invert=True)


@_elementwise
def _shrink_backward_kernel(xp, g, a, *, lambd):
    """g, except 0 where -lambd <= a <= lambd (softshrink and hardshrink alike)."""
    x = _floating("shrink_backward", xp, a)
    g = _widened(xp, g, x)
    return _select(xp, (x >= -lambd) & (x <= lambd), g, 0, x.dtype, invert=True)


def _shrink_rule(backward):
    def rule(g, a, lambd):
        if rules_must_differentiate():
            return (where((a >= -lambd) & (a <= lambd), 0, g),)
        return (backward(g, a, lambd=lambd),)
    return rule


@_elementwise
def _hardsigmoid_kernel(xp, a):
    """relu6(x + 3) / 6."""
    x = _floating("hardsigmoid_cpu", xp, a)
    y = x + 3.0
    xp.clip(y, 0, 6, out=y)
    y *= 1 / 6
    return y


@_elementwise
def _hardsigmoid_backward_kernel(xp, g, a):
    """g / 6 where -3 < a < 3, else 0."""
    x = _floating("hardsigmoid_backward", xp, a)
    dx = _select(xp, (x > -3) & (x < 3), _widened(xp, g, x), 0, x.dtype)
    dx *= 1 / 6
    return dx


def _hardsigmoid_rule(g, a):
    if rules_must_differentiate():
        return (where((a > -3) & (a < 3), g / 6, 0),)
    return (_hardsigmoid_backward(g, a),)


@_elementwise
def _hardswish_kernel(xp, a):
    """x * relu6(x + 3) / 6."""
    x = _floating("hardswish_cpu", xp, a)
    y = x + 3.0
    xp.clip(y, 0, 6, out=y)
    y *= x
    y *= 1 / 6
    return y


@_elementwise
def _hardswish_backward_kernel(xp, g, a):
    """g * (a / 3 + 1/2) on [-3, 3], g above, 0 below."""
    x = _floating("hardswish_backward", xp, a)
    slope = x * (1 / 3)
    slope += 0.5
    slope = _select(xp, x <= 3, slope, 1.0, x.dtype, overwrite_a=True)
    slope *= _widened(xp, g, x)
    return _select(xp, x < -3, slope, 0, x.dtype, invert=True)


def _hardswish_rule(g, a):
    if rules_must_differentiate():
        return (where(a < -3, 0, where(a <= 3, g * (a / 3 + 0.5), g)),)
    return (_hardswish_backward(g, a),)


@_elementwise
def _silu_kernel(xp, a):
    """x / (1 + exp(-x)), the denominator as in `_sigmoid`."""
    x = _floating("silu_cpu", xp, a)
    y = xp.negative(x)
    xp.expm1(y, out=y)
    y += 2
    return xp.divide(x, y, out=y)


@_elementwise
def _silu_backward_kernel(xp, g, a):
    """g * s * (1 + a (1 - s)), s = sigmoid(a)."""
    x = _floating("silu_backward_cpu", xp, a)
    s = _sigmoid(xp, x)
    dx = xp.subtract(1, s)
    dx *= x
    dx += 1
    dx *= s
    dx *= _widened(xp, g, x)
    return dx


def _silu_rule(g, a):
    if not rules_must_differentiate():
        return (_silu_backward(g, a),)
    s = a.sigmoid()
    return (g * s * (1 + a * (1 - s)),)


def _mish_parts(xp, x):
    """(n, e) with e = exp(x) and n = e (e + 2), so that tanh(softplus(x)) = n / (n + 2)
    (tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1)). x is clipped at 20 first: beyond,
    tanh(softplus(x)) is 1 in float32 and e would overflow in float16's widened computation."""
    e = xp.clip(x, -_INF, 20.0)
    xp.exp(e, out=e)
    n = e + 2.0
    n *= e
    return n, e


@_elementwise
def _mish_kernel(xp, a):
    """x * tanh(softplus(x)) = x * n / (n + 2) (see `_mish_parts`)."""
    x = _floating("mish_cpu", xp, a)
    n, denominator = _mish_parts(xp, x)
    xp.add(n, 2.0, out=denominator)
    n /= denominator
    n *= x
    return n


@_elementwise
def _mish_backward_kernel(xp, g, a):
    """g * (t + a sigmoid(a) (1 - t^2)), t = tanh(softplus(a))."""
    x = _floating("mish_backward_cpu", xp, a)
    t, e = _mish_parts(xp, x)
    work = t + 2.0
    t /= work
    xp.add(e, 1.0, out=work)
    e /= work                     # sigmoid(x) = e / (1 + e)
    xp.multiply(t, t, out=work)
    xp.subtract(1.0, work, out=work)
    work *= e
    work *= x
    work += t
    work *= _widened(xp, g, x)
    return work


def _mish_rule(g, a):
    if not rules_must_differentiate():
        return (_mish_backward(g, a),)
    t = _softplus(a, beta=1.0, threshold=20.0).tanh()
    return (g * (t + a * a.sigmoid() * (1 - t * t)),)


@_elementwise
def _logsigmoid_kernel(xp, a):
    """log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)): exp's argument is never positive."""
    x = _floating("log_sigmoid_cpu", xp, a)
    t = xp.abs(x)
    xp.negative(t, out=t)
    xp.exp(t, out=t)
    xp.log1p(t, out=t)
    y = _negative_part(xp, x)
    y -= t
    return y


@_elementwise
def _logsigmoid_backward_kernel(xp, g, a):
    """g * sigmoid(-a) = g / (1 + exp(a)), the denominator as in `_sigmoid`."""
    x = _floating("log_sigmoid_backward_cpu", xp, a)
    e = xp.expm1(x)
    e += 2
    return xp.divide(_widened(xp, g, x), e, out=e)


def _logsigmoid_rule(g, a):
    if rules_must_differentiate():
        return (g * (-a).sigmoid(),)
    return (_logsigmoid_backward(g, a),)


@_elementwise
def _gelu_kernel(xp, a, *, approximate):
    """(gelu(a), s), s the part of the slope that only the forward computes -- Phi(x), or
    t = tanh(K x (1 + C x^2)) for the tanh form -- kept so that the backward does not
    evaluate erf (~14 passes) again. Both results are written in place, in row blocks on
    the thread pool for large inputs and in cache-sized pieces: no temporary arrays at all."""
    x = _floating("GeluKernelImpl", xp, a)
    outs = (xp.empty(x.shape, x.dtype), xp.empty(x.shape, x.dtype))
    # a C-contiguous input as a matrix of its last dim's rows (views), which `by_rows` can
    # cut into pieces that fit in cache: 2048 x 1024 float32, ms, 1 thread 5.4 -> 4.6,
    # 2 threads 2.8 -> 2.5 (its backward, of half as many passes, gained nothing)
    rows = (-1, x.shape[-1]) if x.ndim > 2 and x.size and x.flags.c_contiguous else x.shape
    by_rows(_gelu_into, xp, tuple(o.reshape(rows) for o in outs), x.reshape(rows),
            in_cache=True, approximate=approximate)
    return outs


def _gelu_into(xp, outs, x, *, approximate):
    y, s = outs
    if approximate == "tanh":
        _gelu_tanh_saved(xp, x, s)
        xp.add(s, 1, out=y)    # 0.5 x (1 + t)
        y *= x
        y *= 0.5
        return
    if x.dtype == xp.float32:
        xp.multiply(x, x, out=y)  # x * x, in y's buffer until y is written
        _erf_of_scaled32(xp, x, y, s)
    else:
        s[...] = _erf_kernel(xp, x * _SQRT_HALF)
    s += 1
    s *= 0.5                   # Phi(x)
    xp.multiply(x, s, out=y)   # x Phi(x)


def _gelu_tanh_saved(xp, x, t):
    """t = tanh(K x (1 + C x^2)), written into `t`."""
    xp.multiply(x, x, out=t)
    t *= _GELU_K * _GELU_C
    t += _GELU_K
    t *= x
    xp.tanh(t, out=t)


@_elementwise
def _gelu_backward_kernel(xp, g, a, s, *, approximate):
    """g * d/da of a Phi(a) = g * (Phi(a) + a phi(a)), or of the tanh approximation, with s
    from the forward (worked out again when it was rounded to a half-precision input)."""
    x = _floating("GeluBackwardKernelImpl", xp, a)
    g = _widened(xp, g, x)
    if s.dtype != x.dtype:
        s = _gelu_kernel(xp, x, approximate=approximate)[1]
    out = xp.empty(x.shape, x.dtype)
    return by_rows(_gelu_backward_into, xp, (out,), g, x, s, approximate=approximate)[0]


def _gelu_backward_into(xp, outs, g, x, s, *, approximate):
    (out,) = outs
    if approximate == "tanh":
        _gelu_tanh_backward(xp, g, x, s, out)
        return
    xp.multiply(x, x, out=out)
    out *= -0.5
    xp.exp(out, out=out)
    out *= x
    out *= _INV_SQRT_2PI          # x phi(x)
    out += s
    out *= g


def _gelu_tanh_backward(xp, g, x, t, out):
    """With t = tanh(K x (1 + C x^2)): d/dx = (1 + t) / 2 + x K (1 + 3 C x^2) (1 - t^2) / 2,
    times g, into `out`."""
    u = x * x
    u *= 1.5 * _GELU_K * _GELU_C
    u += 0.5 * _GELU_K
    u *= x                        # x K (1 + 3 C x^2) / 2
    xp.multiply(t, t, out=out)
    xp.subtract(1.0, out, out=out)
    u *= out
    xp.add(t, 1, out=out)
    out *= 0.5
    out += u
    out *= g


def _gelu_rule(g, a, workspace, approximate):
    g = g[0]  # the workspace output s gets no gradient
    if not rules_must_differentiate():
        return (_gelu_backward(g, a, workspace[0], approximate=approximate),)
    if approximate == "tanh":
        t = ((a + _GELU_C * a * a * a) * _GELU_K).tanh()
        slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _GELU_K * (1 + 3 * _GELU_C * a * a)
    else:  # d/dx x Phi(x) = Phi(x) + x phi(x)
        slope = 0.5 * (1 + (a * _SQRT_HALF).erf()) + a * (-0.5 * a * a).exp() * _INV_SQRT_2PI
    return (g * slope,)


def _backward_op(name, kernel):
    """`<name>_backward(g, a, **attrs)`: the fused derivative; rules call it only with grad
    mode off, so it needs no rule of its own."""
    return defop(name + "_backward", "same", kernel)


_hardtanh_backward = _backward_op("hardtanh", _hardtanh_backward_kernel)
_leaky_relu_backward = _backward_op("leaky_relu", _leaky_relu_backward_kernel)
_elu_backward = _backward_op("elu", _elu_backward_kernel)
_softplus_backward = _backward_op("softplus", _softplus_backward_kernel)
_softshrink_backward = _backward_op("softshrink", _shrink_backward_kernel)
_hardshrink_backward = _backward_op("hardshrink", _shrink_backward_kernel)
_hardsigmoid_backward = _backward_op("hardsigmoid", _hardsigmoid_backward_kernel)
_hardswish_backward = _backward_op("hardswish", _hardswish_backward_kernel)
_silu_backward = _backward_op("silu", _silu_backward_kernel)
_mish_backward = _backward_op("mish", _mish_backward_kernel)
_logsigmoid_backward = _backward_op("log_sigmoid", _logsigmoid_backward_kernel)
_gelu_backward = _backward_op("gelu", _gelu_backward_kernel)

# name                              promotion kernel            backward
_hardtanh = defop("hardtanh",       "same", _hardtanh_kernel,   _hardtanh_rule)
_threshold = defop("threshold",     "same", _threshold_kernel,
                   lambda g, a, threshold: (where(a <= threshold, 0, g),))
_leaky_relu = defop("leaky_relu",   "same", _leaky_relu_kernel, _leaky_relu_rule)
_elu = defop("elu",                 "same", _elu_kernel,        _elu_rule)
_celu = defop("celu",               "same", _elu_kernel,        _elu_rule)
_softplus = defop("softplus",       "same", _softplus_kernel,   _softplus_rule)
_softshrink = defop("softshrink",   "same", _softshrink_kernel,
                    _shrink_rule(_softshrink_backward))
_hardshrink = defop("hardshrink",   "same", _hardshrink_kernel,
                    _shrink_rule(_hardshrink_backward))
_hardsigmoid = defop("hardsigmoid", "same", _hardsigmoid_kernel, _hardsigmoid_rule)
_hardswish = defop("hardswish",     "same", _hardswish_kernel,  _hardswish_rule)
_silu = defop("silu",               "same", _silu_kernel,       _silu_rule)
_mish = defop("mish",               "same", _mish_kernel,       _mish_rule)
_logsigmoid = defop("log_sigmoid",  "same", _logsigmoid_kernel, _logsigmoid_rule)
_gelu = defop("gelu",               "same", _gelu_kernel,       _gelu_rule)


# ----------------------------------------------------------------------------------------------
# prelu and glu: an elementwise op with a second operand


def _channel_view(xp, weight, ndim):
    """prelu's weight shaped to broadcast along dim 1 (one slope, or one per channel)."""
    if weight.size == 1:
        return weight.reshape(())
    return weight.reshape((-1,) + (1,) * (ndim - 2))


@op("same", name="prelu", node_name="PreluKernelBackward0")
@_elementwise
def _prelu(xp, a, weight):
    """max(x, 0) + w * min(x, 0) (exact: one term is zero)."""
    x = _floating("prelu_cpu", xp, a)
    y = _negative_part(xp, x)
    y *= _channel_view(xp, weight.astype(x.dtype, copy=False), a.ndim)
    y += _positive_part(xp, x)
    return y


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
@_quiet
def _glu(xp, a, *, dim):
    """First half of `dim` times the sigmoid of the second half."""
    x = _floating("glu_cpu", xp, a)
    first, second = xp.split(x, 2, axis=dim)
    s = _sigmoid(xp, second)
    s *= first
    return s


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
    def run(xp, a, *args, dim):
        if a.size == 0:
            return xp.empty_like(a)
        if a.ndim == 0:
            args = [t.reshape(1) for t in args]
            return kernel(xp, a.reshape(1), *args, dim=0).reshape(())
        return kernel(xp, a, *args, dim=dim)
    return run


def _sum_along(xp, a, dim):
    """a.sum(dim, keepdims=True). Along a contiguous last dim of a large array it is a
    matrix-vector product: BLAS sums rows several times faster than NumPy's reduction loop
    (and as accurately); below _BLAS_SUM_MIN elements the ones vector costs more than that."""
    if dim == a.ndim - 1 and a.flags.c_contiguous and a.size >= _BLAS_SUM_MIN:
        return (a @ xp.ones(a.shape[-1], a.dtype))[..., None]
    return a.sum(axis=dim, keepdims=True)


def _dot_along(xp, a, b, dim):
    """(a * b).sum(dim, keepdims=True), without the product array along a last dim (stacked
    row-by-row dot products, again in BLAS)."""
    if dim == a.ndim - 1:
        return xp.matmul(a[..., None, :], b[..., :, None])[..., 0]
    return (a * b).sum(axis=dim, keepdims=True)


@op("same", name="softmax", node_name="SoftmaxBackward0")
@_along
@_quiet
def _softmax(xp, a, *, dim):
    """exp(x - max) / sum, written into one new array (in row blocks on the thread pool for
    a large input whose `dim` is not 0)."""
    x = _floating("softmax_lastdim_kernel_impl", xp, a)
    out = xp.empty(x.shape, x.dtype)
    return by_rows(_softmax_into, xp, (out,), x, split=dim != 0, dim=dim)[0]


def _softmax_into(xp, outs, x, *, dim):
    (e,) = outs
    xp.subtract(x, x.max(axis=dim, keepdims=True), out=e)
    xp.exp(e, out=e)
    e *= 1 / _sum_along(xp, e, dim)


@_softmax.grad
def _softmax(g, out, dim):
    if not rules_must_differentiate():
        return (_softmax_backward(g, out, dim=dim),)
    y, g = _float32_if_half(out, g)
    return ((y * (g - (g * y).sum(dim, keepdim=True))).to(out.dtype),)


@op("same", name="softmax_backward")
@_along
def _softmax_backward(xp, g, y, *, dim):
    """y * (g - sum(g * y)), in float32 for half types (as torch sums)."""
    y = _floating("softmax_backward_data", xp, y)
    g = _widened(xp, g, y)
    out = xp.empty(y.shape, y.dtype)
    return by_rows(_softmax_backward_into, xp, (out,), g, y, split=dim != 0, dim=dim)[0]


def _softmax_backward_into(xp, outs, g, y, *, dim):
    (dx,) = outs
    xp.subtract(g, _dot_along(xp, g, y, dim), out=dx)
    dx *= y


@op("same", name="log_softmax", node_name="LogSoftmaxBackward0")
@_along
@_quiet
def _log_softmax(xp, a, *, dim):
    """x - max - log(sum(exp(x - max))), written into one new array (in row blocks on the
    thread pool for a large input whose `dim` is not 0)."""
    x = _floating("log_softmax_lastdim_kernel_impl", xp, a)
    out = xp.empty(x.shape, x.dtype)
    return by_rows(_log_softmax_into, xp, (out,), x, split=dim != 0, dim=dim)[0]


def _log_softmax_into(xp, outs, x, *, dim):
    (shifted,) = outs
    xp.subtract(x, x.max(axis=dim, keepdims=True), out=shifted)
    shifted -= xp.log(_sum_along(xp, xp.exp(shifted), dim))


@_log_softmax.grad
def _log_softmax(g, out, dim):
    if not rules_must_differentiate():
        return (_log_softmax_backward(g, out, dim=dim),)
    y, g = _float32_if_half(out, g)
    return ((g - y.exp() * g.sum(dim, keepdim=True)).to(out.dtype),)


@op("same", name="log_softmax_backward")
@_along
@_quiet
def _log_softmax_backward(xp, g, y, *, dim):
    """g - exp(y) * sum(g). g and y may broadcast against each other (batch_rules.aligned
    lines them up); row blocks are cut only where g has the result's shape."""
    y = _floating("log_softmax_backward_data", xp, y)
    g = _widened(xp, g, y)
    dx = xp.empty(np.broadcast_shapes(g.shape, y.shape), y.dtype)
    return by_rows(_log_softmax_backward_into, xp, (dx,), g, y,
                    split=dim != 0 and g.shape == dx.shape, dim=dim)[0]


def _log_softmax_backward_into(xp, outs, g, y, *, dim):
    (dx,) = outs
    xp.exp(y, out=dx)
    dx *= _sum_along(xp, g, dim)
    xp.subtract(g, dx, out=dx)


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
    """In-place `threshold`: replace, in `input` itself, each element not above `threshold` with
    `value`; returns `input`.
    """
    return _threshold.inplace(input, threshold=threshold, value=value)


def relu(input, inplace=False):
    """max(x, 0)."""
    return _relu.inplace(input) if inplace else call_unary(_relu, input)


@export(method=True)  # torch.relu_ is a function too (pointwise.py gives only the method)
def relu_(input):
    """In-place `relu`: clamp the negative elements of `input` to 0; returns `input`."""
    return _relu.inplace(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """x clipped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run(_hardtanh, input, inplace, min_val=min_val, max_val=max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place `hardtanh`: clip `input` itself to [min_val, max_val]; returns `input`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(x, 0), 6): hardtanh on [0, 6]."""
    return hardtanh(input, 0.0, 6.0, inplace)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, else alpha * (exp(x) - 1)."""
    return _run(_elu, input, inplace, alpha=alpha, scale=1.0, input_scale=1.0)


def elu_(input, alpha=1.0):
    """In-place `elu`: overwrite `input` with elu(input, alpha); returns `input`."""
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _run(_elu, input, inplace, alpha=_SELU_ALPHA, scale=_SELU_SCALE, input_scale=1.0)


def selu_(input):
    """In-place `selu`: overwrite `input` with selu(input); returns `input`."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _run(_celu, input, inplace, alpha=alpha, scale=1.0, input_scale=1.0 / alpha)


def celu_(input, alpha=1.0):
    """In-place `celu`: overwrite `input` with celu(input, alpha); returns `input`."""
    return celu(input, alpha, inplace=True)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, else negative_slope * x."""
    return _run(_leaky_relu, input, inplace, negative_slope=negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place `leaky_relu`: scale the non-positive elements of `input` by `negative_slope`;
    returns `input`.
    """
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
    noise = _rrelu_noise(input, lower, upper, generator)
    return input.mul_(noise) if inplace else input * noise


def _rrelu_noise(input, lower, upper, generator):
    """The slopes, drawn as torch draws them: one uniform double per non-positive element in
    row-major order, u * (upper - lower) + lower (two roundings: this kernel is not built
    with fused multiply-adds), the bounds first rounded to the type torch computes in
    (float32 for all but float64); 1 elsewhere."""
    from ... import _random_kernels
    from ..._creation import from_numpy
    from ..._generator import generator_for

    negative = input.detach().numpy(force=True) <= 0
    g = generator_for(input.device, generator)
    compute = np.float64 if input.dtype is dt.float64 else np.float32
    low, high = float(compute(lower)), float(compute(upper))
    u = _random_kernels.unit_doubles(g, int(negative.sum()))
    noise = np.ones(negative.shape, dtype=input.dtype.np)
    noise[negative] = u * (high - low) + low
    return from_numpy(noise).to(input.device)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place `rrelu`: overwrite `input` with rrelu(input, lower, upper, training); returns
    `input`.

    `generator`, if given, draws the training-mode slopes.
    """
    return _rrelu(input, lower, upper, training, True, generator)


def gelu(input, approximate="none"):
    """x * Phi(x) (Phi: the standard normal CDF), or its tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _gelu(input, approximate=approximate)[0]


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
    """tanh(x), elementwise (the same as `torch.tanh`)."""
    return input.tanh()


def sigmoid(input):
    """1 / (1 + exp(-x)), elementwise (the same as `torch.sigmoid`)."""
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
    """selu(x) = scale * elu(x, alpha) with the self-normalising constants (alpha ~ 1.6733,
    scale ~ 1.0507). Unlike `F.selu`, takes no `inplace` argument.
    """
    return selu(input)


@export(name="selu_")
def _torch_selu_(input):
    """In-place `selu`: overwrite `input` with selu(input); returns `input`."""
    return selu(input, inplace=True)


@export(name="celu")
def _torch_celu(input, alpha=1.0):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha = 0 is refused. Unlike `F.celu`,
    takes no `inplace` argument.
    """
    return celu(input, alpha)


@export(name="celu_")
def _torch_celu_(input, alpha=1.0):
    """In-place `celu`: overwrite `input` with celu(input, alpha); returns `input`."""
    return celu(input, alpha, inplace=True)


@export(name="threshold")
def _torch_threshold(input, threshold, value):
    """x where x > threshold, else `value`. Unlike `F.threshold`, takes no `inplace` argument."""
    return _threshold(input, threshold=threshold, value=value)


@export(name="threshold_")
def _torch_threshold_(input, threshold, value):
    """In-place `threshold`: replace, in `input` itself, each element not above `threshold` with
    `value`; returns `input`.
    """
    return _threshold.inplace(input, threshold=threshold, value=value)


@export(name="rrelu")
def _torch_rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU: x for x > 0, else slope * x.

    In training each non-positive element gets its own slope drawn from U(lower, upper) (from
    `generator` if given, in torch's order, so seeded runs match torch); otherwise the slope is
    (lower + upper) / 2.
    """
    return _rrelu(input, lower, upper, training, False, generator)


@export(name="rrelu_")
def _torch_rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place `rrelu`: overwrite `input` with rrelu(input, lower, upper, training, generator);
    returns `input`.
    """
    return _rrelu(input, lower, upper, training, True, generator)


# ----------------------------------------------------------------------------------------------
# forward mode and vmap (see ops/_op.py). The activations are elementwise: their tangent is
# their rule applied to it (gelu's rule takes its workspace too; prelu's slope has a part of
# its own). softmax's Jacobian is symmetric (its rule is its jvp); log_softmax's is
# I - softmax along dim. Batching: elementwise ops line their operands up; the softmax family
# shifts `dim`; prelu folds the batch into dim 0 so its slopes stay on dim 1.


def _gelu_jvp(a_t, a, workspace, approximate):
    return (_gelu_rule((a_t,), a, workspace, approximate)[0], None)


def _prelu_jvp(a_t, weight_t, a, weight):
    total = None
    if a_t is not None:
        slope = weight.reshape(()) if weight.numel() == 1 else \
            weight.reshape((-1,) + (1,) * (a.ndim - 2))
        total = where(a > 0, a_t, a_t * slope)
    if weight_t is not None:
        w_t = weight_t.reshape(()) if weight_t.numel() == 1 else \
            weight_t.reshape((-1,) + (1,) * (a.ndim - 2))
        part = where(a > 0, 0, a * w_t)
        total = part if total is None else total + part
    return total


def _prelu_batch(op, values, batched, attrs):
    if batched[1] or values[0].ndim < 3:
        from ..._functorch.vmap import per_sample

        return per_sample(op, values, batched, attrs)
    return batch_rules.fold()(op, values, batched, attrs)


for _op in (_hardtanh, _threshold, _leaky_relu, _elu, _celu, _softplus, _softshrink,
            _hardshrink, _hardsigmoid, _hardswish, _silu, _mish, _logsigmoid):
    _op.jvp(ELEMENTWISE)
for _op in (_hardtanh, _threshold, _leaky_relu, _elu, _celu, _softplus, _softshrink,
            _hardshrink, _hardsigmoid, _hardswish, _silu, _mish, _logsigmoid, _gelu):
    _op.batch(batch_rules.pointwise)
for _op in (_hardtanh_backward, _leaky_relu_backward, _elu_backward, _softplus_backward,
            _softshrink_backward, _hardshrink_backward, _hardsigmoid_backward,
            _hardswish_backward, _silu_backward, _mish_backward, _logsigmoid_backward,
            _gelu_backward):
    _op.batch(batch_rules.same_shape)
for _op in (_softmax, _log_softmax, _glu):
    _op.batch(batch_rules.dims("dim"))
for _op in (_softmax_backward, _log_softmax_backward):
    _op.batch(batch_rules.aligned("dim"))  # the kernels broadcast (they do not write in place)
_gelu.jvp(_gelu_jvp)
_prelu.jvp(_prelu_jvp).batch(_prelu_batch)
_softmax.jvp(lambda a_t, out, dim: _softmax.rule(a_t, out, dim)[0])
_log_softmax.jvp(lambda a_t, out, dim: a_t - (a_t * out.exp()).sum(dim, keepdim=True))
del _op

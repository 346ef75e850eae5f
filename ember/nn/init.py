"""ember.nn.init: weight initialisation, torch's schemes and defaults.

Every function fills a tensor in place under `no_grad` and returns it, using ember ops (so it
works on any device and bumps the tensor's version as any in-place write does). Fans follow
torch: for a weight of shape (out, in, *kernel),

    fan_in = in * prod(kernel)          fan_out = out * prod(kernel)

    gain        calculate_gain(nonlinearity, param): relu sqrt(2), tanh 5/3, selu 3/4, ...
    xavier      std = gain * sqrt(2 / (fan_in + fan_out));  uniform bound = sqrt(3) * std
    kaiming     std = gain / sqrt(fan);                      uniform bound = sqrt(3) * std

Layers call these from `reset_parameters()`; Linear's default, kaiming_uniform_(a=sqrt(5)),
works out to U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

Every random draw is the tensor's own `uniform_` / `normal_` (torch's streams, `_random.py`),
with the bounds computed by torch's Python expressions in torch's order, so after the same
seed each function gives torch's values bit for bit. The exceptions are `orthogonal_` (the QR
factorisation is NumPy's LAPACK, not torch's: equal to rounding) and `trunc_normal_` when
[a, b] holds under 30% of the mass (its acceptance test compares against float32 `log`,
which may round differently in the last bit, and a flipped acceptance changes later draws).

Read next: `utils/` (gradient clipping, weight and spectral norm, parametrizations).
"""
import math
import warnings

from .. import _creation, _random
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_", "uniform", "normal", "constant", "eye",
           "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
           "orthogonal", "sparse"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch's table)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # found empirically by torch's authors
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for n in tensor.shape[2:]:
        receptive *= n
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """U(a, b) (the tensor's own uniform_, so torch's stream)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std^2) restricted to [a, b], by rejection as torch does it. When the interval
    holds more than 30% of the mass: normal samples, the ones outside [a, b] redrawn (a whole
    fresh normal sample each round) until none is left. Otherwise: uniform candidates on
    [a, b], each accepted with probability pdf(x) / pdf(mode) (log u < log-density), the
    rejected ones redrawn."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        inside = _normal_cdf((b - mean) / std) - _normal_cdf((a - mean) / std)
        if inside > 0.3:
            _redraw_outside(tensor, mean, std, a, b, generator)
        else:
            _uniform_rejection(tensor, mean, std, a, b, generator)
    return tensor


def _normal_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def _redraw_outside(tensor, mean, std, a, b, generator):
    low = tensor.new_tensor(a, device="cpu").item()  # the bounds as the dtype holds them
    high = tensor.new_tensor(b, device="cpu").item()
    result = tensor.normal_(mean, std, generator=generator)
    while True:
        outside = (result < low) | (result > high)
        if not outside.any():
            break
        fresh = _creation.empty_like(result).normal_(mean, std, generator=generator)
        result = fresh.where(outside, result)
    if result is not tensor:
        tensor.copy_(result)


def _uniform_rejection(tensor, mean, std, a, b, generator):
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2
    candidates = _creation.empty_like(tensor)
    accept = _creation.empty_like(tensor)

    def log_density(x):  # log pdf(x) - log pdf(mode), in place
        return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

    tensor.uniform_(a, b, generator=generator)
    log_density(candidates.copy_(tensor))
    pending = accept.uniform_(generator=generator).log_().gt(candidates)
    if not pending.any():
        return
    result = tensor
    while True:
        candidates.uniform_(a, b, generator=generator)
        result = candidates.where(pending, result)
        log_density(candidates)
        pending = accept.uniform_(generator=generator).log_().gt(candidates).where(pending,
                                                                                   pending)
        if not pending.any():
            break
    tensor.copy_(result)


def constant_(tensor, val):
    """Fill `tensor` with `val` in place, without recording a gradient; returns it."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill `tensor` with ones in place, without recording a gradient; returns it."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill `tensor` with zeros in place, without recording a gradient; returns it."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity matrix (ones on the main diagonal of a 2-D tensor, any shape)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_creation.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    """Identity-preserving init for conv weights (out, in, *k): within each group, output
    channel d takes input channel d through the centre tap only."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = tensor.shape[0] // groups
    min_dim = min(out_per_group, tensor.shape[1])
    with no_grad():
        tensor.zero_()
        channel = _creation.arange(min_dim, device=tensor.device)
        outputs = (_creation.arange(groups, device=tensor.device)[:, None] * out_per_group
                   + channel).reshape(-1)
        inputs = channel.repeat(groups)
        centre = tuple(k // 2 for k in tensor.shape[2:])
        tensor[(outputs, inputs) + centre] = 1
    return tensor


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a), a = sqrt(3) * gain * sqrt(2 / (fan_in + fan_out)) (in torch's order of
    roundings: the std first)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound), bound = sqrt(3) * gain / sqrt(fan) (the std first, as torch)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix, viewed as (rows, rest): the Q of the QR decomposition of a
    normal sample, with column signs taken from diag(R) so that Q is uniformly distributed
    (Mezzadri 2007; Saxe et al. 2013)."""
    from .. import linalg

    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
        if rows < cols:
            flat = flat.t()
        q, r = linalg.qr(flat)
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.t()
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """2-D only: N(0, std^2) values, then in each column ceil(sparsity * rows) random rows
    set to zero (as torch: one randperm per column, from the global generator even when
    `generator` is given)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for column in range(cols):
            # torch.randperm(rows): the CPU generator, whatever the tensor's device
            zero_rows = _random.randperm(rows)[:num_zeros].to(tensor.device)
            tensor[zero_rows, column] = 0
    return tensor


def _deprecated(fn):
    """torch's old names without the trailing underscore."""
    old = fn.__name__[:-1]

    def alias(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated alias of `{fn.__name__}`."
    return alias


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)

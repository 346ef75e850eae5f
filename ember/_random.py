"""Random numbers, torch's streams: the random factories (`rand`, `randn`, `randint`, ...),
`normal`, `bernoulli`, `multinomial`, `poisson`, and the in-place methods (`uniform_`,
`normal_`, `random_`, ...).

On the CPU every function draws exactly what torch 2.13 draws and rounds exactly as it rounds,
so after the same seed the same calls give `torch.equal` results (the engine is in
`_mt19937.py`, the per-op transformations in `_random_kernels.py`). Each function here is
torch's composition of those kernels: `rand` is `empty(size).uniform_()`, `rand_like` an
`empty_like` (same memory order) filled in place, `normal(mean, std)` a standard normal
times std plus mean, `multinomial` without replacement the Gumbel trick
`topk(p / Exponential(1))`. Samples are written in the order torch visits a tensor: its
memory order, so a transposed tensor is filled column by column. A complex tensor is filled
through its real view (twice the samples, read as (real, imaginary) pairs; normals take
std / sqrt(2) per part), as torch does.

On CUDA the samples are ember's host streams, not torch's (see `_generator.py`).

Autograd: as in torch, a random function of tensors that require grad (`normal(mean, std)`,
`bernoulli(p)`, `poisson(rates)`) returns a tensor that requires grad with a zero gradient:
the sample is treated as noise, not as a function of its parameters. In-place random methods
write through `copy_`, so they bump the version counter, work on views, and refuse leaves
that require grad (outside `no_grad`) exactly like other in-place ops.

Read next: `_tensor_str.py` (printing).
"""
import builtins
import math
import numbers
import warnings

import numpy as np

from . import _dtype as dt
from . import _random_kernels as kernels
from . import _stdsort
from ._creation import _check_options, _check_size, _finish, _size, empty_like, from_numpy
from ._device import as_device
from ._functorch.vmap import random_function
from ._generator import (
    Generator,
    default_generator,
    fork_rng,
    generator_for,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from ._tensor import Tensor
from ._utils import parse_size
from .autograd import grad_mode
from .ops._op import export

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "rand", "randn", "randint", "randperm",
           "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
           "poisson"]

# dtype names as torch's bound checks print them (C++ type names)
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
            "int16": "short int", "int32": "int", "int64": "long int", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
            "uint16": "unsigned short", "uint32": "unsigned int", "uint64": "long unsigned int"}

# The dtypes each of torch's CPU kernels is compiled for (its AT_DISPATCH lists): the float
# kernels take the four standard floats, random_() and bernoulli_ every integer and float but
# the wide unsigned ones, random_(from, to) those as well.
_FLOATS = frozenset((dt.float16, dt.bfloat16, dt.float32, dt.float64))
_COMPLEX = frozenset((dt.complex64, dt.complex128))
_NUMBERS = _FLOATS | frozenset((dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64))
_WIDE_UNSIGNED = frozenset((dt.uint16, dt.uint32, dt.uint64))
_FULL_RANGE = frozenset((dt.int64, dt.float32, dt.float64, dt.bfloat16))


# ----------------------------------------------------------------------------------------------
# helpers


def _dispatch(dtype, supported, kernel):
    """torch's error for a dtype its kernel `kernel` is not compiled for."""
    if dtype not in supported:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name(dtype)}'")


def _require_float(dtype, kernel):
    _dispatch(dtype, _FLOATS, kernel)


def _require_float_or_complex(dtype, kernel):
    _dispatch(dtype, _FLOATS | _COMPLEX, kernel)


def _uniforms(g, n, dtype, low, high):
    """n uniform samples; complex ones as torch makes them (uniform_ on the real view):
    2n real samples read as (real, imaginary) pairs."""
    if dtype.is_complex:
        return kernels.uniform(g, 2 * n, dtype.to_real(), low, high).view(dtype.np)
    return kernels.uniform(g, n, dtype, low, high)


def _normals(g, n, dtype, mean, std, contiguous):
    """n normal samples; complex ones from the real view with std / sqrt(2) per part, so that
    E|z - mean|^2 = std^2 (torch's normal_ on complex tensors)."""
    if dtype.is_complex:
        return kernels.normal(g, 2 * n, dtype.to_real(), mean, std / math.sqrt(2),
                              contiguous).view(dtype.np)
    return kernels.normal(g, n, dtype, mean, std, contiguous)


def _float_args(*values):
    """Distribution parameters as Python floats (0-d tensors and NumPy scalars accepted)."""
    floats = []
    for v in values:
        if isinstance(v, (Tensor, np.generic)):
            v = v.item()
        if not isinstance(v, numbers.Real):
            raise TypeError(f"expected a number, got {type(v).__name__}")
        floats.append(builtins.float(v))
    return tuple(floats)


def _host(t):
    return t.detach().numpy(force=True)


def _memory_order(t):
    """t's dims from outermost to innermost in memory: the order torch's TensorIterator
    visits (and so fills) a tensor."""
    strides = t.stride()
    return sorted(builtins.range(t.ndim), key=lambda d: -strides[d])


def _fill_(self, draw, *args):
    """Fill self in place with `draw(generator, n, *args)`, a flat array in memory order."""
    if self.numel() == 0:
        return self
    order = _memory_order(self)
    values = draw(*args)
    values = values.reshape([self.shape[d] for d in order]).transpose(np.argsort(order))
    # np.require, not np.ascontiguousarray: the latter turns a 0-d array into shape (1,)
    return self.copy_(from_numpy(np.require(values, requirements="C")))


def _size_args(args, size, fn_name):
    """`rand(2, 3)`, `rand((2, 3))` or `rand(size=(2, 3))`."""
    if size is not None:
        if args:
            raise TypeError(f"{fn_name}() got multiple values for argument 'size'")
        args = (size,)
    return _size(args, fn_name)


def _sample(shape, dtype, device, requires_grad, draw):
    """A new contiguous tensor of `shape` filled with `draw(n)` (nothing drawn when empty)."""
    n = int(np.prod(shape, dtype=np.int64))
    values = draw(n) if n else np.empty(0, dtype=dtype.np)
    return _finish(np.asarray(values, dtype=dtype.np).reshape(shape), dtype, device,
                   requires_grad)


# ----------------------------------------------------------------------------------------------
# factories


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1) (torch's `empty(size).uniform_()`)."""
    _check_options(out, layout)
    shape = _size_args(args, size, "rand")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    _require_float_or_complex(dtype, "check_uniform_bounds")
    device = as_device(device)
    g = generator_for(device, generator)
    return _sample(shape, dtype, device, requires_grad,
                   lambda n: _uniforms(g, n, dtype, 0.0, 1.0))


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples (torch's `empty(size).normal_()`)."""
    _check_options(out, layout)
    shape = _size_args(args, size, "randn")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    _require_float_or_complex(dtype, "normal_kernel_cpu")
    device = as_device(device)
    g = generator_for(device, generator)
    return _sample(shape, dtype, device, requires_grad,
                   lambda n: _normals(g, n, dtype, 0.0, 1.0, contiguous=True))


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad=False, pin_memory=False):
    """Integers in [low, high) (low defaults to 0): `randint(high, size)` or
    `randint(low, high, size)`; int64 unless `dtype` says otherwise."""
    _check_options(out, layout)
    low, high, size = _randint_args(args, low, high, size, "randint")
    shape = parse_size((size,))
    _check_size(shape)
    dtype = dt.int64 if dtype is None else dtype
    span, base = _span(low, high, dtype)
    device = as_device(device)
    g = generator_for(device, generator)
    return _sample(shape, dtype, device, requires_grad,
                   lambda n: kernels.random_from_to(g, n, dtype, span, base))


def _randint_args(args, low, high, size, fn_name):
    """Sort torch's randint overloads into (low, high, size)."""
    named = [v for v in (low, high, size) if v is not None]
    positional = list(args)
    if size is None:
        if not positional:
            raise TypeError(f"{fn_name}() missing required argument 'size'")
        size = positional.pop()
    if high is None:
        if not positional:
            raise TypeError(f"{fn_name}() missing required argument 'high'")
        high = positional.pop()
    if low is None:
        low = positional.pop() if positional else 0
    if positional or len(args) + len(named) > 3:
        raise TypeError(f"{fn_name}() received too many arguments")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn_name}(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    for name, value in (("low", low), ("high", high)):
        if isinstance(value, builtins.bool) or not isinstance(value, (numbers.Integral,
                                                                        Tensor)):
            raise TypeError(f"{fn_name}(): argument '{name}' must be int, not "
                            f"{type(value).__name__}")
    return builtins.int(low), builtins.int(high), size


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0 .. n-1 (int64 unless `dtype` is given)."""
    _check_options(out, layout)
    if isinstance(n, builtins.bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
    _check_size((n,))
    dtype = dt.int64 if dtype is None else dtype
    _dispatch(dtype, _NUMBERS, "randperm")
    _check_permutation_fits(n, dtype)
    device = as_device(device)
    g = generator_for(device, generator)
    return _sample((n,), dtype, device, requires_grad, lambda n: kernels.randperm(g, n))


def _check_permutation_fits(n, dtype):
    if dtype.category == dt.FLOATING:
        top = (1 << kernels._DIGITS[dtype.name]) + 1
    else:
        top = int(np.iinfo(dtype.np).max) + 1
    if n > top:
        raise RuntimeError(f"n cannot be greater than {top} for {dt.scalar_name(dtype)} type.")


def _like(fill, input, dtype, layout, device, requires_grad, memory_format):
    """torch's `empty_like(input, ...)` (the same memory order) filled in place by `fill`."""
    _check_options(layout=layout)
    result = empty_like(input, dtype=dtype, device=device, memory_format=memory_format)
    with grad_mode.no_grad():
        fill(result)
    if requires_grad:
        result.requires_grad_(True)
    return result


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False):
    """rand with input's shape, dtype, device and memory order."""
    _require_float_or_complex(input.dtype if dtype is None else dtype, "check_uniform_bounds")
    return _like(lambda t: t.uniform_(generator=generator), input, dtype, layout, device,
                 requires_grad, memory_format)


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None, pin_memory=False):
    """randn with input's shape, dtype, device and memory order."""
    _require_float_or_complex(input.dtype if dtype is None else dtype, "normal_kernel_cpu")
    return _like(lambda t: t.normal_(generator=generator), input, dtype, layout, device,
                 requires_grad, memory_format)


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def randint_like(input, *args, low=None, high=None, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None, pin_memory=False):
    """`randint_like(input, high)` or `randint_like(input, low, high)`; input's dtype."""
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        high = args[0]
    elif args:
        raise TypeError("randint_like() takes at most 2 positional bounds (low, high)")
    if high is None:
        raise TypeError("randint_like() missing required argument 'high'")
    low, high = builtins.int(0 if low is None else low), builtins.int(high)
    return _like(lambda t: t.random_(low, high, generator=generator), input, dtype, layout,
                 device, requires_grad, memory_format)


# ----------------------------------------------------------------------------------------------
# random_'s bounds (torch's random_from_to_impl)


def _span(low, high, dtype):
    """(to - from, from) for random_(from, to) / randint, checked and adjusted as torch does:
    for floats, bounds move inwards to values that survive the cast to the dtype."""
    _dispatch(dtype, _NUMBERS | _WIDE_UNSIGNED | {dt.bool} | _COMPLEX, "random_update_from_to")
    if dtype.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dtype.category == dt.FLOATING:
        low, high = _update_from(low, dtype), _update_to(high, dtype)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than 'to' "
                               f"casted to dtype, but got from={low} >= to={high}")
    _check_in_range(low, high - 1, dtype)
    return high - low, low


def _span_to_max(low, dtype):
    """random_(from) with no `to`: [from, the dtype's largest integer] (2**digits for floats)."""
    _dispatch(dtype, _NUMBERS | _WIDE_UNSIGNED | {dt.bool} | _COMPLEX,
              "random_from_to_range_calc")
    if dtype.is_complex:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    if dtype.category == dt.FLOATING:
        top = 1 << kernels._DIGITS[dtype.name]
        low = _update_from(low, dtype)
        if low >= top:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or "
                               f"equal to 'to_inc' casted to dtype, but got from={low} > "
                               f"to_inc={top}")
    else:
        top = 1 if dtype is dt.bool else int(np.iinfo(dtype.np).max)
    _check_in_range(low, top, dtype)
    return top - low + 1, low


def _update_from(low, dtype):
    """The smallest int64 >= low that casts to the dtype without going below low."""
    rounded = int(np.asarray(low + 1).astype(dtype.np).astype(np.float64))
    if rounded < low:
        n = abs(low + 1).bit_length() - 1
        low = rounded + (1 << (n - kernels._DIGITS[dtype.name] + 1))
    return low


def _update_to(high, dtype):
    """The largest int64 <= high that casts to the dtype without reaching high."""
    rounded = int(np.asarray(high - 1).astype(dtype.np).astype(np.float64))
    if rounded >= high:
        n = abs(high - 1).bit_length() - 1
        high = rounded - (1 << (n - kernels._DIGITS[dtype.name] + 1))
    return high


def _check_in_range(low, high_inclusive, dtype):
    name = _C_NAMES[dtype.name]
    if dtype.category == dt.FLOATING:
        info = dt.finfo(dtype)
        bounds = (builtins.float(info.min), builtins.float(info.max))
    elif dtype is dt.bool:
        bounds = (0, 1)
    elif dtype is dt.uint64:
        bounds = (0, (1 << 63) - 1)  # torch compares through int64
    else:
        bounds = (int(np.iinfo(dtype.np).min), int(np.iinfo(dtype.np).max))
    for value, what in ((low, "from"), (high_inclusive, "to - 1")):
        if not bounds[0] <= value <= bounds[1]:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dtype.category == dt.FLOATING:
        digits = kernels._DIGITS[dtype.name]
        for value, what in ((low, "from"), (high_inclusive, "to - 1")):
            if not -(1 << digits) <= value <= 1 << digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    f"this range. This warning will become an error in version 1.7 release, "
                    f"please fix the code in advance", stacklevel=4)


# ----------------------------------------------------------------------------------------------
# samples with tensor parameters: normal, bernoulli, multinomial, poisson

_NOISE_NODES = {}


def _noise_of(name, sample, params):
    """`sample` itself, or (when a parameter requires grad under grad mode) an alias of it
    that requires grad and gives every parameter a zero gradient, as torch's samplers do."""
    params = [p for p in params if isinstance(p, Tensor)]
    if not grad_mode.state.grad_enabled or not any(p.requires_grad for p in params):
        return sample
    node = _NOISE_NODES.get(name)
    if node is None:
        node = _NOISE_NODES[name] = _noise_function(name)
    return node.apply(sample, *params)


def _noise_function(name):
    """An autograd Function `name` whose output is its first input; gradients are zero."""
    from .autograd.function import Function

    def forward(ctx, sample, *params):
        ctx.shapes = [p.shape for p in params]
        return sample

    def backward(ctx, g):
        return (None,) + tuple(g.new_zeros(shape) for shape in ctx.shapes)

    return type(name, (Function,), {"forward": staticmethod(forward),
                                    "backward": staticmethod(backward)})


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    """Normal samples. Four forms, as torch (each a standard normal sample of the result's
    shape, then `* std + mean` as separate roundings, or normal_(mean, std) for numbers):
        normal(mean: Tensor, std: Tensor)   shapes broadcast; mean's dtype
        normal(mean: Tensor, std: float = 1)
        normal(mean: float, std: Tensor)
        normal(mean: float, std: float, size)   plus dtype / device / requires_grad
    """
    _check_options(out, layout)
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal(): with a float mean and std, `size` is required")
        shape = parse_size((size,))
        _check_size(shape)
        mean, std = _float_args(mean, std)
        _check_std(std)
        dtype = dt.get_default_dtype() if dtype is None else dtype
        _require_float_or_complex(dtype, "normal_kernel_cpu")
        device = as_device(device)
        g = generator_for(device, generator)
        return _sample(shape, dtype, device, requires_grad,
                       lambda n: _normals(g, n, dtype, mean, std, contiguous=True))
    if size is not None or dtype is not None or requires_grad:
        raise TypeError("normal(): size, dtype and requires_grad are only accepted with a "
                        "float mean and std")
    with grad_mode.no_grad():
        sample = _normal_with_tensors(mean, std, generator)
    return _noise_of("Normal", sample, [mean, std])


def _normal_with_tensors(mean, std, generator):
    if isinstance(std, Tensor):
        if std.numel() and not bool((std.detach().min() >= 0).item()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        (std,) = _float_args(std)
        _check_std(std)
    like = mean if isinstance(mean, Tensor) else std
    result_dtype = like.dtype
    _require_float(result_dtype, "normal_kernel_cpu")
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        shape = _broadcast_shape(tuple(mean.shape), tuple(std.shape))
    else:
        shape = tuple(like.shape)
    g = generator_for(like.device, generator)
    output = _finish(np.empty(shape, dtype=result_dtype.np), result_dtype, like.device, False)
    if isinstance(std, Tensor):
        output.normal_(0.0, 1.0, generator=g)
        output.mul_(std)
    else:
        output.normal_(0.0, std, generator=g)
    return output.add_(mean)


def _check_std(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _broadcast_shape(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        from .ops._dispatch import broadcast_error

        raise RuntimeError(broadcast_error(list(shapes))) from None


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples: with probabilities `input` (floating, each in [0, 1]), or with one
    probability `p` for every element (then `input` only gives shape, dtype and device)."""
    _check_options(out)
    if p is not None:
        result = _finish(np.empty(tuple(input.shape), input.dtype.np), input.dtype,
                         input.device, False)
        return result.bernoulli_(p, generator=generator)
    _require_float(input.dtype, "bernoulli_tensor_cpu_p_")
    probs = _host(input)
    _check_probabilities(probs)
    g = generator_for(input.device, generator)
    values = kernels.bernoulli_tensor(g, np.ascontiguousarray(probs).reshape(-1))
    sample = _finish(values.reshape(probs.shape), input.dtype, input.device, False)
    return _noise_of("Bernoulli", sample, [input])


def _check_probabilities(probs):
    if probs.size and not (np.all(probs >= 0) and np.all(probs <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categories of each row of `input` (non-negative weights, 1-d or
    2-d). Without replacement (or for one sample) torch's Gumbel trick: the top
    `num_samples` of input / Exponential(1); with replacement, inverse-CDF draws."""
    _check_options(out)
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dt.scalar_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    g = generator_for(input.device, generator)
    weights = _host(input)
    if not replacement or num_samples == 1:
        picks = _multinomial_gumbel(input, weights, num_samples, g)
    else:
        picks = _multinomial_inverse_cdf(weights, num_samples, g)
    return _finish(picks.astype(np.int64), dt.int64, input.device, False)


def _multinomial_gumbel(input, weights, num_samples, g):
    if not (np.all(weights < np.inf) and np.all(weights >= 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(weights.sum(axis=-1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    with grad_mode.no_grad():
        q = empty_like(input.detach()).exponential_(1, generator=g)
    keys = weights / _host(q)
    if num_samples == 1:
        return np.argmax(keys, axis=-1)[..., None]  # the first of tied maxima, as torch
    rows = keys.reshape(-1, keys.shape[-1])
    picks = np.argsort(-rows, axis=-1, kind="stable")[:, :num_samples]
    # ties inside the top k (or at its edge) are ordered the way torch's top-k sort leaves
    # them: zero probabilities picked when num_samples exceeds the positive ones
    edge = min(num_samples + 1, rows.shape[-1])
    ranked = np.take_along_axis(rows, np.argsort(-rows, axis=-1, kind="stable")[:, :edge], -1)
    for r in np.flatnonzero(np.any(ranked[:, 1:] == ranked[:, :-1], axis=-1)):
        picks[r] = _stdsort.top_k_indices(rows[r].tolist(), num_samples)
    return picks.reshape(keys.shape[:-1] + (num_samples,))


def _multinomial_inverse_cdf(weights, num_samples, g):
    rows = weights.reshape(-1, weights.shape[-1])
    if np.any(rows < 0):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "< 0)")
    if not np.all(np.isfinite(rows)):
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           "= infinity or NaN)")
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    picks = kernels.multinomial_with_replacement(g, rows, num_samples)
    return picks.reshape(weights.shape[:-1] + (num_samples,))


@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def poisson(input, generator=None):
    """Poisson samples with rates `input` (floating, non-negative); same dtype as input."""
    _require_float(input.dtype, "poisson_cpu")
    rates = _host(input).astype(np.float64)
    if np.any(rates < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    g = generator_for(input.device, generator)
    counts = kernels.poisson(g, rates.reshape(-1)).reshape(rates.shape)
    return _noise_of("Poisson", _finish(counts, input.dtype, input.device, False), [input])


# ----------------------------------------------------------------------------------------------
# in-place random methods


def _generator(self, generator):
    return generator_for(self.device, generator)


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with uniform samples in [from, to)."""
    from_ = kwargs.pop("from", from_)
    _no_extra(kwargs, "uniform_")
    _require_float_or_complex(self.dtype, "check_uniform_bounds")
    low, high = _float_args(from_, to)
    real = self.dtype.to_real()  # a complex tensor draws both parts (torch's view_as_real)
    info = dt.finfo(real)
    lowest, top = builtins.float(info.min), builtins.float(info.max)
    for value, what in ((low, "from"), (high, "to")):
        if not lowest <= value <= top:
            raise RuntimeError(f"{what} is out of bounds for {_C_NAMES[real.name]}")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low:g} > to={high:g}")
    if high - low > top:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{dt.scalar_name(real)}>::max(), but found to={high:g} and "
                           f"from={low:g} which result in to-from to exceed the limit")
    g = _generator(self, generator)
    return _fill_(self, _uniforms, g, self.numel(), self.dtype, low, high)


def _no_extra(kwargs, fn_name):
    if kwargs:
        raise TypeError(f"{fn_name}() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples N(mean, std**2)."""
    _require_float_or_complex(self.dtype, "normal_kernel_cpu")
    mean, std = _float_args(mean, std)
    _check_std(std)
    g = _generator(self, generator)
    return _fill_(self, _normals, g, self.numel(), self.dtype, mean, std, self.is_contiguous())


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability p) or 0; `p` may be a tensor broadcastable to self."""
    g = _generator(self, generator)
    if not isinstance(p, Tensor):
        (p,) = _float_args(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
        _dispatch(self.dtype, _NUMBERS | {dt.bool}, "bernoulli_scalar_cpu_")
        return _fill_(self, kernels.bernoulli_scalar, g, self.numel(), p)
    _dispatch(self.dtype, _NUMBERS | {dt.bool}, "bernoulli_tensor_cpu_self_")
    if p.dtype is not dt.float64:
        _require_float(p.dtype, "bernoulli_tensor_cpu_p_")
    probs = _host(p)
    try:
        probs = np.broadcast_to(probs, tuple(self.shape))
    except ValueError:
        raise RuntimeError(f"The expanded size of the tensor ({list(self.shape)}) must "
                           f"match the existing size ({list(p.shape)})") from None
    _check_probabilities(probs)
    order = _memory_order(self)
    flat = np.ascontiguousarray(probs.transpose(order)).reshape(-1)
    return _fill_(self, kernels.bernoulli_tensor, g, flat)


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def random_(self, *args, generator=None, **kwargs):
    """Fill with integers: `random_()` in [0, 2**digits] for floats (every integer the type
    holds exactly) or [0, max] for integers; `random_(to)` in [0, to);
    `random_(from, to)` in [from, to); `random_(from, None)` from `from` to the maximum."""
    if len(args) == 1 and not kwargs:
        low, to, explicit_to = 0, args[0], True  # random_(to)
    else:
        low = kwargs.pop("from", args[0] if args else None)
        explicit_to = "to" in kwargs or len(args) > 1
        to = kwargs.pop("to", args[1] if len(args) > 1 else None)
        _no_extra(kwargs, "random_")
    g = _generator(self, generator)
    n = self.numel()
    if low is None and not explicit_to:
        _check_random_dtype(self.dtype)
        return _fill_(self, kernels.random_default, g, n, self.dtype)
    low = 0 if low is None else builtins.int(low)
    if to is not None:
        span, base = _span(low, builtins.int(to), self.dtype)
        return _fill_(self, kernels.random_from_to, g, n, self.dtype, span, base)
    if low == -(1 << 63):
        if self.dtype not in _FULL_RANGE:
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, "
                               "double, float and bfloat16")
        return _fill_(self, kernels.random_full_range, g, n, self.dtype)
    span, base = _span_to_max(low, self.dtype)
    return _fill_(self, kernels.random_from_to, g, n, self.dtype, span, base)


def _check_random_dtype(dtype):
    _dispatch(dtype, _NUMBERS | {dt.bool}, "random_kernel_cpu")


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate `lambd` (mean 1 / lambd)."""
    _require_continuous(self, "Exponential")
    _dispatch(self.dtype, _FLOATS, "exponential_cpu")
    (lambd,) = _float_args(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    g = _generator(self, generator)
    return _fill_(self, kernels.exponential, g, self.numel(), self.dtype, lambd)


def _require_continuous(self, name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{dt.scalar_name(self.dtype)}")


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    (p,) = _float_args(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    _dispatch(self.dtype, _NUMBERS, "geometric_cpu")
    g = _generator(self, generator)
    return _fill_(self, kernels.geometric, g, self.numel(), self.dtype, p)


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std**2)) samples."""
    _require_float(self.dtype, "log_normal_cpu")
    mean, std = _float_args(mean, std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    g = _generator(self, generator)
    return _fill_(self, kernels.log_normal, g, self.numel(), self.dtype, mean, std)


@export(function=False, method=True)
@random_function  # vmap: randomness= (ember/_functorch/vmap.py)
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy samples: median + sigma * tan(pi * (u - 1/2))."""
    median, sigma = _float_args(median, sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _require_continuous(self, "Cauchy")
    _dispatch(self.dtype, _FLOATS, "cauchy_cpu")
    g = _generator(self, generator)
    return _fill_(self, kernels.cauchy, g, self.numel(), self.dtype, median, sigma)

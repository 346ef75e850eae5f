"""Random numbers: `Generator`, the global seed functions, random factories and the in-place
random methods (`uniform_`, `normal_`, ...).

A Generator wraps NumPy's PCG64 bit generator. Streams are ember's own (they do not equal
torch's), but they are reproducible: the same seed gives the same numbers on every run and
every device, because samples are always drawn on the host and then moved to the tensor's
device. The global `default_generator` serves every call that is not given `generator=`.

dtypes: float16 and bfloat16 samples are drawn in float32 and cast. Uniform samples for them
are first rounded *down* to the type's precision, so `rand` stays in [0, 1) (rounding to
nearest could give 1.0).

Autograd: as in torch, a random function of tensors that require grad (`normal(mean, std)`,
`bernoulli(p)`, `poisson(rates)`) returns a tensor that requires grad with a zero gradient:
the sample is treated as noise, not as a function of its parameters. In-place random methods
write through `copy_`, so they bump the version counter, work on views, and refuse leaves
that require grad (outside `no_grad`) exactly like other in-place ops.

Read next: `_tensor_str.py` (printing).
"""
import builtins
import contextlib
import numbers

import numpy as np

from . import _dtype as dt
from ._creation import _check_options, _check_size, _finish, _size, from_numpy, like_order
from ._device import as_device
from ._tensor import Tensor
from ._utils import parse_size
from .autograd import grad_mode
from .ops._op import export

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng", "rand", "randn", "randint", "randperm",
           "rand_like", "randn_like", "randint_like", "normal", "bernoulli", "multinomial",
           "poisson"]

_DEFAULT_SEED = 67280421310721  # torch's default seed
_U64 = 1 << 64


# ----------------------------------------------------------------------------------------------
# generators

# A state tensor: magic, seed (8 bytes), PCG64 state and increment (16 each), then the cached
# 32-bit half-word NumPy keeps (flag 1 byte + value 4 bytes). Plain bytes, never pickle: a
# state read from a checkpoint must not be able to run code.
_MAGIC = b"EMB1"
_STATE_BYTES = len(_MAGIC) + 8 + 16 + 16 + 1 + 4


class Generator:
    """torch.Generator: an independent random stream with `manual_seed`, `seed`,
    `initial_seed`, `get_state`, `set_state` and `clone_state`."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Restart the stream from `seed` (an int in [-2**63, 2**64); negatives wrap)."""
        if isinstance(seed, builtins.bool) or not isinstance(seed, numbers.Integral):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = _as_seed(seed)
        self._initial_seed = seed
        self.numpy = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        new = builtins.int(np.random.SeedSequence().entropy) % _U64
        self.manual_seed(new)
        return new

    def initial_seed(self):
        return self._initial_seed

    def get_state(self):
        """The full state as a 1-d uint8 tensor (as torch's ByteTensor state)."""
        state = self.numpy.bit_generator.state
        blob = b"".join([
            _MAGIC, self._initial_seed.to_bytes(8, "little"),
            state["state"]["state"].to_bytes(16, "little"),
            state["state"]["inc"].to_bytes(16, "little"),
            builtins.int(state["has_uint32"]).to_bytes(1, "little"),
            builtins.int(state["uinteger"]).to_bytes(4, "little")])
        return from_numpy(np.frombuffer(blob, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from `get_state` (of this or any ember Generator)."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not dt.uint8:
            raise TypeError("RNG state must be a ember.ByteTensor (uint8)")
        blob = np.ascontiguousarray(new_state.numpy(force=True)).tobytes()
        if len(blob) != _STATE_BYTES or not blob.startswith(_MAGIC):
            raise RuntimeError(f"Expected an ember Generator state of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(blob)}")
        fields = _split(blob[len(_MAGIC):], (8, 16, 16, 1, 4))
        seed, state, inc, has_uint32, uinteger = (builtins.int.from_bytes(f, "little")
                                                  for f in fields)
        self.numpy.bit_generator.state = {
            "bit_generator": "PCG64", "state": {"state": state, "inc": inc},
            "has_uint32": has_uint32, "uinteger": uinteger}
        self._initial_seed = seed
        return self

    def clone_state(self):
        """A new Generator on the same device, at the same point of the same stream."""
        twin = Generator(self.device)
        return twin.set_state(self.get_state())

    def __getstate__(self):
        return {"device": str(self.device), "state": self.get_state().numpy().tobytes()}

    def __setstate__(self, d):
        self.__init__(d["device"])
        self.set_state(from_numpy(np.frombuffer(d["state"], dtype=np.uint8).copy()))

    def __repr__(self):
        return f"<ember.Generator object (device={self.device}, seed={self._initial_seed})>"


def _as_seed(seed):
    """torch accepts seeds in [-2**63, 2**64) (anything int() takes); negatives wrap to uint64."""
    seed = builtins.int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


def _split(blob, widths):
    parts, at = [], 0
    for w in widths:
        parts.append(blob[at:at + w])
        at += w
    return parts


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator; returns it. Like torch, accepts anything int() takes."""
    default_generator.manual_seed(builtins.int(seed))
    return default_generator


def seed():
    """Seed the global generator from OS entropy; returns the seed."""
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run a block with the global random state saved and restored afterwards, so random
    numbers drawn inside do not change what is drawn after it. ember draws every device's
    samples from the host generators, so `devices` and `device_type` need no separate state."""
    if not enabled:
        yield
        return
    saved = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(saved)


def _numpy(generator):
    """The NumPy generator behind `generator=` (or the global one)."""
    if generator is None:
        return default_generator.numpy
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an ember.Generator, not {type(generator).__name__}")
    return generator.numpy


# ----------------------------------------------------------------------------------------------
# sampling helpers (host arrays)

_HALF_DIGITS = {"float16": 11, "bfloat16": 8}  # significand bits, counting the implicit one


def _sample_dtype(dtype):
    """The NumPy type samples are drawn in: float32 for the half types."""
    return np.float32 if dtype.name in _HALF_DIGITS else dtype.np


def _unit(g, shape, dtype):
    """Uniform samples in [0, 1) that stay below 1 after casting to `dtype`."""
    u = g.random(shape, dtype=np.float64 if dtype is dt.float64 else np.float32)
    digits = _HALF_DIGITS.get(dtype.name)
    if digits is not None:
        scale = np.float32(1 << digits)
        u = np.floor(u * scale) / scale
    return u


def _require_float(dtype, kernel):
    if not dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name(dtype)}'")


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


# ----------------------------------------------------------------------------------------------
# factories


def _size_args(args, size, fn_name):
    """`rand(2, 3)`, `rand((2, 3))` or `rand(size=(2, 3))`."""
    if size is not None:
        if args:
            raise TypeError(f"{fn_name}() got multiple values for argument 'size'")
        args = (size,)
    return _size(args, fn_name)


def _factory(draw, kernel, args, size, generator, out, dtype, layout, device, requires_grad,
             fn_name):
    _check_options(out, layout)
    shape = _size_args(args, size, fn_name)
    dtype = dt.get_default_dtype() if dtype is None else dtype
    _require_float(dtype, kernel)
    return _finish(draw(_numpy(generator), shape, dtype), dtype, device, requires_grad)


def rand(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1)."""
    return _factory(_unit, "check_uniform_bounds", args, size, generator, out, dtype, layout,
                    device, requires_grad, "rand")


def _standard_normal(g, shape, dtype):
    return g.standard_normal(shape, dtype=_sample_dtype(dtype))


def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples."""
    return _factory(_standard_normal, "normal_kernel_cpu", args, size, generator, out, dtype,
                    layout, device, requires_grad, "randn")


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad=False, pin_memory=False):
    """Integers in [low, high) (low defaults to 0): `randint(high, size)` or
    `randint(low, high, size)`; int64 unless `dtype` says otherwise."""
    _check_options(out, layout)
    low, high, size = _randint_args(args, low, high, size, "randint")
    shape = parse_size((size,))
    _check_size(shape)
    dtype = dt.int64 if dtype is None else dtype
    values = _integers(_numpy(generator), low, high, shape, dtype)
    return _finish(values, dtype, device, requires_grad)


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


def _integers(g, low, high, shape, dtype):
    """Integers in [low, high), checked against what `dtype` can hold (as torch's random_)."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    if dtype.category != dt.FLOATING:
        lo, hi = (0, 1) if dtype is dt.bool else (np.iinfo(dtype.np).min, np.iinfo(dtype.np).max)
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {dtype.name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {dtype.name}")
    return g.integers(low, high, shape, dtype=np.int64)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of 0 .. n-1 (int64 unless `dtype` is given)."""
    _check_options(out, layout)
    if isinstance(n, builtins.bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
    _check_size((n,))
    dtype = dt.int64 if dtype is None else dtype
    return _finish(_numpy(generator).permutation(n), dtype, device, requires_grad)


def _like(draw, input, generator, dtype, layout, device, requires_grad, memory_format):
    """A sample with the input's shape, dtype, device and memory order."""
    _check_options(layout=layout)
    dtype = input.dtype if dtype is None else dtype
    order = like_order(input, memory_format)
    shape = tuple(input.shape)
    if order is None:
        values = draw(_numpy(generator), shape, dtype)
    else:  # draw in memory order, then view the dims in input order
        values = draw(_numpy(generator), tuple(shape[d] for d in order), dtype)
        values = values.transpose(np.argsort(order))
    return _finish(values, dtype, input.device if device is None else device, requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None, pin_memory=False):
    _require_float(input.dtype if dtype is None else dtype, "check_uniform_bounds")
    return _like(_unit, input, generator, dtype, layout, device, requires_grad, memory_format)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None, pin_memory=False):
    _require_float(input.dtype if dtype is None else dtype, "normal_kernel_cpu")
    return _like(_standard_normal, input, generator, dtype, layout, device, requires_grad,
                 memory_format)


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
    target = input.dtype if dtype is None else dtype
    return _like(lambda g, s, d: _integers(g, low, high, s, target), input, generator, dtype,
                 layout, device, requires_grad, memory_format)


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


def _host(t):
    return t.detach().numpy(force=True)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    """Normal samples. Four forms, as torch:
        normal(mean: Tensor, std: Tensor)   shapes broadcast
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
        _require_float(dtype, "normal_kernel_cpu")
        z = _standard_normal(_numpy(generator), shape, dtype)
        return _finish(z * std + mean, dtype, device, requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise TypeError("normal(): size, dtype and requires_grad are only accepted with a "
                        "float mean and std")
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    result_dtype = tensors[0].dtype
    for t in tensors[1:]:
        result_dtype = dt.promote_types(result_dtype, t.dtype)
    _require_float(result_dtype, "normal_kernel_cpu")
    m = _host(mean) if isinstance(mean, Tensor) else _float_args(mean)[0]
    s = _host(std) if isinstance(std, Tensor) else _float_args(std)[0]
    if isinstance(std, Tensor):
        if np.any(s < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    else:
        _check_std(s)
    shape = _broadcast_shape(np.shape(m), np.shape(s))
    z = _standard_normal(_numpy(generator), shape, result_dtype)
    sample = _finish(z * s + m, result_dtype, tensors[0].device, False)
    return _noise_of("Normal", sample, tensors)


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
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples: with probabilities `input` (floating, each in [0, 1]), or with one
    probability `p` for every element (then `input` only gives shape, dtype and device)."""
    _check_options(out)
    g = _numpy(generator)
    if p is None:
        _require_float(input.dtype, "bernoulli_tensor_cpu_p_")
        probs = _host(input)
        if probs.size and not (np.all(probs >= 0) and np.all(probs <= 1)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        values = _unit(g, probs.shape, dt.float64) < probs
        return _noise_of("Bernoulli", _finish(values, input.dtype, input.device, False),
                         [input])
    p = _check_probability(p, "bernoulli")
    values = _unit(g, tuple(input.shape), dt.float64) < p
    return _finish(values, input.dtype, input.device, False)


def _check_probability(p, fn_name):
    (p,) = _float_args(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{fn_name}_ expects p to be in [0, 1], but got p={p:g}")
    return p


@export(function=False, method=True)
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categories of each row of `input` (non-negative weights, 1-d or
    2-d). Without replacement no index repeats within a row."""
    _check_options(out)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dt.scalar_name(input.dtype)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rows = 1 if input.ndim == 1 else input.shape[0]
    weights = _host(input).astype(np.float64).reshape(rows, categories)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(weights.sum(axis=1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _numpy(generator)
    draw = _with_replacement if replacement else _without_replacement
    picks = draw(g, weights, num_samples)
    shape = (num_samples,) if input.ndim == 1 else (input.shape[0], num_samples)
    return _finish(picks.reshape(shape).astype(np.int64), dt.int64, input.device, False)


def _with_replacement(g, weights, k):
    """Inverse-CDF sampling. One searchsorted per row (rows are few; samples are many)."""
    u = g.random((weights.shape[0], k))
    picks = np.empty(u.shape, dtype=np.int64)
    for row, (w, r) in enumerate(zip(weights, u)):
        cdf = np.cumsum(w)
        # strictly greater: a zero-weight category (a flat step of the cdf) is never chosen
        picks[row] = np.searchsorted(cdf / cdf[-1], r, side="right")
    return np.minimum(picks, weights.shape[1] - 1)


def _without_replacement(g, weights, k):
    """Gumbel-top-k: the k largest of log(w) + Gumbel noise are a sample without replacement,
    in the order sequential draws would pick them. Zero weights come last, in random order."""
    u = g.random(weights.shape)
    with np.errstate(divide="ignore"):
        keys = np.log(weights) - np.log(-np.log(u))
    # finite keys are > -800 (log of the smallest double, minus a Gumbel draw's tail)
    keys = np.where(weights > 0, keys, -1e4 - g.random(weights.shape))
    return np.argsort(-keys, axis=1, kind="stable")[:, :k]


def poisson(input, generator=None):
    """Poisson samples with rates `input` (floating, non-negative); same dtype as input."""
    _require_float(input.dtype, "poisson_cpu")
    rates = _host(input)
    if np.any(rates < 0):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    values = _numpy(generator).poisson(rates.astype(np.float64))
    return _noise_of("Poisson", _finish(values, input.dtype, input.device, False), [input])


# ----------------------------------------------------------------------------------------------
# in-place random methods: draw on the host, then write through copy_ (the in-place path)


def _fill_(self, values):
    """Write `values` (a host array of self's shape) into self, as any in-place op would."""
    # np.require, not np.ascontiguousarray: the latter turns a 0-d array into shape (1,)
    return self.copy_(from_numpy(np.require(np.asarray(values), requirements="C")))


@export(function=False, method=True)
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with uniform samples in [from, to)."""
    from_ = kwargs.pop("from", from_)
    _no_extra(kwargs, "uniform_")
    _require_float(self.dtype, "check_uniform_bounds")
    low, high = _float_args(from_, to)
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={low:g} > to={high:g}")
    u = _unit(_numpy(generator), tuple(self.shape), self.dtype)
    return _fill_(self, u * (high - low) + low)


def _no_extra(kwargs, fn_name):
    if kwargs:
        raise TypeError(f"{fn_name}() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")


@export(function=False, method=True)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples N(mean, std**2)."""
    _require_float(self.dtype, "normal_kernel_cpu")
    mean, std = _float_args(mean, std)
    _check_std(std)
    z = _standard_normal(_numpy(generator), tuple(self.shape), self.dtype)
    return _fill_(self, z * std + mean)


@export(function=False, method=True)
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 (probability p) or 0; `p` may be a tensor broadcastable to self."""
    g = _numpy(generator)
    if isinstance(p, Tensor):
        probs = _host(p)
        try:
            probs = np.broadcast_to(probs, tuple(self.shape))
        except ValueError:
            raise RuntimeError(f"The expanded size of the tensor ({list(self.shape)}) must "
                               f"match the existing size ({list(p.shape)})") from None
        if probs.size and not (np.all(probs >= 0) and np.all(probs <= 1)):
            raise RuntimeError("bernoulli_ expects p to be in [0, 1]")
    else:
        probs = _check_probability(p, "bernoulli")
    return _fill_(self, _unit(g, tuple(self.shape), dt.float64) < probs)


_FLOAT_RANDOM_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


@export(function=False, method=True)
def random_(self, *args, generator=None, **kwargs):
    """Fill with integers: `random_()` in [0, 2**digits] for floats (every integer the type
    holds exactly) or [0, max] for integers; `random_(to)` in [0, to);
    `random_(from, to)` in [from, to)."""
    if len(args) == 1 and not kwargs:
        low, to = 0, args[0]  # random_(to)
    else:
        low = kwargs.pop("from", args[0] if args else 0)
        to = kwargs.pop("to", args[1] if len(args) > 1 else None)
        _no_extra(kwargs, "random_")
    g = _numpy(generator)
    if to is not None:
        return _fill_(self, _integers(g, builtins.int(low), builtins.int(to), tuple(self.shape),
                                      self.dtype))
    if self.dtype.is_floating_point:
        top = 1 << _FLOAT_RANDOM_DIGITS[self.dtype.name]
    else:
        top = 1 if self.dtype is dt.bool else builtins.int(np.iinfo(self.dtype.np).max)
    values = g.integers(builtins.int(low), top, tuple(self.shape), dtype=np.int64,
                        endpoint=True)
    return _fill_(self, values)


@export(function=False, method=True)
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate `lambd` (mean 1 / lambd)."""
    _require_continuous(self, "Exponential")
    (lambd,) = _float_args(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    e = _numpy(generator).standard_exponential(tuple(self.shape),
                                               dtype=_sample_dtype(self.dtype))
    return _fill_(self, e / lambd)


def _require_continuous(self, name):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{dt.scalar_name(self.dtype)}")


@export(function=False, method=True)
def geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success (>= 1)."""
    (p,) = _float_args(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill_(self, _numpy(generator).geometric(p, tuple(self.shape)))


@export(function=False, method=True)
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp(N(mean, std**2)) samples."""
    _require_float(self.dtype, "log_normal_cpu")
    mean, std = _float_args(mean, std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    z = _numpy(generator).standard_normal(tuple(self.shape))
    return _fill_(self, np.exp(z * std + mean))


@export(function=False, method=True)
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy samples: median + sigma * tan(pi * (u - 1/2))."""
    _require_continuous(self, "Cauchy")
    median, sigma = _float_args(median, sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill_(self, median + sigma * _numpy(generator).standard_cauchy(tuple(self.shape)))

"""`autocast`: regions where chosen ops run in a lower-precision float dtype (torch.amp).

    with ember.autocast("cpu"):              # bfloat16 for matmuls and convolutions
        logits = model(x)                    # nn.Linear runs in bfloat16 ...
        loss = F.cross_entropy(logits, y)    # ... the loss in float32 (_policy.py's lists)

State, per device type ("cpu", "cuda"): enabled, the dtype, whether casts are cached, and how
deeply regions nest -- what `ember.is_autocast_enabled(device)`, `get_autocast_dtype`, ...
read and set, as torch's. When any device has autocast on, `_dispatch._autocast` holds
`_cast_inputs`, which casts an op's inputs per the device's policy before dispatch goes on;
otherwise it is None and the hot path pays one global check. In-place ops are not cast (as in
torch), and only floating inputs on the region's device type that are not float64 are.

Caching: inside a region, the cast of a leaf that requires grad (a weight) is made once and
reused until the outermost region exits, so a weight used by many ops is converted once, as
torch's cast cache does.

`autocast("cuda")` on a machine without a GPU warns and disables itself, as torch's does.

Read next: grad_scaler.py.
"""
import functools
import warnings

from .. import _dtype as dt
from ..ops import _dispatch
from . import _policy

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_TABLES = {"cpu": _policy.CPU, "cuda": _policy.CUDA}
_DEFAULT_DTYPES = {"cpu": dt.bfloat16, "cuda": dt.float16}


class _DeviceState:
    __slots__ = ("enabled", "dtype")

    def __init__(self, device_type):
        self.enabled = False
        self.dtype = _DEFAULT_DTYPES[device_type]


_state = {device_type: _DeviceState(device_type) for device_type in _TABLES}
_cache_enabled = True
_nesting = 0
_cache = {}  # id(leaf) -> (leaf, its cast): the leaf is kept so its id cannot be reused


def is_autocast_available(device_type):
    """Whether autocast supports `device_type` ('cpu' and 'cuda' in ember)."""
    return device_type in _TABLES


def _device_state(device_type):
    if device_type is None:
        device_type = "cuda"  # torch's default for the argument-less forms
    state = _state.get(device_type)
    if state is None:
        raise RuntimeError(f"unsupported autocast device_type '{device_type}'")
    return state


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type` (without one: for CUDA, as torch)."""
    return _device_state(device_type).enabled


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for a device type (`set_autocast_enabled(True)` means CUDA)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _device_state(device_type).enabled = bool(enabled)
    _refresh_hook()


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on `device_type` (bfloat16 on the CPU, float16 on CUDA)."""
    return _device_state(device_type).dtype


def set_autocast_dtype(device_type, dtype):
    """Set the dtype autocast casts to on `device_type`."""
    _device_state(device_type).dtype = dtype


def is_autocast_cache_enabled():
    """Whether casts of weights are cached inside autocast regions."""
    return _cache_enabled


def set_autocast_cache_enabled(enabled):
    """Turn the cast cache on or off."""
    global _cache_enabled
    _cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Forget every cached cast."""
    _cache.clear()


def autocast_increment_nesting():
    """One more region entered; returns the new depth."""
    global _nesting
    _nesting += 1
    return _nesting


def autocast_decrement_nesting():
    """One region left; returns the new depth."""
    global _nesting
    _nesting -= 1
    return _nesting


# the legacy per-device spellings torch still has
def is_autocast_cpu_enabled():
    """`is_autocast_enabled("cpu")`."""
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """`set_autocast_enabled("cpu", enabled)`."""
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """`get_autocast_dtype("cpu")`."""
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """`set_autocast_dtype("cpu", dtype)`."""
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """`get_autocast_dtype("cuda")`."""
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """`set_autocast_dtype("cuda", dtype)`."""
    set_autocast_dtype("cuda", dtype)


# ----------------------------------------------------------------------------------------------
# the region


class autocast:
    """A region (context manager or decorator) where ops run per autocast's policy.

    `device_type` is "cpu" or "cuda"; `dtype` defaults to the device's autocast dtype;
    `enabled=False` turns autocast off inside (nested regions restore what was outside);
    `cache_enabled` defaults to the global cache setting."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        from .._device import device

        device(device_type)  # an unknown device string fails as torch's parser fails
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None \
            else bool(cache_enabled)
        self._enabled = bool(enabled) and self._supported()
        self._saved = None

    def _supported(self):
        """torch's checks: a missing GPU or an unsupported dtype warn and disable."""
        if self.device == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=3)
                return False
            if self.fast_dtype is dt.bfloat16 and not cuda.is_bf16_supported():
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                   "switch dtype to float16.")
        elif self.fast_dtype not in (dt.bfloat16, dt.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.", stacklevel=3)
            return False
        return True

    def __enter__(self):
        state = _state[self.device]
        self._saved = (state.enabled, state.dtype, _cache_enabled)
        state.enabled = self._enabled
        state.dtype = self.fast_dtype
        set_autocast_cache_enabled(self._cache_enabled)
        autocast_increment_nesting()
        _refresh_hook()
        return self

    def __exit__(self, *exc):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        state = _state[self.device]
        state.enabled, state.dtype, cache = self._saved
        set_autocast_cache_enabled(cache)
        _refresh_hook()
        return False

    def __call__(self, func):
        """Use as a decorator: every call of `func` runs inside this region."""
        @functools.wraps(func)
        def in_region(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return in_region


def _refresh_hook():
    """Dispatch casts inputs only while some device has autocast on."""
    on = any(state.enabled for state in _state.values())
    _dispatch._autocast = _cast_inputs if on else None


# ----------------------------------------------------------------------------------------------
# the dispatch hook


def _cast_inputs(name, args):
    """`args` cast per the policy of op `name` on the device of its first tensor (dispatch
    calls this for every op while autocast is on somewhere)."""
    device_type = next((x._device.type for x in args if isinstance(x, _Tensor)), None)
    state = _state.get(device_type)
    if state is None or not state.enabled:
        return args
    policy = _TABLES[device_type].get(name)
    if policy is None:
        return args
    return _apply(policy, args, device_type, state.dtype)


def _apply(policy, args, device_type, lower):
    if policy == "banned":
        raise RuntimeError(_BANNED)
    if policy == "lower":
        target = lower
    elif policy == "fp32":
        target = dt.float32
    else:  # promote: float32 if any eligible input is float32
        eligible = [x for x in args if _eligible(x, device_type)]
        target = dt.float32 if any(x._dtype is dt.float32 for x in eligible) else lower
    return tuple(_cast(x, target) if _eligible(x, device_type) and x._dtype is not target
                 else x for x in args)


def _eligible(x, device_type):
    return (isinstance(x, _Tensor) and x._device.type == device_type
            and x._dtype.is_floating_point and x._dtype is not dt.float64)


def _cast(x, dtype):
    cacheable = (_cache_enabled and x._requires_grad and x._grad_fn is None
                 and x._base is None and x._dtype is dt.float32)
    if not cacheable:
        return x.to(dtype)
    hit = _cache.get(id(x))
    if hit is None or hit[0] is not x or hit[1]._dtype is not dtype:
        hit = _cache[id(x)] = (x, x.to(dtype))
    return hit[1]


_BANNED = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
           "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
           "layer.\nIn this case, combine the two layers using "
           "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
           "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")

from .._tensor import Tensor as _Tensor  # noqa: E402

# ----------------------------------------------------------------------------------------------
# custom autograd.Functions


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's `forward`: with `cast_inputs=None` it runs as it is
    called and remembers whether autocast was on (for `custom_bwd`); with a dtype, inside an
    autocast region it runs with autocast off and its floating inputs cast to that dtype."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_all(args, device_type, cast_inputs),
                       **_cast_all(kwargs, device_type, cast_inputs))
    return forward


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's `backward`: it runs with the autocast state its
    forward ran with (see `custom_fwd`)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return backward


def _cast_all(value, device_type, dtype):
    """`value` with every eligible tensor inside (lists, tuples, dicts) cast to `dtype`."""
    if _eligible(value, device_type):
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_all(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_all(v, device_type, dtype) for k, v in value.items()}
    return value

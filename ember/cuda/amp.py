"""ember.cuda.amp (torch.cuda.amp): the deprecated spellings of `ember.amp.autocast("cuda")`,
`ember.amp.GradScaler("cuda")` and `custom_fwd`/`custom_bwd` for CUDA. They warn as torch's
do; without a GPU the autocast region and the scaler then disable themselves (with torch's
warning), so a program written for a GPU runs unchanged on the CPU in float32."""
import functools
import warnings

from ..amp import autocast_mode, grad_scaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(autocast_mode.autocast):
    """`ember.amp.autocast("cuda", ...)`, deprecated (a FutureWarning, as in torch)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        from .. import float16

        super().__init__("cuda", dtype=float16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """`ember.amp.GradScaler("cuda", ...)`, deprecated (a FutureWarning, as in torch)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """`ember.amp.custom_fwd(device_type="cuda")`, deprecated (a FutureWarning)."""
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    if fwd is None:
        return functools.partial(autocast_mode.custom_fwd, device_type="cuda",
                                 cast_inputs=cast_inputs)
    return autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    """`ember.amp.custom_bwd(device_type="cuda")`, deprecated (a FutureWarning)."""
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning,
                  stacklevel=2)
    if bwd is None:
        return functools.partial(autocast_mode.custom_bwd, device_type="cuda")
    return autocast_mode.custom_bwd(bwd, device_type="cuda")

"""ember.amp: automatic mixed precision (torch.amp) -- `autocast` regions that run chosen ops
in bfloat16/float16 (autocast_mode.py, with the per-device op lists in _policy.py) and
`GradScaler`, which scales a float16 loss so small gradients do not flush to zero
(grad_scaler.py)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]

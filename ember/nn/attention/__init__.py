"""ember.nn.attention (torch.nn.attention): choosing scaled-dot-product attention's kernel.

`sdpa_kernel(backends)` restricts, inside a block, which implementations
`F.scaled_dot_product_attention` may use. ember has one implementation (ops/nn/attention.py,
the math of torch's MATH backend), so the choice is recorded -- in the same switches
`ember.backends.cuda.enable_flash_sdp(...)` and friends set -- and read back, but does not
change how attention is computed.
"""
import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The implementations of scaled-dot-product attention torch can choose from (the same
    names and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):  # torch prints the name, as a plain Enum does
        return f"SDPBackend.{self.name}"


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Allow only `backends` (one SDPBackend or a list of them) inside the block, then restore
    the previous switches. `set_priority` (an order of preference) is accepted and, with one
    implementation to choose from, has no effect."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else backends
    saved = dict(_cuda._sdp)
    _cuda._sdp.update({switch: backend in chosen for backend, switch in _SWITCH.items()})
    try:
        yield {}
    finally:
        _cuda._sdp.update(saved)

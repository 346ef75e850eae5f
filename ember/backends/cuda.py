"""ember.backends.cuda (torch.backends.cuda): matmul precision flags and the switches of
scaled-dot-product attention's fused kernels.

`matmul.allow_tf32`, `matmul.allow_fp16_reduced_precision_reduction` and
`matmul.allow_bf16_reduced_precision_reduction` keep torch's defaults and read back what is
set, but ember's GPU products are CuPy's in full float32 whatever they say. Likewise the SDP
switches (`enable_flash_sdp(False)`, `sdp_kernel(...)`) are recorded: ember's attention is one
kernel (ops/nn/attention.py) with no flash or memory-efficient variant to choose.
`is_built()` says whether CuPy, ember's GPU backend, can be imported.
"""
import contextlib
import importlib.util
import warnings

__all__ = ["matmul", "is_built", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp",
           "is_flash_attention_available", "sdp_kernel", "preferred_linalg_library"]


class _MatmulFlags:
    """`ember.backends.cuda.matmul`: settable flags, unknown names refused as in torch."""

    _DEFAULTS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
                 "allow_bf16_reduced_precision_reduction": True,
                 "allow_fp16_accumulation": False, "fp32_precision": "ieee"}

    def __init__(self):
        self.__dict__.update(self._DEFAULTS)

    def __setattr__(self, name, value):
        if name not in self._DEFAULTS:
            raise AttributeError(f"Unknown attribute {name}")
        self.__dict__[name] = value
        if name == "allow_tf32":  # torch keeps the two spellings in step
            self.__dict__["fp32_precision"] = "tf32" if value else "ieee"

    def __getattr__(self, name):
        raise AttributeError(f"Unknown attribute {name}")


matmul = _MatmulFlags()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
_linalg_library = "default"


def is_built():
    """Whether ember's GPU backend (CuPy) is installed."""
    return importlib.util.find_spec("cupy") is not None


def is_flash_attention_available():
    """False: ember has no flash-attention kernel."""
    return False


def flash_sdp_enabled():
    """The recorded flash-attention switch (ember's attention does not read it)."""
    return _sdp["flash"]


def enable_flash_sdp(enabled):
    """Record the flash-attention switch."""
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled():
    """The recorded memory-efficient-attention switch."""
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled):
    """Record the memory-efficient-attention switch."""
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled():
    """The recorded math-attention switch."""
    return _sdp["math"]


def enable_math_sdp(enabled):
    """Record the math-attention switch."""
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled():
    """The recorded cuDNN-attention switch."""
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled):
    """Record the cuDNN-attention switch."""
    _sdp["cudnn"] = bool(enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated as in torch (a FutureWarning): set the four SDP switches inside a block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see `torch.nn.attention.sdpa_kernel()`"
                  " for the new context manager, with updated signature.", FutureWarning,
                  stacklevel=3)
    saved = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math),
                mem_efficient=bool(enable_mem_efficient), cudnn=bool(enable_cudnn))
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None):
    """The recorded linear-algebra library choice ('default'; ember always uses NumPy's or
    CuPy's)."""
    global _linalg_library
    if backend is not None:
        _linalg_library = str(backend)
    return _linalg_library

"""Process-wide switches torch keeps at its top level, and what ember does with each.

    use_deterministic_algorithms / are_deterministic_algorithms_enabled /
    set_deterministic_debug_mode ...   recorded and reported. ember's kernels are
                                       deterministic already (NumPy reductions and scatters
                                       run in a fixed order), so no algorithm needs replacing.
    set_float32_matmul_precision       recorded; float32 products always run in float32
                                       (NumPy has no TF32 or bfloat16 fast path to enable).
    set_flush_denormal                 False: NumPy offers no switch for it, as torch answers
                                       on hardware without one.
    set/get_num_interop_threads        recorded: ember runs ops one at a time (intra-op
                                       threads are set_num_threads).
    set_warn_always                    recorded; ember warns through Python's warnings, whose
                                       filters decide how often a warning shows.
    set_anomaly_enabled                autograd's anomaly mode (autograd/anomaly_mode.py).

Read next: `_tensor.py`.
"""
import os

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision", "set_flush_denormal", "set_num_interop_threads",
           "get_num_interop_threads", "init_num_threads", "set_warn_always",
           "is_warn_always_enabled", "set_anomaly_enabled"]

_state = {"deterministic": False, "warn_only": False, "matmul_precision": "highest",
          "interop_threads": None, "warn_always": False}
_DEBUG_MODES = ("default", "warn", "error")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (ember's are: see the module docstring)."""
    _state["deterministic"] = bool(mode)
    _state["warn_only"] = bool(mode) and bool(warn_only)


def are_deterministic_algorithms_enabled():
    """Whether use_deterministic_algorithms(True) is in effect."""
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether deterministic mode only warns (warn_only=True)."""
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0/'default' (off), 1/'warn', 2/'error': use_deterministic_algorithms by number."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0 (off), 1 (warn only) or 2 (error)."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_float32_matmul_precision(precision):
    """'highest', 'high' or 'medium' (recorded; ember's float32 products are all 'highest')."""
    if precision not in ("highest", "high", "medium"):
        import warnings

        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["matmul_precision"] = precision


def get_float32_matmul_precision():
    """The precision last set ('highest' by default)."""
    return _state["matmul_precision"]


def set_flush_denormal(mode):
    """Whether denormal floats could be flushed to zero: False, NumPy has no such switch."""
    return False


def set_num_interop_threads(num):
    """Record the inter-op thread count (once, before it is read, as torch requires)."""
    if _state["interop_threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    if num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _state["interop_threads"] = int(num)


def get_num_interop_threads():
    """The inter-op thread count: as set, else the number of CPUs, torch's default."""
    if _state["interop_threads"] is None:
        _state["interop_threads"] = os.cpu_count() or 1
    return _state["interop_threads"]


def init_num_threads():
    """Nothing to initialise: ember's thread pool starts on first use."""


def set_warn_always(b):
    """Record whether warnings torch shows once should show every time."""
    _state["warn_always"] = bool(b)


def is_warn_always_enabled():
    """The set_warn_always flag."""
    return _state["warn_always"]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn autograd's anomaly detection on or off (torch._C's switch behind
    autograd.set_detect_anomaly)."""
    from .autograd import anomaly_mode

    anomaly_mode._set(enabled, check_nan)

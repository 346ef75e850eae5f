"""Anomaly detection: `detect_anomaly()` / `set_detect_anomaly(True)`.

While on, every node remembers where in the forward pass it was created (a stack trace), and
the engine checks each backward result for NaN. On a NaN, or on a saved tensor that was
modified in place, the error names the op and shows the forward code that created it.
"""
import traceback

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]

enabled = False
check_nan_default = True
check_nan = True


def is_anomaly_enabled():
    return enabled


def is_anomaly_check_nan_enabled():
    return check_nan


class set_detect_anomaly:
    """Turn anomaly mode on or off; as a context manager it restores the previous state."""

    def __init__(self, mode, check_nan=True):
        global enabled
        self.prev = (enabled, globals()["check_nan"])
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


class detect_anomaly:
    """Context manager / decorator: anomaly mode inside the block."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = (enabled, check_nan)
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)
        return wrapper


def _set(mode, nan):
    global enabled, check_nan
    enabled = bool(mode)
    check_nan = bool(nan)


def remember_forward(node):
    """Called by Node() while anomaly mode is on: keep the user's stack (without ember frames)."""
    frames = [f for f in traceback.extract_stack()[:-1] if "/ember/" not in f.filename]
    node.metadata["traceback_"] = traceback.format_list(frames)


def forward_trace(node):
    lines = node.metadata.get("traceback_") if node is not None else None
    return "".join(lines) if lines else ""


def check_gradients(node, grads):
    """Raise if a backward result contains NaN (only while anomaly mode checks NaN)."""
    if not (enabled and check_nan):
        return
    for i, g in enumerate(grads):
        if g is not None and g._dtype.is_floating_point and bool(g.isnan().any()):
            trace = forward_trace(node)
            where = f"\n\nThe forward call that created it:\n{trace}" if trace else ""
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.{where}")


def explain_inplace(message, tensor):
    """Add the forward location of the op that saved the modified tensor, when known."""
    if not enabled:
        return message
    fn = tensor._grad_fn
    trace = forward_trace(fn)
    if trace:
        message += f"\n\nThe tensor was produced by {fn.name()} at:\n{trace}"
    return message

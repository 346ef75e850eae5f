"""Anomaly detection: `detect_anomaly()` / `set_detect_anomaly(True)`, for debugging backward.

While it is on:
  * every graph node remembers the user's stack when it was created (`Node.__init__` calls
    `remember_forward`), so errors in backward can point at the forward line responsible;
  * the engine checks every gradient a node returns; a NaN raises
        RuntimeError: Function 'DivBackward0' returned nan values in its 0th output.
    followed by the forward stack of that node;
  * every in-place op records where it ran (`ops/_dispatch.py: dispatch_inplace` calls
    `remember_inplace`), so the "modified by an inplace operation" error (raised in
    `graph.unpack_saved`) names the node that saved the tensor, where it was created, and
    where the in-place write happened.
When it is off, these hooks cost one boolean test each. The mode is global (not per thread),
as in torch.

Read next: `gradcheck.py`.
"""
import functools
import os
import sys
import traceback
import warnings

from .._dtype import FLOATING

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

enabled = False
check_nan = True

# id(version counter) -> (counter, [(version after the write, op name, stack lines)]): where
# each tensor storage was modified in place while anomaly mode was on. Cleared when it turns
# off. Keyed by id because version counters have no room for more attributes; the entry keeps
# its counter alive, so the id cannot be reused while it is in here.
_inplace_log = {}

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled():
    """Whether anomaly detection (`detect_anomaly` / `set_detect_anomaly`) is on."""
    return enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly mode also checks backward results for NaN (its `check_nan` argument, True by
    default)."""
    return check_nan


class set_detect_anomaly:
    """`set_detect_anomaly(True)` turns anomaly mode on at once; used as a context manager, the
    previous mode comes back on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = (enabled, globals()["check_nan"])
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False


class detect_anomaly:
    """Context manager and decorator: anomaly mode inside the block (or the function)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (enabled, check_nan)
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            prev = (enabled, check_nan)  # per call, not on self: the function may recurse
            _set(True, self.check_nan)
            try:
                return func(*args, **kwargs)
            finally:
                _set(*prev)
        return wrapper


def _set(mode, nan):
    global enabled, check_nan
    enabled = bool(mode)
    check_nan = bool(nan)
    if not enabled:
        _inplace_log.clear()


# ----------------------------------------------------------------------------------------------
# recording (only called while enabled)


def _user_stack():
    """The current stack without ember's own frames (and without this module's)."""
    frames = traceback.extract_stack(sys._getframe(2))
    return traceback.format_list([f for f in frames if not f.filename.startswith(_EMBER_DIR)])


def remember_forward(node):
    """Called by Node() while anomaly mode is on."""
    node.metadata["traceback_"] = _user_stack()


def remember_inplace(tensor, op):
    """Called by dispatch_inplace after bumping `tensor`'s version while anomaly mode is on."""
    vc = tensor._vc
    entry = _inplace_log.get(id(vc))
    if entry is None:
        entry = _inplace_log[id(vc)] = (vc, [])
    entry[1].append((vc.value, op.name, _user_stack()))


# ----------------------------------------------------------------------------------------------
# explaining errors


def forward_trace(node):
    """The Python stack recorded when `node` was created in forward, as text ("" when anomaly mode
    was off then, or `node` is None); used in anomaly error messages."""
    lines = node.metadata.get("traceback_") if node is not None else None
    return "".join(lines) if lines else ""


def check_gradients(node, grads):
    """Raise if a backward result contains NaN (called by the engine while enabled)."""
    if not check_nan:
        return
    for i, g in enumerate(grads):
        if g is None or g._dtype.category < FLOATING:  # neither floating nor complex
            continue
        data = g._data
        if bool((data != data).any()):  # NaN is the only value unequal to itself
            trace = forward_trace(node)
            where = f"\n\nTraceback of the forward call that created {node.name()}:\n{trace}" \
                if trace else ""
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               f"output.{where}")


def explain_inplace(message, vc, expected, saver):
    """Add to the version-counter error: which node saved the tensor and where it was created,
    and where the storage was then modified in place."""
    if not enabled:
        return message
    message = message.split(" Hint:")[0]  # the hint says to turn on anomaly mode: it is on
    if saver is not None:
        message += f"\n\nThe tensor was saved for backward by {saver.name()}"
        trace = forward_trace(saver)
        message += f", created at:\n{trace}" if trace else "."
    entry = _inplace_log.get(id(vc))
    writes = [w for w in entry[1] if w[0] > expected] if entry is not None else []
    if writes:
        version, name, stack = writes[0]
        message += (f"\nIt was then modified by the in-place op '{name}_' (to version {version}) "
                    f"at:\n{''.join(stack)}")
    return message

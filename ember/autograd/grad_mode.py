"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`; and two engine
switches, `set_multithreading_enabled` and `enforce_grad_layout_policy`.

Each is a context manager and a decorator, as in torch. The flag they flip is read by dispatch
(`ops/_dispatch.py`) on every op to decide whether to record a graph node. Like torch's, the
state is per thread.
"""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled",
           "is_multithreading_enabled", "enforce_grad_layout_policy"]


class _State(threading.local):
    grad_enabled = True
    inference = False


state = _State()


def is_grad_enabled():
    """Whether ops now record a graph for autograd (False inside `no_grad`, `inference_mode`, ...).
    """
    return state.grad_enabled


def is_inference_mode_enabled():
    """Whether an `inference_mode` block is active."""
    return state.inference


class _GradModeContext:
    """Base: subclasses say what the mode is in `_enter`; we restore the old mode on exit and
    wrap functions (and generator functions) when used as a decorator."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                with self.clone():
                    yield from func(*args, **kwargs)
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()

    def __enter__(self):
        self._saved = (state.grad_enabled, state.inference)
        self._enter()
        return None

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self._saved
        return False


class no_grad(_GradModeContext):
    """Ops inside record no graph; their results do not require grad."""

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):  # used as @no_grad without parentheses
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        pass

    def _enter(self):
        state.grad_enabled = False


class enable_grad(_GradModeContext):
    """Turn recording back on inside a `no_grad` region."""

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        pass

    def _enter(self):
        # inside inference_mode nothing is recorded, even here (tensors made there are
        # "inference tensors" in torch, which never join a graph)
        state.grad_enabled = not state.inference


class set_grad_enabled(_GradModeContext):
    """`set_grad_enabled(False)` takes effect at once (as a function call) and also works as a
    context manager that restores the previous mode."""

    def __init__(self, mode):
        self._prev = state.grad_enabled
        self.mode = bool(mode)
        state.grad_enabled = self.mode

    def clone(self):
        """A new `set_grad_enabled` with the same mode. As in torch, making it sets that mode at
        once."""
        return self.__class__(self.mode)

    def __call__(self, func):
        state.grad_enabled = self._prev  # as a decorator it must not change the mode right now
        return super().__call__(func)

    def __enter__(self):
        self._saved = (self._prev, state.inference)
        state.grad_enabled = self.mode

    def _enter(self):
        state.grad_enabled = self.mode


class inference_mode(_GradModeContext):
    """Like `no_grad`; ember keeps no extra bookkeeping that inference mode could skip, so the
    two differ only in `is_inference_mode_enabled()` and in tensors' `is_inference()`."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def clone(self):
        """A new `inference_mode` with the same mode (for reuse as a decorator)."""
        return self.__class__(self.mode)

    def _enter(self):
        if self.mode:
            state.grad_enabled = False
            state.inference = True


# ----------------------------------------------------------------------------------------------
# engine switches: both take effect when called, and restore the previous value when used as
# a context manager. ember's engine runs every backward on the calling thread, and hands a
# leaf the gradient as the rule computed it, so neither changes what ember computes.

_engine = {"multithreading": True}


def is_multithreading_enabled():
    """Whether backward may use worker threads (torch's per-device threads); True by default."""
    return _engine["multithreading"]


class _EngineSwitch:
    _key = None

    def __init__(self, mode):
        self._prev = self._read()
        self.mode = bool(mode)
        self._write(self.mode)

    def _read(self):
        return _engine[self._key]

    def _write(self, value):
        _engine[self._key] = value

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self._write(self._prev)
        return False

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_EngineSwitch):
    """Allow (True) or forbid worker threads in backward (ember's backward runs on the calling
    thread either way)."""

    _key = "multithreading"


class enforce_grad_layout_policy(_EngineSwitch):
    """Whether accumulated gradients must take their parameter's strides (torch's layout
    contract, True by default). ember keeps a first gradient as the rule produced it and adds
    later ones into it, under either setting."""

    def _read(self):
        return getattr(state, "grad_layout_policy", True)

    def _write(self, value):
        state.grad_layout_policy = value


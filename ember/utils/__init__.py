"""ember.utils: hooks, data loading and other helpers (torch.utils)."""
from . import hooks  # noqa: F401


def __getattr__(name):
    """`ember.utils.data`, `checkpoint` and `tensorboard` load on first use: ember.utils itself
    is imported while ember is still loading (autograd needs hooks), and they need the finished
    package."""
    if name in ("data", "checkpoint", "tensorboard"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""ember.backends.cudnn (torch.backends.cudnn): ember does not use cuDNN.

`is_available()` is False and `version()` None. The flags (`enabled`, `benchmark`,
`benchmark_limit`, `deterministic`, `allow_tf32`) are plain module attributes with torch's
defaults: a program may set them, and reads back what it set, but they change nothing --
ember's convolutions are its own im2col + GEMM on every device, deterministic already.
"""
import contextlib

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark",
           "benchmark_limit", "deterministic", "allow_tf32"]

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """False: ember has no cuDNN backend."""
    return False


def version():
    """None: no cuDNN is linked."""
    return None


def is_acceptable(tensor):
    """False: cuDNN never runs ember's ops."""
    return False


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Set the flags inside a `with` block and restore them after (they change nothing)."""
    module = globals()
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {name: module[name] for name in names}
    module.update(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                  deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)

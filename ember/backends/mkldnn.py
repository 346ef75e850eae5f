"""ember.backends.mkldnn (torch.backends.mkldnn): ember does not use oneDNN.

`is_available()` is False; `enabled`, `deterministic` and `allow_tf32` read back what is set
and change nothing."""
import contextlib

__all__ = ["is_available", "flags", "enabled", "deterministic", "allow_tf32"]

enabled = True
deterministic = False
allow_tf32 = True


def is_available():
    """False: no oneDNN kernels are part of ember."""
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    """Set the flags inside a `with` block and restore them after (they change nothing)."""
    module = globals()
    saved = {name: module[name] for name in ("enabled", "deterministic", "allow_tf32")}
    module.update(enabled=enabled, deterministic=deterministic, allow_tf32=allow_tf32)
    try:
        yield
    finally:
        module.update(saved)

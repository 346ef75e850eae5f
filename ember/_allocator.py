"""Keeping freed memory for reuse, the CPU counterpart of a caching allocator.

A training step allocates and frees the same large arrays (activations, patch matrices,
gradients) every time. glibc's malloc hands blocks above a threshold straight back to the
kernel and trims the top of its heaps, so the next step gets fresh pages, and the kernel
zeroes every 4 KiB page again on first touch. Measured here: 24,000 page faults and ~100 ms
of system time per GPT training step, ~17,000 and ~170 ms per ResNet step.

So, on glibc, ember asks malloc (mallopt) to serve blocks of up to 32 MiB from its heaps and
to keep up to 1 GiB of free memory there instead of returning it. The cost is that a
process's resident memory does not shrink after a peak (its peak is unchanged). Set
EMBER_KEEP_FREED_MEMORY=0 before importing ember to leave malloc as it is.
"""
import ctypes
import ctypes.util
import os

__all__ = []

_M_TRIM_THRESHOLD = -1   # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest accepted value on 64-bit
_TRIM_THRESHOLD = 1 << 30


def _keep_freed_memory():
    if os.environ.get("EMBER_KEEP_FREED_MEMORY", "1") == "0":
        return False
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to tune
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


KEEPS_FREED_MEMORY = _keep_freed_memory()

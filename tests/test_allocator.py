"""ember keeps freed memory in malloc's heaps (see ember/_allocator.py)."""
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

import ember

glibc_only = pytest.mark.skipif(not ember._allocator.KEEPS_FREED_MEMORY,
                                reason="malloc here is not glibc's; nothing is tuned")


def _step():
    """A training step's pattern: several large arrays alive together, then all freed."""
    return [np.ones(2 << 20, np.float32) for _ in range(4)]  # 8 MiB each


@glibc_only
def test_freed_large_arrays_are_reused_without_new_page_faults():
    _step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        _step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    # untuned glibc trims its heap after each step: ~40,000 faults measured for this loop
    assert faults < 2048, f"{faults} page faults for memory that malloc could have reused"


def test_the_tuning_can_be_switched_off():
    env = dict(os.environ, EMBER_KEEP_FREED_MEMORY="0")
    out = subprocess.run([sys.executable, "-c", "import ember; "
                          "print(ember._allocator.KEEPS_FREED_MEMORY)"],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

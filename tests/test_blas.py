"""ember's settings for NumPy's OpenBLAS (`ember/_blas.py`): the idle spin and, on AMD Zen 4,
the kernel set. Each runs in a fresh interpreter, because both are made at import."""
import os
import subprocess
import sys

import pytest

from ember import _blas

needs_openblas = pytest.mark.skipif(
    _blas.thread_control is None, reason="NumPy's BLAS is not an OpenBLAS ember can reach")


def _python(code, **env_changes):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_CORETYPE")}
    env.update(env_changes)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


SPIN_PROBE = """
import resource, time
import os
import subprocess
import sys

import numpy as np
import ember
a = np.ones((512, 512), np.float32)
a @ a  # a multi-threaded GEMM; afterwards OpenBLAS's idle workers may spin
usage = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
before = usage()
time.sleep(0.2)
print(round((usage() - before) * 1000))
"""


@needs_openblas
def test_blas_workers_do_not_spin_after_a_gemm():
    """OpenBLAS's default spin holds a core for ~0.1 s after each threaded call (measured:
    ~105 ms of CPU during a 200 ms sleep); ember shortens it."""
    cpu_ms = _python(SPIN_PROBE, OPENBLAS_NUM_THREADS="2")
    assert int(cpu_ms) < 30, f"{cpu_ms} ms of CPU while the program slept"



CORE_PROBE = "import ember; from ember import _blas; print(_blas.corename())"


@needs_openblas
@pytest.mark.skipif(not _blas._is_zen4(), reason="the AVX2 kernels are chosen on AMD Zen 4 only")
def test_zen4_runs_the_avx2_kernels_unless_the_user_chose():
    assert _python(CORE_PROBE) == "Haswell"
    assert _python(CORE_PROBE, OPENBLAS_CORETYPE="SkylakeX") == "SkylakeX"


SWITCH_PROBE = """
import numpy as np
from ember import _blas
a = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
exact = a.astype(np.float64) @ a.T.astype(np.float64)
for core in ("Sandybridge", "NoSuchCore", "Haswell"):
    switched = _blas.select_kernels(_blas._openblas, core)
    error = np.abs(a @ a.T - exact).max()
    print(core, switched, _blas.corename(), error < 1e-3)
"""


@needs_openblas
@pytest.mark.skipif(getattr(_blas._openblas, "gotoblas_SANDYBRIDGE", None) is None,
                    reason="this OpenBLAS was built without a choice of kernels")
def test_select_kernels_switches_or_keeps_the_current_set_and_gemm_stays_right():
    lines = _python(SWITCH_PROBE).splitlines()
    assert lines[0] == "Sandybridge True Sandybridge True"
    assert lines[1] == "NoSuchCore False Sandybridge True"  # unknown: nothing changes
    assert lines[2].split()[1:] == ["True", "Haswell", "True"]

"""NumPy's OpenBLAS, reached through ctypes: its thread count, and two settings for the whole
process that ember makes when it is imported, because they measured faster.

NumPy exposes none of this. Each piece is found by symbol name in the OpenBLAS library that
NumPy ships (numpy.libs); where a symbol is missing -- another BLAS, another build -- that
piece is skipped and nothing else changes. A setting the user made in the environment
(OPENBLAS_THREAD_TIMEOUT, OPENBLAS_CORETYPE) is always left as it is.

- `thread_control`: (get, set) for OpenBLAS's thread count, or None. ember.set_num_threads
  and the thread pool (`_parallel.py`) use it.
- Idle spin: after each threaded call OpenBLAS's workers spin for 2^28 cycles (~0.1 s)
  before they sleep, holding a core that ember's own workers need: a convolution right after
  a GEMM measured 1.7-2x slower. ember shortens the spin to 2^20 cycles (~0.3 ms), which
  still covers the gap between an LSTM's per-step GEMMs; 2^16 measured ~15% slower there.
- Kernels on AMD Zen 4: OpenBLAS picks its AVX-512 ("SkylakeX") kernels for Zen 4, whose
  AVX-512 units are 256 bits wide. Its AVX2 ("Haswell") kernels measured faster on every
  float32 GEMM shape of the benchmarks: 1.03-1.09x on large ones, 1.2-1.5x on the small-batch
  GEMMs of an LSTM step and on a ResNet's first-stage convolutions
  (`bench/blas_kernels.py` measures it on any machine).
"""
import ctypes
import glob
import os

import numpy

__all__ = ["thread_control"]


def _numpy_openblas():
    """The OpenBLAS library that NumPy ships with (a ctypes handle), or None."""
    libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*.so*")):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


def _symbol(lib, name, restype=None):
    """`name` in NumPy's OpenBLAS under any of the prefixes and suffixes its builds use."""
    for candidate in (f"scipy_{name}64_", f"{name}64_", name):
        fn = getattr(lib, candidate, None)
        if fn is not None:
            fn.restype = restype
            return fn
    return None


def _thread_control(lib):
    get = _symbol(lib, "openblas_get_num_threads", ctypes.c_int)
    set_ = _symbol(lib, "openblas_set_num_threads")
    if get is None or set_ is None:
        return None
    set_.argtypes = [ctypes.c_int]
    return get, set_


def corename():
    """The name of the kernel set OpenBLAS runs ("Haswell", "SkylakeX", ...), or None."""
    fn = _symbol(_openblas, "openblas_get_corename", ctypes.c_char_p) if _openblas else None
    return fn().decode() if fn is not None else None


def _is_zen4():
    """AMD CPU family 19h with AVX-512 (Zen 3, the same family, has no AVX-512)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:  # the first processor's block is enough
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        return False
    return fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "25" \
        and "avx512f" in fields.get("flags", "").split()


def select_kernels(lib, coretype):
    """Make OpenBLAS run `coretype`'s kernels, as OPENBLAS_CORETYPE would have at start-up;
    where that fails, the kernels stay as they were. Returns whether it switched. Only safe
    while no BLAS call is running (as during ember's import)."""
    quit_ = getattr(lib, "gotoblas_dynamic_quit", None)
    init = getattr(lib, "gotoblas_dynamic_init", None)
    before = corename()  # also how the switch is checked
    if quit_ is None or init is None or before is None or \
            getattr(lib, f"gotoblas_{coretype.upper()}", None) is None:
        return False
    _init_kernels(quit_, init, coretype)
    if corename() == coretype:
        return True
    _init_kernels(quit_, init, before)
    return False


def _init_kernels(quit_, init, coretype):
    saved = os.environ.get("OPENBLAS_CORETYPE")
    os.environ["OPENBLAS_CORETYPE"] = coretype
    try:
        quit_()
        init()  # reads OPENBLAS_CORETYPE and points OpenBLAS at that kernel table
    finally:
        if saved is None:
            del os.environ["OPENBLAS_CORETYPE"]
        else:
            os.environ["OPENBLAS_CORETYPE"] = saved


_SPIN_LOG2_CYCLES = "20"


def _shorten_spin(lib):
    read_env = getattr(lib, "openblas_read_env", None)
    restart = getattr(lib, "blas_thread_shutdown_", None)
    if read_env is None or restart is None or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = _SPIN_LOG2_CYCLES
    try:
        read_env()
    finally:
        del os.environ["OPENBLAS_THREAD_TIMEOUT"]
    restart()  # the workers start again, with the new spin length, at the next BLAS call


_openblas = _numpy_openblas()
thread_control = _thread_control(_openblas) if _openblas is not None else None
openblas_choice = corename()  # the kernel set running before ember chose (OpenBLAS's own)
if thread_control is not None:
    if "OPENBLAS_CORETYPE" not in os.environ and _is_zen4():
        select_kernels(_openblas, "Haswell")
    _shorten_spin(_openblas)

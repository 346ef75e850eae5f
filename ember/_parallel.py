"""Sharing a kernel's independent pieces across cores.

NumPy's elementwise and copy loops run on one core, but they release the GIL, so Python
threads can run pieces of the same kernel side by side (a convolution's batch chunks, say).
BLAS is threaded itself: while our workers run, OpenBLAS is set to one thread (and set back
afterwards), so the two levels of threading do not fight over the cores. Where that switch
cannot be found (another BLAS), work stays serial.

`ember.set_num_threads` / `ember.get_num_threads` are torch's API for the thread count.
"""
import ctypes
import glob
import os
from concurrent.futures import ThreadPoolExecutor

__all__ = ["get_num_threads", "set_num_threads", "parallel_map"]


def _default_threads():
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


def _blas_thread_control():
    """(get, set) for the thread count of the OpenBLAS that NumPy ships with, or None."""
    import numpy

    libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*.so*")):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", ""), ("openblas", "64_")):
            get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                get.restype = ctypes.c_int
                set_.argtypes = [ctypes.c_int]
                return get, set_
    return None


_threads = _default_threads()
_blas = _blas_thread_control()
_pool = None


def get_num_threads():
    return _threads


def set_num_threads(n):
    """The number of threads ember's kernels, BLAS included, may use (torch.set_num_threads)."""
    global _threads, _pool
    if int(n) < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads = int(n)
    if _blas is not None:
        _blas[1](_threads)
    if _pool is not None:
        _pool.shutdown(wait=False)
        _pool = None


def parallel_map(fn, items):
    """[fn(item) for item in items], run on up to get_num_threads() threads when that helps."""
    global _pool
    if _threads == 1 or len(items) < 2 or _blas is None:
        return [fn(item) for item in items]
    if _pool is None:
        _pool = ThreadPoolExecutor(_threads, thread_name_prefix="ember")
    get_blas, set_blas = _blas
    blas_threads = get_blas()
    set_blas(1)  # each worker's GEMMs stay on its own core
    try:
        return list(_pool.map(fn, items))
    finally:
        set_blas(blas_threads)


"""Sharing a kernel's independent pieces across cores.

NumPy's elementwise and copy loops run on one core, but they release the GIL, so Python
threads can run pieces of the same kernel side by side (a convolution's batch chunks, say).
BLAS is threaded itself; inside our worker threads it is told to stay on one thread
(OpenBLAS's `openblas_set_num_threads_local`), so the two levels of threading do not fight
over the cores. Where that switch is not available (another BLAS), work stays serial.

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


def _local_blas_threads():
    """OpenBLAS's per-thread thread-count setter, from the library NumPy ships with."""
    import numpy

    libs = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*.so*")):
        try:
            setter = getattr(ctypes.CDLL(path), "openblas_set_num_threads_local")
        except (OSError, AttributeError):
            continue
        setter.argtypes = [ctypes.c_int]
        setter.restype = ctypes.c_int
        return setter
    return None


_threads = _default_threads()
_set_local = _local_blas_threads()
_pool = None


def get_num_threads():
    return _threads


def set_num_threads(n):
    """The number of threads ember's kernels may use (torch.set_num_threads)."""
    global _threads, _pool
    if int(n) < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads = int(n)
    if _pool is not None:
        _pool.shutdown(wait=False)
        _pool = None


def _worker_start():
    _set_local(1)


def parallel_map(fn, items):
    """[fn(item) for item in items], run on up to get_num_threads() threads when that helps."""
    global _pool
    if _threads == 1 or len(items) < 2 or _set_local is None:
        return [fn(item) for item in items]
    if _pool is None:
        _pool = ThreadPoolExecutor(_threads, thread_name_prefix="ember",
                                   initializer=_worker_start)
    return list(_pool.map(fn, items))

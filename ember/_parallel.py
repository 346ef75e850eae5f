"""Sharing a kernel's independent pieces across cores.

NumPy's elementwise and copy loops run on one core, but they release the GIL, so Python
threads can run pieces of the same kernel side by side (a convolution's batch chunks, say).
BLAS is threaded itself: while our workers run, OpenBLAS is set to one thread (and set back
afterwards), so the two levels of threading do not fight over the cores. Where that switch
cannot be found (another BLAS), work stays serial. OpenBLAS's controls are in `_blas.py`.

Three ways in: `parallel_map` runs a list of independent pieces (conv.py's batch chunks);
`by_rows` runs a row-wise kernel (gelu's ~20 passes, softmax, layer norm) in one row block per
thread, each writing into results the caller allocated (and, for a kernel of many passes,
walking its block in cache-sized pieces); `row_split` (max pooling) does the
same for a kernel that allocates its own results. Pieces must be large: handing work to a
thread costs tens of microseconds, so a kernel of a single pass (relu) gains nothing, and
neither do many small blocks per thread.

`ember.set_num_threads` / `ember.get_num_threads` are torch's API for the thread count.
"""
import contextlib
import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy
from numpy import ndarray as _ndarray

from ._blas import thread_control

__all__ = ["get_num_threads", "set_num_threads", "parallel_map", "blocks", "row_split",
           "by_rows", "one_blas_thread"]


def _default_threads():
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


_blas = thread_control  # (get, set) for OpenBLAS's thread count, or None
_threads = _default_threads()
_pool = None


def get_num_threads():
    """The number of threads ember's CPU work may use: `set_num_threads`'s value, else
    OMP_NUM_THREADS, else the number of CPUs."""
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
    """[fn(item) for item in items], run on up to get_num_threads() threads when that helps.

    Every thread, the calling one included, takes the next item as soon as it is free: a
    thread that started late or ran slow (the cores are shared) then takes fewer. Dealt out
    in fixed runs instead, one run per thread, ResNet's convolution chunks spent 11-18% of
    their time with one thread idle, waiting for the other to finish its run. (Handing each
    item to the pool as a future of its own costs ~0.1 ms an item, which for 32 chunks of
    ~1 ms was a quarter of their time; taking from a shared list costs a lock.) A pool thread
    that has not woken up by the time the caller took the last item is cancelled, not waited
    for: an empty region cost 53 us when the caller waited for that thread, 11 us now.
    Called from inside a parallel region (a nested one) it runs serially, so that no thread
    waits on work queued behind itself."""
    global _pool
    items = list(items)
    if _threads == 1 or len(items) < 2 or _blas is None or _in_worker.active:
        return [fn(item) for item in items]
    if _pool is None:
        _pool = ThreadPoolExecutor(_threads - 1, thread_name_prefix="ember",
                                   initializer=_mark_worker)
    results = [None] * len(items)
    take = _Indices(len(items))

    def work():
        i = take()
        while i is not None:
            results[i] = fn(items[i])
            i = take()
    _blas_to_one_thread()
    try:
        others = [_pool.submit(work) for _ in range(min(_threads, len(items)) - 1)]
        try:
            _in_worker.active = True
            work()
        finally:
            _in_worker.active = False
            # every worker finishes before BLAS gets its threads back; one that has not
            # started yet (its thread not woken) is cancelled: all items are done
            started = [future for future in others if not future.cancel()]
            for future in started:
                future.exception()
        for future in started:
            future.result()  # a worker's exception is raised here
        return results
    finally:
        _blas_restore()


class _Indices:
    """The indices 0..count-1, handed out once each, in order, to whichever thread asks."""

    __slots__ = ("_next", "_count", "_lock")

    def __init__(self, count):
        self._next = 0
        self._count = count
        self._lock = threading.Lock()

    def __call__(self):
        with self._lock:
            i = self._next
            if i >= self._count:
                return None
            self._next = i + 1
            return i


def _after_fork_in_child():
    """A forked child (a DataLoader worker) has none of the parent's threads: start afresh."""
    global _pool, _regions, _regions_lock
    _pool = None
    _regions = 0
    _regions_lock = threading.Lock()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _WorkerFlag(threading.local):
    active = False  # True in the pool's own threads


_in_worker = _WorkerFlag()


def _mark_worker():
    _in_worker.active = True
    # kernels make inf and nan silently, as torch's do (the calling thread reruns a kernel
    # that warned; these threads, ember's own, need not warn at all)
    numpy.seterr(all="ignore")


# While any parallel region runs (several user threads may start one each), OpenBLAS stays
# on one thread per caller, so that each worker's GEMMs keep to their own core; the last
# region to end gives it back its thread count.
_regions = 0
_regions_lock = threading.Lock()
_blas_threads_before = 1


def _blas_to_one_thread():
    global _regions, _blas_threads_before
    with _regions_lock:
        if _regions == 0:
            _blas_threads_before = _blas[0]()
            _blas[1](1)
        _regions += 1


def _blas_restore():
    global _regions
    with _regions_lock:
        _regions -= 1
        if _regions == 0:
            _blas[1](_blas_threads_before)


@contextlib.contextmanager
def one_blas_thread():
    """OpenBLAS on one thread inside the block (the other core works for someone else)."""
    _blas_to_one_thread()
    try:
        yield
    finally:
        _blas_restore()


# row_split gives each thread at least this many elements (measured: gelu on 2M float32
# elements 6-8 ms on one thread, ~4 ms on two).
SPLIT_ELEMENTS = 1 << 17
# Kernels of one or two cheap passes (relu and its backward, eval-mode batch norm) are worth
# splitting only from this many elements: below it the region's hand-over costs about what
# it saves (measurements beside each kernel).
SPLIT_CHEAP_ELEMENTS = 1 << 20
# `by_rows(in_cache=True)` walks a block in pieces of this many elements: 1 MiB of float32 per
# array, so that a kernel's inputs, results and temporaries stay in a core's 2 MiB L2 cache
# from one pass to the next.
CACHE_ELEMENTS = 1 << 18


def row_split(rows_independent=None):
    """Decorator for a kernel(xp, *arrays, **attrs) whose results (an array or a tuple) are
    computed row by row: row i of every result (dim 0) depends only on row i of the inputs
    that share the first input's number of dims -- always, or where
    `rows_independent(first, **attrs)` says so (softmax: when its dim is not 0).

    Large NumPy inputs are then cut along dim 0, one block per thread, and each block's results
    written into the full results. Inputs with as many dims as the first are cut alike; inputs
    with fewer dims (a layer norm's weight, which broadcasts), and None, go to every block
    whole. Attributes are passed unchanged, so they must not describe the whole batch."""
    def decorate(kernel):
        @functools.wraps(kernel)
        def run(xp, *arrays, **attrs):
            first = arrays[0]
            if not _worth_splitting(first, arrays) or \
                    (rows_independent is not None and not rows_independent(first, **attrs)):
                return kernel(xp, *arrays, **attrs)
            return _run_in_row_blocks(kernel, xp, arrays, attrs)
        return run
    return decorate


def by_rows(kernel, xp, outs, *arrays, split=True, in_cache=False, **attrs):
    """Run `kernel(xp, outs, *arrays, **attrs)`, which writes its results into the arrays
    `outs` (row i of each from row i of the inputs along dim 0), and return `outs`. Large
    NumPy inputs are cut into one row block per thread (`blocks`); an input with
    as many dims as the first and as many rows is cut alike, any other (a broadcast weight
    or mask, None) goes to every block whole. `split=False`: rows are not independent.
    `in_cache=True`, for a kernel of many passes over its rows: each block is walked in
    pieces of at most CACHE_ELEMENTS elements, so that every pass after the first finds its
    rows in the core's cache (`cache_pieces`).

    Unlike `row_split`, the results are allocated by the calling thread and the
    blocks write into them with `out=`: results that a pool thread allocated stay in its own
    malloc arena, which the main thread's allocations cannot reuse once they are freed (GPT
    training at 2 threads peaked 48-56 MiB higher with row_split's blocks than with none)."""
    first = arrays[0]
    size = first.size if type(first) is _ndarray and split and first.ndim else 0
    in_cache = in_cache and size > CACHE_ELEMENTS
    # below two threads' worth no slices are made (a softmax of 16 elements ~4k instructions)
    parts = blocks(first.shape[0], first) if size >= 2 * SPLIT_ELEMENTS or in_cache else ()
    if len(parts) <= 1 and not in_cache:  # one block, as it is
        kernel(xp, outs, *arrays, **attrs)
        return outs
    rows_total = first.shape[0]

    def block(rows):
        for piece in cache_pieces(rows, first) if in_cache else (rows,):
            kernel(xp, tuple(o[piece] for o in outs),
                   *(a[piece] if a is not None and a.ndim == first.ndim and
                     a.shape[0] == rows_total else a for a in arrays), **attrs)
    parallel_map(block, parts)
    return outs


def cache_pieces(rows, array):
    """The slice `rows` of `array`'s dim 0 as consecutive slices of at most CACHE_ELEMENTS
    elements each (one row at least)."""
    step = max(1, CACHE_ELEMENTS * array.shape[0] // max(array.size, 1))
    return [slice(lo, min(lo + step, rows.stop)) for lo in range(rows.start, rows.stop, step)]


def _worth_splitting(first, arrays):
    if _threads < 2 or _blas is None or type(first) is not _ndarray or first.ndim == 0 \
            or first.size < 2 * SPLIT_ELEMENTS or first.shape[0] < 2:
        return False
    return all(a is None or a.ndim < first.ndim or
               (a.ndim == first.ndim and a.shape[0] == first.shape[0]) for a in arrays[1:])


def blocks(count, array):
    """Slices of range(count) -- an array's rows or channels -- one per thread when `array`
    is a NumPy array large enough to share out (SPLIT_ELEMENTS a thread at least), else one."""
    size = array.size if type(array) is _ndarray else 0
    return even_slices(count, max(1, min(_threads, count, size // SPLIT_ELEMENTS)))


def even_slices(count, n):
    """range(count) as n slices whose lengths differ by at most one."""
    bounds = [count * k // n for k in range(n + 1)]
    return [slice(lo, hi) for lo, hi in zip(bounds, bounds[1:])]


def _run_in_row_blocks(kernel, xp, arrays, attrs):
    first = arrays[0]
    rows_total = first.shape[0]
    results = []  # the full results, allocated by the first block to finish
    single = []   # whether the kernel returns one array rather than a tuple
    lock = threading.Lock()

    def block(rows):
        pieces = (a[rows] if a is not None and a.ndim == first.ndim else a for a in arrays)
        result = kernel(xp, *pieces, **attrs)
        parts = result if type(result) is tuple else (result,)
        with lock:
            if not results:
                single.append(type(result) is not tuple)
                results.extend(xp.empty((rows_total,) + p.shape[1:], dtype=p.dtype)
                               for p in parts)
        for full, part in zip(results, parts):
            full[rows] = part
    parallel_map(block, blocks(rows_total, first))
    return results[0] if single[0] else tuple(results)


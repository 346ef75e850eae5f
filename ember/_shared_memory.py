"""NumPy arrays in memory that a helper process maps too (`_helper.py`).

A helper process runs part of a kernel on the second core; it must read and write the same
arrays, not copies. Their memory comes from anonymous shared files (Linux `memfd_create`),
one per allocation, which both processes map.

Freed allocations are kept and handed out again, as a caching allocator does: a fresh file
costs each process a page fault and a zeroed page per 4 KiB on first touch (writing 10 MB
into a fresh one took 8 ms here, into a reused one 0.7 ms), while a reused one is already
mapped on both sides.

    array = shared.empty((50, 32, 1024), numpy.float32)   # an ordinary ndarray
    where(array)  -> (segment id, byte offset) for the helper, or None for private memory

An allocation lives as long as any array built on it: its owner object (`_Block`) is at
the end of their `.base` chains, and the owner's collection returns the segment to the pool.

Tensors shared between processes (`Tensor.share_memory_()`, tensors sent through an
`ember.multiprocessing` queue) get segments of their own, outside the pool: another process
may map them for as long as it likes, so they are never handed out again. `share(array)`
copies an array into a fresh one, `attach(fd, size)` maps one received from another process,
and `shared_segment(array)` says which one an array lies in (the helper never sees these).
"""
import itertools
import mmap
import os
import threading
import weakref

import numpy as np

__all__ = ["available", "empty", "where", "tell_all", "take_news", "share", "attach",
           "shared_segment"]

available = hasattr(os, "memfd_create")

_KEEP_FREE_BYTES = 256 << 20  # freed segments kept for reuse, in all; beyond, unmapped
_MIN_SIZE = 1 << 16


class _Segment:
    """One shared file and this process's mapping of it."""
    __slots__ = ("id", "fd", "size", "map", "bytes", "address", "__weakref__")

    def __init__(self, id_, size, fd=None):
        self.id = id_
        self.size = size
        if fd is None:
            fd = os.memfd_create(f"ember-{id_}", os.MFD_CLOEXEC)
            os.ftruncate(fd, size)
        self.fd = fd
        self.map = mmap.mmap(self.fd, size)
        self.bytes = np.frombuffer(self.map, np.uint8)
        self.address = self.bytes.ctypes.data

    def close(self):
        self.bytes = None
        self.map.close()
        os.close(self.fd)


class _Block:
    """The owner of one allocation: NumPy keeps it as the `.base` of every array on it."""
    __slots__ = ("__array_interface__", "segment", "__weakref__")

    def __init__(self, segment, shape, dtype):
        self.segment = segment
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "version": 3,
                                    "data": (segment.address, False)}


class _Pool:
    def __init__(self):
        self.lock = threading.Lock()
        self.free = {}      # size -> [segment, ...]
        self.free_bytes = 0
        self.count = 0
        self.live = weakref.WeakValueDictionary()  # id -> every segment not yet closed
        self.news = []      # ("map" | "unmap", segment) not yet told to the helper

    def take(self, size):
        with self.lock:
            kept = self.free.get(size)
            if kept:
                self.free_bytes -= size
                return kept.pop()
            self.count += 1
            segment = _Segment(self.count, size)
            self.live[segment.id] = segment
            self.news.append(("map", segment))
            return segment

    def give_back(self, segment):
        with self.lock:
            if self.free_bytes + segment.size > _KEEP_FREE_BYTES:
                self.news.append(("unmap", segment))
                self.live.pop(segment.id, None)
                segment.close()
                return
            self.free.setdefault(segment.size, []).append(segment)
            self.free_bytes += segment.size


_pool = _Pool()


def empty(shape, dtype):
    """An uninitialised C-contiguous ndarray in shared memory."""
    dtype = np.dtype(dtype)
    shape = tuple(int(s) for s in shape)
    nbytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
    size = max(_MIN_SIZE, 1 << max(0, nbytes - 1).bit_length())  # powers of two reuse well
    segment = _pool.take(size)
    block = _Block(segment, shape, dtype)
    weakref.finalize(block, _pool.give_back, segment).atexit = False
    return np.asarray(block)


def where(array):
    """(segment id, byte offset) of an ndarray that lies in shared memory, else None."""
    block = array.base
    while type(block) is np.ndarray:  # a view of a view: NumPy keeps the chain
        block = block.base
    if type(block) is not _Block:
        return None
    segment = block.segment
    return segment.id, array.__array_interface__["data"][0] - segment.address


def tell_all():
    """Make the next news map every segment there is: a new helper knows none of them."""
    with _pool.lock:
        _pool.news = [("map", segment) for segment in _pool.live.values()]


def take_news():
    """What the helper must learn since the last call: ("map", id, size, fd) for each new
    segment, the fd a duplicate for the caller to close, and ("unmap", id) for each dropped
    one. A segment made and dropped in between is left out."""
    with _pool.lock:
        news, _pool.news = _pool.news, []
        both = {s.id for kind, s in news if kind == "map"} & \
            {s.id for kind, s in news if kind == "unmap"}
        return [("map", s.id, s.size, os.dup(s.fd)) if kind == "map" else ("unmap", s.id)
                for kind, s in news if s.id not in both]


class _SharedBlock(_Block):
    """The owner of a segment shared with other processes (never pooled, never the helper's:
    `where` does not know this type)."""
    __slots__ = ()


def _own(segment, shape, dtype):
    block = _SharedBlock(segment, shape, dtype)
    weakref.finalize(block, segment.close).atexit = False
    return np.asarray(block)


def share(array):
    """A copy of `array` (same shape and dtype, C order) in a new segment of its own."""
    nbytes = max(array.nbytes, 1)
    segment = _Segment(f"shared-{os.getpid()}-{next(_shared_ids)}", nbytes)
    copy = _own(segment, array.shape, array.dtype)
    copy[...] = array
    return copy


def attach(fd, size, shape, dtype, offset=0, strides=None):
    """An array on the segment another process sent as file descriptor `fd` (now owned here:
    it is closed with the segment)."""
    segment = _Segment(f"attached-{os.getpid()}-{next(_shared_ids)}", size, fd)
    whole = _own(segment, (size,), np.dtype(np.uint8))
    return np.ndarray(shape, dtype, buffer=whole, offset=offset, strides=strides)


def shared_segment(array):
    """(segment, byte offset) of an array in a segment shared between processes, else None."""
    block = array.base
    while isinstance(block, np.ndarray):
        block = block.base
    if type(block) is not _SharedBlock:
        return None
    return block.segment, array.__array_interface__["data"][0] - block.segment.address


_shared_ids = itertools.count()


def _after_fork_in_child():
    """A forked child shares the parent's free segments: it must never hand them out."""
    global _pool
    _pool = _Pool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

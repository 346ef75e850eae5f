"""The NCCL engine behind the 'nccl' backend: collectives on CUDA arrays, via CuPy's NCCL.

    engine = NCCLEngine(rank, size, bootstrap, timeout)

NCCL queues each collective on the current CUDA stream; the Work returned waits for a CUDA
event recorded after it. The communicator's unique id travels from rank 0 to the others over
MPI (`bootstrap`, the group's MPI engine), the one thing NCCL itself cannot do; a world of
one rank needs no MPI. Without CuPy or a GPU, creating the engine raises a RuntimeError that
says so.

What this engine offers: all_reduce, reduce, broadcast, all_gather, reduce_scatter,
send/recv, barrier and the object collectives (pickles moved as uint8 arrays). gather,
scatter and all_to_all of tensors raise NotImplementedError. Bitwise reductions do not
exist in NCCL (torch raises too). This file has not run on a GPU in ember's tests, which run
where there is none; it is kept short so that it can be read in full.

Read next: `distributed_c10d.py`.
"""
import pickle
import time

import numpy as np

from .. import _backend
from ._types import DistBackendError, ReduceOp
from ._work import Work, seconds

__all__ = ["NCCLEngine"]

# NCCL's own numbering (nccl.h: ncclDataType_t, ncclRedOp_t)
_TYPES = {np.dtype(np.int8): 0, np.dtype(np.uint8): 1, np.dtype(np.bool_): 1,
          np.dtype(np.int32): 2, np.dtype(np.int64): 4, np.dtype(np.float16): 6,
          np.dtype(np.float32): 7, np.dtype(np.float64): 8}
_UINT8 = 1
_OPS = {ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MAX: 2, ReduceOp.MIN: 3,
        ReduceOp.AVG: 4}
_BOOL_OPS = {ReduceOp.SUM: 2, ReduceOp.PRODUCT: 3, ReduceOp.MAX: 2, ReduceOp.MIN: 3}


def _load_cupy():
    """CuPy and its NCCL module; a RuntimeError when either, or a GPU, is missing."""
    try:
        cupy = _backend.cupy()
        from cupy.cuda import nccl
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # no CuPy, no NCCL in it, no driver: all "not available"
        raise RuntimeError(f"the 'nccl' backend needs CuPy with NCCL and a CUDA GPU, which "
                           f"are not available here ({error}); use backend='gloo' for CPU "
                           "tensors, or pip install 'ember[cuda12]'") from error
    if count == 0:
        raise RuntimeError("the 'nccl' backend needs a CUDA GPU, and none is visible; use "
                           "backend='gloo' for CPU tensors")
    return cupy, nccl


class _StreamWork(Work):
    """A collective queued on a CUDA stream: complete when the event recorded after it is."""

    def __init__(self, event, what, timeout, outputs, after=None):
        super().__init__(None, what, timeout, outputs)
        self._event = event
        self._after = after  # host-side step once the GPU is done (AVG of a bool, objects)

    def wait(self, timeout=None):
        """Block the host until the GPU has finished the collective."""
        deadline = time.monotonic() + (seconds(timeout) or self._timeout)
        while not self._event.done:
            if time.monotonic() > deadline:
                raise DistBackendError(f"{self._what} timed out: a rank taking part did not "
                                       "join it")
            time.sleep(1e-4)
        if self._after is not None:
            self._value, self._after = self._after(), None
        self._done.set()
        return True

    def is_completed(self):
        """Whether the GPU has finished the collective."""
        return self._event.done

    def _value_after_wait(self):
        self.wait()
        return self._value


class NCCLEngine:
    """The collectives of one process group on an NCCL communicator (one GPU per rank)."""

    def __init__(self, rank, size, bootstrap, timeout):
        self.cupy, self.nccl = _load_cupy()
        self.rank, self.size, self.timeout = rank, size, timeout
        uid = self.nccl.get_unique_id() if rank == 0 else None
        if size > 1:
            uid = bootstrap.broadcast_object(uid, 0, "nccl unique id")._value_after_wait()
        self.comm = self.nccl.NcclCommunicator(size, uid, rank)

    def _launch(self, call, what, writes=(), outputs=(), after=None):
        """Queue the NCCL call and then the copies `writes` on the current stream."""
        stream = self.cupy.cuda.get_current_stream()
        call(stream.ptr)
        for destination, source in writes:
            destination[...] = source
        event = self.cupy.cuda.Event()
        event.record(stream)
        return _StreamWork(event, what, self.timeout, outputs, after)

    def _type(self, array, what):
        if array.dtype not in _TYPES:
            raise RuntimeError(f"{what}: NCCL has no type for {array.dtype}")
        return _TYPES[array.dtype]

    def _op(self, op, array):
        table = _BOOL_OPS if array.dtype == np.bool_ else _OPS
        if op not in table:
            raise ValueError(f"Cannot use {op} with NCCL")
        return table[op]

    def all_reduce(self, array, op, what, writes=(), outputs=()):
        """As MPIEngine.all_reduce (the other methods too, on the GPU)."""
        t, o, n = self._type(array, what), self._op(op, array), array.size
        return self._launch(lambda s: self.comm.allReduce(array.data.ptr, array.data.ptr, n, t,
                                                          o, s), what, writes, outputs)

    def reduce(self, array, root, op, what, writes=(), outputs=()):
        """The reduction into the root's array."""
        t, o, n = self._type(array, what), self._op(op, array), array.size
        return self._launch(lambda s: self.comm.reduce(array.data.ptr, array.data.ptr, n, t, o,
                                                       root, s), what, writes, outputs)

    def reduce_scatter(self, out, flat, op, what, writes=(), outputs=()):
        """Rank r's `out`: the reduction of block r of `flat`."""
        t, o, n = self._type(out, what), self._op(op, out), out.size
        return self._launch(lambda s: self.comm.reduceScatter(flat.data.ptr, out.data.ptr, n,
                                                              t, o, s), what, writes, outputs)

    def broadcast(self, array, root, what, writes=(), outputs=(), after=None):
        """The root's bytes into every rank's array."""
        return self._launch(lambda s: self.comm.bcast(array.data.ptr, array.nbytes, _UINT8,
                                                      root, s), what, writes, outputs, after)

    def all_gather(self, flat, array, what, writes=(), outputs=()):
        """Every rank's array, in rank order, into `flat`."""
        return self._launch(lambda s: self.comm.allGather(array.data.ptr, flat.data.ptr,
                                                          array.nbytes, _UINT8, s), what,
                            writes, outputs)

    def send(self, array, peer, tag, what):
        """Send to `peer` (NCCL has no tags: `tag` is not used)."""
        return self._launch(lambda s: self.comm.send(array.data.ptr, array.nbytes, _UINT8,
                                                     peer, s), what)

    def recv(self, array, peer, tag, what, outputs=()):
        """Receive from `peer` (which NCCL needs to know)."""
        if peer is None:
            raise RuntimeError("NCCL cannot receive from any source: give recv a src")
        return self._launch(lambda s: self.comm.recv(array.data.ptr, array.nbytes, _UINT8,
                                                     peer, s), what, (), outputs)

    def barrier(self, what):
        """An all-reduce of one number, as torch's NCCL barrier."""
        return self.all_reduce(self.cupy.zeros(1, np.float32), ReduceOp.SUM, what)

    def gather(self, *args, **kwargs):
        """Not implemented (nor scatter, all_to_all): NotImplementedError."""
        raise NotImplementedError("gather is not implemented on ember's NCCL backend")

    scatter = all_to_all = gather

    # Python objects: pickles, padded to the longest, moved as uint8 GPU arrays -----------

    def all_gather_object(self, obj, what):
        """Pickles' sizes, then the pickles padded to the longest, all-gathered."""
        data = self.cupy.asarray(np.frombuffer(pickle.dumps(obj), np.uint8))
        sizes = self.cupy.zeros(self.size, np.int64)
        self.all_gather(sizes, self.cupy.asarray([data.size]), what).wait()
        longest = int(sizes.max())
        padded = self.cupy.zeros(longest, np.uint8)
        padded[:data.size] = data
        flat = self.cupy.zeros(longest * self.size, np.uint8)
        blocks = self.all_gather(flat, padded, what)
        blocks.wait()
        host, counts = flat.get().reshape(self.size, longest), sizes.get()
        blocks._value = [pickle.loads(host[r, :counts[r]].tobytes()) for r in range(self.size)]
        return blocks

    def broadcast_object(self, obj, root, what):
        """The pickle's size, then the pickle, broadcast."""
        data = pickle.dumps(obj) if self.rank == root else b""
        size = self.cupy.asarray([len(data)], np.int64)
        self.broadcast(size, root, what).wait()
        buf = self.cupy.zeros(int(size.get()[0]), np.uint8)
        if self.rank == root:
            buf[:] = self.cupy.asarray(np.frombuffer(data, np.uint8))
        return self.broadcast(buf, root, what,
                              after=lambda: pickle.loads(buf.get().tobytes()))

    def gather_object(self, obj, root, what):
        """all_gather_object, kept on the root."""
        work = self.all_gather_object(obj, what)
        work._value = work._value if self.rank == root else None
        return work

    def scatter_object(self, objs, root, what):
        """The root's list broadcast; each rank keeps its item."""
        work = self.broadcast_object(objs, root, what)
        work.wait()
        work._value = work._value[self.rank]
        return work

    def free(self):
        """Destroy the NCCL communicator."""
        self.comm.destroy()

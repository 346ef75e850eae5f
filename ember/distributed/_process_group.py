"""`ProcessGroup`: some ranks of the job and the engines that connect them.

    world = ProcessGroup(range(size), rank, "gloo", comm, timeout)   # init_process_group
    engine = world.engine(tensor.device.type, "all_reduce")  # an MPIEngine for CPU tensors

A group holds an MPI communicator of its own (a duplicate of MPI_COMM_WORLD, or a split of
it for `new_group`), so ember's messages never mix with a program's own mpi4py traffic. Its
backend name says which engines it has: 'gloo' and 'mpi' an MPI engine for CPU tensors,
'nccl' an NCCL engine for CUDA tensors (made on the first CUDA collective: every rank makes
its first one at the same point of the program), 'cpu:gloo,cuda:nccl' (or no backend) both.

Read next: `distributed_c10d.py`.
"""
import itertools

from . import _mpi
from ._types import Backend

__all__ = ["ProcessGroup"]

_names = itertools.count()  # group names, "0" for the world, as torch numbers them


def parse_backend(backend):
    """(the name get_backend reports, {device type: engine kind}) of a backend argument."""
    if backend is None:
        return Backend.UNDEFINED, {"cpu": "mpi", "cuda": "nccl"}  # torch reports "undefined"
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string, got {type(backend).__name__}")
    name = str.lower(backend)
    engines = {}
    for part in name.split(","):
        device, _, kind = part.rpartition(":")
        if kind not in ("gloo", "mpi", "nccl"):
            raise ValueError(f"Unknown backend type {kind!r}: ember has 'gloo' and 'mpi' (MPI, "
                             "for CPU tensors) and 'nccl' (NCCL, for CUDA tensors)")
        for device_type in [device] if device else Backend.backend_type_map[kind]:
            engines[device_type] = "nccl" if kind == "nccl" else "mpi"
    return Backend(name), engines


class ProcessGroup:
    """torch.distributed.ProcessGroup: `rank()` and `size()` in the group, `name()` (the
    backend's). Collectives reach the engine for their tensors' device type."""

    def __init__(self, ranks, rank, backend, comm, timeout, group_name=None):
        self._ranks = list(ranks)           # global rank of each group rank
        self._rank = rank                   # this process's rank in the group
        self._backend_arg = backend         # as given (None: the default backends)
        self._backend, self._kinds = parse_backend(backend)
        self._comm = comm                   # MPI communicator, or None (one NCCL rank)
        self._timeout = timeout             # seconds
        self._engines = {}
        self._sequence = 0                  # collectives so far (TORCH_DISTRIBUTED_DEBUG)
        self.group_name = str(next(_names)) if group_name in (None, "") else group_name

    def rank(self):
        """This process's rank in the group."""
        return self._rank

    def size(self):
        """The number of ranks in the group."""
        return len(self._ranks)

    def name(self):
        """The backend's name ('gloo', 'mpi', 'nccl'); 'gloo' for the default backend, as
        torch's default group says on a CPU."""
        return "gloo" if self._backend == Backend.UNDEFINED else str(self._backend)

    def engine(self, device_type, what):
        """The engine for tensors on `device_type`; RuntimeError where the backend has none."""
        engine = self._engines.get(device_type)
        if engine is None:
            kind = self._kinds.get(device_type)
            if kind is None:
                raise RuntimeError(f"{what}: No backend type associated with device type "
                                   f"{device_type} (the group's backend is "
                                   f"'{self._backend}')")
            engine = self._engines[device_type] = self._make_engine(kind)
        return engine

    def object_engine(self):
        """The engine that moves pickled objects: MPI's, or NCCL's in an NCCL-only group."""
        return self.engine("cpu" if "cpu" in self._kinds else "cuda", "object collective")

    def _make_engine(self, kind):
        if kind == "mpi":
            return _mpi.MPIEngine(self._comm, self._timeout)
        from ._nccl import NCCLEngine

        bootstrap = _mpi.MPIEngine(self._comm, self._timeout) if self._comm else None
        return NCCLEngine(self._rank, self.size(), bootstrap, self._timeout)

    def _destroy(self):
        for engine in self._engines.values():
            if not isinstance(engine, _mpi.MPIEngine):
                engine.free()
        if self._comm is not None:
            _mpi.MPIEngine(self._comm, self._timeout).free()
        self._engines.clear()
        self._comm = None

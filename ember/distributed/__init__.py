"""ember.distributed: torch.distributed on MPI (CPU tensors) and NCCL (CUDA tensors).

    python -m ember.distributed.run --nproc-per-node 2 train.py   # as torchrun
    mpiexec -n 2 python train.py                                   # or plain MPI

    import ember.distributed as dist
    dist.init_process_group("gloo")
    dist.all_reduce(t)                   # t summed over the ranks, in place

Engines only, no transport of ember's own: 'gloo' and 'mpi' run on MPI through mpi4py (the
extra `ember[distributed]`), 'nccl' on NCCL through CuPy. docs/DISTRIBUTED.md says how to
launch on one host or several.

Reading order: _types.py (ReduceOp, Backend, errors), _work.py (the worker thread and Work),
_mpi.py and _nccl.py (the engines), _process_group.py, distributed_c10d.py (the API), then
optim/ (ZeroRedundancyOptimizer), run.py and _bootstrap.py (the launcher), and
ember/nn/parallel/distributed.py (DistributedDataParallel).
"""
from . import constants  # noqa: F401
from ._types import (  # noqa: F401
    Backend,
    DistBackendError,
    DistError,
    DistNetworkError,
    DistStoreError,
    ReduceOp,
)
from ._work import Work  # noqa: F401
from .constants import default_pg_timeout  # noqa: F401
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import is_mpi_available, is_nccl_available

reduce_op = ReduceOp  # torch's deprecated alias


def is_available():
    """Whether a backend's engine is installed: mpi4py (gloo, mpi) or CuPy (nccl)."""
    return is_mpi_available() or is_nccl_available()

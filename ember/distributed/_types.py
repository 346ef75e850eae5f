"""The small value types of torch.distributed: `ReduceOp`, `Backend` and the error classes.

    dist.all_reduce(t, op=dist.ReduceOp.MAX)     # ReduceOp.MAX is ReduceOp.RedOpType.MAX
    dist.get_backend() == dist.Backend.GLOO      # a Backend is a lower-case str

Torch defines these in C++ (`c10d::ReduceOp`, `DistBackendError`); here they are plain
Python with the same names, values, reprs and comparisons.

Read next: `_work.py` (the thread that makes every MPI call, and the Work handle).
"""
import enum

__all__ = ["ReduceOp", "Backend", "DistError", "DistBackendError", "DistNetworkError",
           "DistStoreError"]


class ReduceOp:
    """How a reduction combines the ranks' values. `ReduceOp.SUM` and friends are
    `ReduceOp.RedOpType` members, which every collective accepts, as is a `ReduceOp(...)`
    instance wrapping one."""

    class RedOpType(enum.Enum):
        """The reduction kinds, with torch's numbering (`<RedOpType.SUM: 0>`)."""

        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __int__(self):
            return self.value

        __index__ = __int__

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM

    def __init__(self, op=RedOpType.SUM):
        self.op = _as_red_op_type(op)

    def __eq__(self, other):
        if isinstance(other, ReduceOp):
            return self.op is other.op
        return self.op is other

    def __hash__(self):
        return hash(self.op)


def _as_red_op_type(op):
    """The RedOpType of an `op=` argument (a RedOpType or a ReduceOp); TypeError otherwise."""
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, ReduceOp.RedOpType):
        return op
    raise TypeError(f"op must be a torch.distributed.ReduceOp (ReduceOp.SUM, ...), got "
                    f"{op!r} of type {type(op).__name__}")


class Backend(str):
    """A backend name, lower-cased: `Backend("GLOO") == "gloo"`. ember runs 'gloo' and 'mpi'
    on MPI (CPU tensors) and 'nccl' on NCCL through CuPy (CUDA tensors); the name a program
    chose is the one `get_backend` gives back."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}
    backend_type_map = {GLOO: ("cpu",), NCCL: ("cuda",), MPI: ("cpu",)}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got {name!r}")
        return super().__new__(cls, name.lower())


class DistError(RuntimeError):
    """Base class of the errors torch.distributed raises."""


class DistBackendError(DistError):
    """A collective failed or timed out in the backend (MPI or NCCL)."""


class DistNetworkError(DistError):
    """A network error (ember's backends report theirs as DistBackendError)."""


class DistStoreError(DistError):
    """A key-value store error (ember has no stores: ranks come from MPI)."""

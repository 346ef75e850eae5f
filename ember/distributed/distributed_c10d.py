"""torch.distributed's functions: the process groups and the collectives, on ember tensors.

    dist.init_process_group("gloo")          # rank and world size from torchrun's variables
    dist.all_reduce(t, op=dist.ReduceOp.SUM) # or from MPI (mpiexec -n N python script.py)

Each collective checks its arguments as torch does (types, list lengths, sizes, dtypes, root
ranks, membership of the group), hands contiguous arrays to the engine of the group for the
tensors' device (`_process_group.py`), and returns the engine's Work when `async_op=True`,
else waits for it. A result bound for a non-contiguous tensor, or for a list of tensors, is
computed in a contiguous buffer and copied out by the same queued job, so an async result
is in place once `wait()` returns.

Ranks come from MPI. Arguments (`rank=`, `world_size=`) and torchrun's environment
(RANK, WORLD_SIZE) are checked against it, never used to connect anything: init_method is
accepted in torch's forms (env://, tcp://, file://) and not used as a channel.

`TORCH_DISTRIBUTED_DEBUG=DETAIL`, as in torch, makes every collective first compare its
kind, shapes and dtypes across the ranks and raise when they differ; without it a mismatch
is caught where MPI catches it (a message longer than the buffer that receives it).

Read next: `optim/zero_redundancy_optimizer.py`, then `ember/nn/parallel/distributed.py`.
"""
import itertools
import os
import warnings

from .. import _backend
from .._tensor import Tensor
from . import _mpi
from ._process_group import ProcessGroup, parse_backend
from ._types import ReduceOp, _as_red_op_type
from ._work import seconds
from .constants import default_pg_nccl_timeout, default_pg_timeout

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "get_backend", "new_group", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "is_torchelastic_launched", "is_mpi_available",
           "is_gloo_available", "is_nccl_available", "group", "GroupMember", "ProcessGroup",
           "barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
           "scatter", "all_to_all", "all_to_all_single", "send", "recv", "isend", "irecv",
           "P2POp", "batch_isend_irecv", "all_gather_object", "broadcast_object_list",
           "gather_object", "scatter_object_list"]


class _State:
    world = None        # the default ProcessGroup
    groups = []         # every group made since init (destroyed with the world)
    debug = False       # TORCH_DISTRIBUTED_DEBUG=DETAIL


_state = _State()


class _WorldAttribute(type):
    @property
    def WORLD(cls):
        """The default process group (None before init_process_group)."""
        return _state.world


class group(metaclass=_WorldAttribute):
    """`dist.group.WORLD`: the default process group."""


class GroupMember(metaclass=_WorldAttribute):
    """`GroupMember.WORLD` and `GroupMember.NON_GROUP_MEMBER`: what `new_group` returns on a
    rank outside the new group."""

    NON_GROUP_MEMBER = -100


# ----------------------------------------------------------------------------------------------
# availability


def _importable(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def is_mpi_available():
    """Whether mpi4py is installed (the engine of the 'mpi' and 'gloo' backends)."""
    return _importable("mpi4py")


is_gloo_available = is_mpi_available


def is_nccl_available():
    """Whether CuPy (which carries NCCL) is installed; a GPU is checked at init."""
    return _importable("cupy")


def is_torchelastic_launched():
    """Whether the launcher (ember.distributed.run, like torchrun) started this process."""
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


# ----------------------------------------------------------------------------------------------
# the default group


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's default process group. Ranks come from MPI; `rank`/`world_size` (or
    torchrun's RANK/WORLD_SIZE) must agree with it. A `store` or `pg_options` raise
    NotImplementedError: ember has neither (its ranks meet through MPI). One NCCL rank needs
    no MPI."""
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None or pg_options is not None:
        raise NotImplementedError("init_process_group: ember takes its ranks from MPI and has "
                                  "no Store or backend options; leave store and pg_options "
                                  "unset")
    name, kinds = parse_backend(backend)
    if backend is not None and "nccl" in kinds.values():
        from ._nccl import _load_cupy

        _load_cupy()  # no CuPy or no GPU: say so now, as torch does without NCCL
    _check_init_method(init_method)
    default = default_pg_nccl_timeout if set(kinds.values()) == {"nccl"} else default_pg_timeout
    limit = seconds(timeout) or default.total_seconds()
    rank, world_size = _asked_rank_and_size(rank, world_size)
    comm = None
    if "cpu" in kinds or (world_size or 1) != 1 or is_mpi_available():
        comm, rank, world_size = _world_communicator(rank, world_size, limit)
    elif rank not in (None, 0):
        raise RuntimeError(f"init_process_group: rank {rank} in a world of one process")
    else:  # one NCCL rank, and no MPI to ask: a world of one
        rank, world_size = 0, 1
    _state.world = ProcessGroup(range(world_size), rank, name, comm, limit, group_name or "0")
    _state.groups = [_state.world]
    _state.debug = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    if device_id is not None and "nccl" in kinds.values():
        from .. import cuda

        cuda.set_device(device_id)  # torch binds the process to this GPU
    if world_size > 1:
        _mpi.abort_on_uncaught_exception()


def _check_init_method(init_method):
    if init_method is None:
        return
    scheme = init_method.split("://", 1)[0] if "://" in init_method else ""
    if scheme not in ("env", "tcp", "file"):
        raise ValueError(f"No rendezvous handler for {scheme or init_method}://")


def _asked_rank_and_size(rank, world_size):
    """rank and world size from the arguments, else torchrun's variables; None if neither."""
    def read(value, variable):
        if value is not None and value >= 0:
            return int(value)
        text = os.environ.get(variable)
        return int(text) if text is not None else None
    return read(rank, "RANK"), read(world_size, "WORLD_SIZE")


def _world_communicator(rank, world_size, limit):
    """A duplicate of MPI_COMM_WORLD, after checking any rank/size asked for against MPI."""
    MPI = _mpi.load()
    world = MPI.COMM_WORLD
    how = f"mpiexec -n {world_size} or python -m ember.distributed.run --nproc-per-node " \
          f"{world_size}"
    if world_size is not None and world_size != world.Get_size():
        raise RuntimeError(f"init_process_group: world_size is {world_size}, but MPI started "
                           f"{world.Get_size()} process(es) in this job. ember's backends take "
                           f"their ranks from MPI: start the processes with {how}")
    if rank is not None and rank != world.Get_rank():
        raise RuntimeError(f"init_process_group: rank is {rank}, but MPI gave this process "
                           f"rank {world.Get_rank()} (ember's backends take their ranks from "
                           "MPI; start the processes with mpiexec or ember.distributed.run)")
    comm = _mpi.worker().call(world.Dup, "init_process_group", limit)
    return comm, world.Get_rank(), world.Get_size()


def destroy_process_group(group=None):
    """Leave `group` (default: the world, and with it every group)."""
    if group is None or group is _state.world:
        if _state.world is None:  # torch's exception type, raised explicitly
            raise AssertionError("Process group cannot be None: destroy_process_group was "
                                 "called before init_process_group")
        for each in reversed(_state.groups):
            each._destroy()
        _state.world, _state.groups = None, []
        _mpi.restore_excepthook()
    elif isinstance(group, ProcessGroup):
        group._destroy()
        _state.groups.remove(group)


def is_initialized():
    """Whether init_process_group has run (and destroy_process_group not since)."""
    return _state.world is not None


def _world():
    if _state.world is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _state.world


def _resolve(group):
    """The ProcessGroup of a `group=` argument (None: the world); NON_GROUP_MEMBER kept."""
    if group is None:
        return _world()
    if isinstance(group, ProcessGroup) or group == GroupMember.NON_GROUP_MEMBER:
        return group
    raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")


def get_rank(group=None):
    """This process's rank in `group` (-1 outside it)."""
    group = _resolve(group)
    return -1 if group == GroupMember.NON_GROUP_MEMBER else group.rank()


def get_world_size(group=None):
    """The number of ranks in `group` (-1 outside it)."""
    group = _resolve(group)
    return -1 if group == GroupMember.NON_GROUP_MEMBER else group.size()


def get_backend(group=None):
    """The backend name of `group` as init_process_group or new_group was given it."""
    group = _resolve(group)
    if group == GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return group._backend


def get_process_group_ranks(group):
    """The global ranks of `group`'s members, by group rank."""
    return list(_resolve(group)._ranks)


def get_global_rank(group, group_rank):
    """The global rank of `group`'s rank `group_rank`."""
    group = _resolve(group)
    if group is _state.world:
        return group_rank
    if not 0 <= group_rank < group.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {group.group_name}")
    return group._ranks[group_rank]


def get_group_rank(group, global_rank):
    """`global_rank`'s rank within `group`."""
    group = _resolve(group)
    if group is _state.world:
        return global_rank
    if global_rank not in group._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group.group_name}")
    return group._ranks.index(global_rank)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of some of the world's ranks. Every rank calls it (only the members with
    `use_local_synchronization=True`); outside ranks get GroupMember.NON_GROUP_MEMBER."""
    world = _world()
    if pg_options is not None:
        raise NotImplementedError("new_group: ember's backends take no pg_options")
    ranks = list(range(world.size())) if ranks is None else [int(r) for r in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    if len(ranks) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"The new group's rank should be within the world_size set by "
                             f"init_process_group, got rank {r}")
    limit = seconds(timeout) or world._timeout
    comm = _sub_communicator(world, ranks, use_local_synchronization, limit)
    if world.rank() not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    made = ProcessGroup(ranks, ranks.index(world.rank()),
                        world._backend_arg if backend is None else backend, comm, limit)
    _state.groups.append(made)
    return made


def _sub_communicator(world, ranks, local, limit):
    """The members' MPI communicator (None elsewhere, and in a world without MPI)."""
    if world._comm is None:  # one NCCL rank without MPI: the group is the world
        return None
    engine = _mpi.MPIEngine(world._comm, limit)
    if not local:
        comm = engine.split(ranks, limit)
        return comm if world.rank() in ranks else None
    return engine.create_group(ranks, limit) if world.rank() in ranks else None


# ----------------------------------------------------------------------------------------------
# argument checks shared by the collectives

_TORCH_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                     "int32": "Int", "int64": "Long"}


def _tensor(t, name="tensor"):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor but got {type(t)} instead.")
    return t


def _tensors(ts, name):
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor] but got {type(ts)} instead.")
    return list(ts)


def _same_blocks(op, tensors, like, count):
    """`tensors` must be `count` tensors of `like`'s dtype and shape (a list that a
    collective fills, or sends, one block per rank)."""
    if len(tensors) != count:
        raise RuntimeError(f"{op}: invalid tensor list (expected length {count}, got "
                           f"{len(tensors)})")
    for i, t in enumerate(tensors):
        if t._dtype is not like._dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes Found "
                             f"{like._dtype} and {t._dtype}")
        if t.shape != like.shape:
            raise RuntimeError(f"{op}: invalid tensor size at index {i} (expected "
                               f"{tuple(like.shape)}, got {tuple(t.shape)})")


def _reduce_op(op, tensor):
    """The RedOpType of `op`, checked against the tensor's dtype as torch checks it."""
    op = _as_red_op_type(op)
    dtype = tensor._dtype
    if op is ReduceOp.PREMUL_SUM:
        raise NotImplementedError("ReduceOp.PREMUL_SUM needs a factor (torch's "
                                  "_make_nccl_premul_sum), which ember does not have")
    inexact = dtype.is_floating_point or dtype.is_complex
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and inexact:
        raise RuntimeError(f"Cannot use {op} with non-integral dtype")
    if op in (ReduceOp.MIN, ReduceOp.MAX) and dtype.is_complex:
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    if op is ReduceOp.AVG and not inexact:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_TYPE_NAMES[dtype.name]}")
    return op


def _begin(op, group, tensors, fingerprint=None, collective=True):
    """(group, engine, description) for an operation, or None when this process is outside
    `group` (torch warns and does nothing). In debug mode a collective first compares its
    `fingerprint` tensors (default: all) across the ranks."""
    group = _resolve(group)
    if group == GroupMember.NON_GROUP_MEMBER:
        warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the "
                      "given group.")
        return None
    devices = {t._device.type for t in tensors}
    if len(devices) > 1:
        raise RuntimeError(f"{op}: the tensors are on different device types {sorted(devices)}")
    engine = group.engine(devices.pop(), op) if devices else group.object_engine()
    if _state.debug and collective:
        _agree(group, op, tensors if fingerprint is None else fingerprint)
    first = tensors[0] if tensors else None
    detail = f" ({first._dtype.name} {list(first.shape)})" if first is not None else ""
    return group, engine, f"{op}{detail} on rank {group.rank()} of group {group.group_name}"


def _agree(group, op, tensors):
    """TORCH_DISTRIBUTED_DEBUG=DETAIL: every rank must be running the same collective."""
    group._sequence += 1
    mine = (f"CollectiveFingerPrint(SequenceNumber={group._sequence}, OpType={op.upper()}, "
            f"TensorShape={[list(t.shape) for t in tensors]}, "
            f"TensorDtypes={[t._dtype.name for t in tensors]}, "
            f"TensorDeviceTypes={[t._device.type for t in tensors]})")
    everyone = group.object_engine().all_gather_object(mine, f"{op} fingerprint")
    for r, theirs in enumerate(everyone._value_after_wait()):
        if theirs != mine:
            raise RuntimeError(f"Detected mismatch between collectives on ranks. Rank "
                               f"{group.rank()} is running collective: {mine}, but Rank {r} is "
                               f"running collective: {theirs}.")


def _root(op, group, rank, group_rank):
    """The group rank of a collective's root, given as a global or as a group rank."""
    if rank is None and group_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if group_rank is None:
        group_rank = get_group_rank(group, rank)
    if not 0 <= group_rank < group.size():
        raise RuntimeError(f"{op}: invalid root rank: {group_rank if rank is None else rank}")
    return group_rank


def _inplace(t):
    """The array an engine may change in place for `t`, and the copy back into t (for a
    non-contiguous tensor the array is a contiguous copy)."""
    array = t._data
    if array.flags.c_contiguous:
        return array, ()
    buffer = _backend.array_namespace(array).ascontiguousarray(array)
    return buffer, ((array, buffer),)


def _contiguous(t):
    return _backend.array_namespace(t._data).ascontiguousarray(t._data)


def _blocks(tensors, like):
    """A contiguous (len, *shape) buffer for a list of tensors and the copies out of it."""
    flat = _backend.array_namespace(like._data).empty((len(tensors),) + like._data.shape,
                                                      like._data.dtype)
    return flat, tuple((t._data, flat[i]) for i, t in enumerate(tensors))


def _stacked(tensors, like):
    xp = _backend.array_namespace(like._data)
    return xp.stack([t._data for t in tensors]) if tensors else None


def _finish(work, async_op, written=()):
    for t in written:
        t._bump_version()
    if async_op:
        return work
    work.wait()
    return None


# ----------------------------------------------------------------------------------------------
# collectives


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` over the group, in place on every rank."""
    started = _begin("all_reduce", group, [_tensor(tensor)])
    if started is None:
        return None
    group, engine, what = started
    op = _reduce_op(op, tensor)
    array, writes = _inplace(tensor)
    return _finish(engine.all_reduce(array, op, what, writes, [tensor]), async_op, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce `tensor` over the group into the tensor of rank `dst` (the others keep theirs)."""
    started = _begin("reduce", group, [_tensor(tensor)])
    if started is None:
        return None
    group, engine, what = started
    root = _root("reduce", group, dst, group_dst)
    op = _reduce_op(op, tensor)
    array, writes = _inplace(tensor)
    return _finish(engine.reduce(array, root, op, what, writes, [tensor]), async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank `src`'s tensor into every rank's `tensor`."""
    started = _begin("broadcast", group, [_tensor(tensor)])
    if started is None:
        return None
    group, engine, what = started
    root = _root("broadcast", group, src, group_src)
    array, writes = _inplace(tensor)
    return _finish(engine.broadcast(array, root, what, writes, [tensor]), async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's `tensor_list[r]` receives rank r's `tensor`."""
    tensor_list = _tensors(tensor_list, "tensor_list")
    started = _begin("all_gather", group, [_tensor(tensor)] + tensor_list, [tensor])
    if started is None:
        return None
    group, engine, what = started
    _same_blocks("all_gather", tensor_list, tensor, group.size())
    flat, writes = _blocks(tensor_list, tensor)
    work = engine.all_gather(flat, _contiguous(tensor), what, writes, tensor_list)
    return _finish(work, async_op, tensor_list)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """`output_tensor` (world size times input_tensor's elements, e.g. stacked or concatenated
    along dim 0) receives every rank's `input_tensor`, in rank order."""
    started = _begin("all_gather_into_tensor", group,
                     [_tensor(output_tensor, "output_tensor"),
                      _tensor(input_tensor, "input_tensor")], [input_tensor])
    if started is None:
        return None
    group, engine, what = started
    _check_flat("all_gather_into_tensor", output_tensor, input_tensor, group.size())
    flat, writes = _inplace(output_tensor)
    work = engine.all_gather(flat, _contiguous(input_tensor), what, writes, [output_tensor])
    return _finish(work, async_op, [output_tensor])


def _check_flat(op, big, small, size):
    if big._dtype is not small._dtype:
        raise RuntimeError(f"{op}: output and input must have the same dtype, got "
                           f"{big._dtype} and {small._dtype}")
    if big.numel() != size * small.numel():
        raise RuntimeError(f"{op}: the large tensor must have world size ({size}) times as many "
                           f"elements as the other: {tuple(big.shape)} against "
                           f"{tuple(small.shape)}")


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank r's `output` becomes the reduction over the ranks of their `input_list[r]`."""
    input_list = _tensors(input_list, "input_list")
    started = _begin("reduce_scatter", group, [_tensor(output, "output")] + input_list,
                     [output])
    if started is None:
        return None
    group, engine, what = started
    op = _reduce_op(op, output)
    _same_blocks("reduce_scatter", input_list, output, group.size())
    array, writes = _inplace(output)
    work = engine.reduce_scatter(array, _stacked(input_list, output), op, what, writes,
                                 [output])
    return _finish(work, async_op, [output])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """As reduce_scatter, with the blocks of `input` (world size times output's elements)."""
    started = _begin("reduce_scatter_tensor", group,
                     [_tensor(output, "output"), _tensor(input, "input")], [output])
    if started is None:
        return None
    group, engine, what = started
    op = _reduce_op(op, output)
    _check_flat("reduce_scatter_tensor", input, output, group.size())
    array, writes = _inplace(output)
    work = engine.reduce_scatter(array, _contiguous(input), op, what, writes, [output])
    return _finish(work, async_op, [output])


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Rank `dst`'s `gather_list[r]` receives rank r's `tensor`."""
    started = _begin("gather", group, [_tensor(tensor)])
    if started is None:
        return None
    group, engine, what = started
    root = _root("gather", group, dst, group_dst)
    outputs = _root_list("gather_list", gather_list, group.rank() == root, "destination")
    flat, writes = (None, ())
    if group.rank() == root:
        _same_blocks("gather", outputs, tensor, group.size())
        flat, writes = _blocks(outputs, tensor)
    work = engine.gather(_contiguous(tensor), flat, root, what, writes, outputs)
    return _finish(work, async_op, outputs)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank r's `tensor` receives rank `src`'s `scatter_list[r]`."""
    started = _begin("scatter", group, [_tensor(tensor)])
    if started is None:
        return None
    group, engine, what = started
    root = _root("scatter", group, src, group_src)
    inputs = _root_list("scatter_list", scatter_list, group.rank() == root, "source")
    if group.rank() == root:
        _same_blocks("scatter", inputs, tensor, group.size())
    array, writes = _inplace(tensor)
    work = engine.scatter(array, _stacked(inputs, tensor), root, what, writes, [tensor])
    return _finish(work, async_op, [tensor])


def _root_list(name, tensors, at_root, kind):
    """A list argument that only the root gives (gather_list, scatter_list)."""
    if at_root and tensors is None:
        raise ValueError(f"Argument ``{name}`` must be specified on {kind} rank.")
    if not at_root and tensors:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{kind} ranks.")
    return _tensors(tensors, name) if at_root else []


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank r's `input_tensor_list[q]` goes to rank q, into its `output_tensor_list[r]`; the
    tensors may differ in size."""
    outputs = _tensors(output_tensor_list, "output_tensor_list")
    inputs = _tensors(input_tensor_list, "input_tensor_list")
    started = _begin("all_to_all", group, outputs + inputs, [])
    if started is None:
        return None
    group, engine, what = started
    for tensors, name in ((outputs, "output"), (inputs, "input")):
        if len(tensors) != group.size():
            raise RuntimeError(f"all_to_all: the {name} list must have one tensor per rank "
                               f"({group.size()}), got {len(tensors)}")
    for t in outputs + inputs:
        if t._dtype is not inputs[0]._dtype:
            raise ValueError(f"Invalid usage of tensors with different dtypes Found "
                             f"{inputs[0]._dtype} and {t._dtype}")
    xp = _backend.array_namespace(inputs[0]._data)
    flat_in = xp.concatenate([t._data.reshape(-1) for t in inputs])
    out_counts = [t.numel() for t in outputs]
    flat_out = xp.empty(sum(out_counts), flat_in.dtype)
    starts = [0] + list(itertools.accumulate(out_counts))
    writes = tuple((t._data, flat_out[a:b].reshape(t._data.shape))
                   for t, a, b in zip(outputs, starts, starts[1:]))
    work = engine.all_to_all(flat_out, out_counts, flat_in, [t.numel() for t in inputs], what,
                             writes, outputs)
    return _finish(work, async_op, outputs)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """all_to_all on dim-0 slices of one tensor: rank r sends `input_split_sizes[q]` rows to
    rank q and receives `output_split_sizes[q]` rows from it (equal splits by default)."""
    started = _begin("all_to_all_single", group,
                     [_tensor(output, "output"), _tensor(input, "input")], [])
    if started is None:
        return None
    group, engine, what = started
    if output._dtype is not input._dtype:
        raise ValueError(f"Invalid usage of tensors with different dtypes Found {input._dtype} "
                         f"and {output._dtype}")
    in_counts = _split_counts("input", input, input_split_sizes, group.size())
    out_counts = _split_counts("output", output, output_split_sizes, group.size())
    array, writes = _inplace(output)
    work = engine.all_to_all(array, out_counts, _contiguous(input), in_counts, what, writes,
                             [output])
    return _finish(work, async_op, [output])


def _split_counts(name, t, splits, size):
    """Elements per rank of a dim-0 split of `t` (equal when `splits` is None)."""
    rows = t.shape[0] if t.ndim else 1
    per_row = t.numel() // rows if rows else 0
    if splits is None or len(splits) == 0:
        if rows % size:
            raise ValueError(f"all_to_all_single: the {name}'s first dimension ({rows}) does "
                             f"not divide by the world size ({size}); give {name}_split_sizes")
        splits = [rows // size] * size
    splits = [int(s) for s in splits]
    if len(splits) != size or sum(splits) != rows:
        raise ValueError(f"all_to_all_single: {name}_split_sizes {splits} must have one entry "
                         f"per rank ({size}) summing to the first dimension ({rows})")
    return [s * per_row for s in splits]


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached the barrier."""
    started = _begin("barrier", group, [])
    if started is None:
        return None
    group, engine, what = started
    work = engine.barrier(what)
    if async_op:
        return work
    work.wait(timeout)
    return None


# ----------------------------------------------------------------------------------------------
# point to point


def _peer(op, group, rank, group_rank, kind, allow_any=False):
    """The group rank of a send's destination or a receive's source (None: any source)."""
    if allow_any and rank is None and group_rank is None:
        return None
    peer = _root(op, group, rank, group_rank)
    if peer == group.rank():
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    return peer


def _message(op, tensor, group):
    started = _begin(op, group, [_tensor(tensor)], collective=False)
    if started is not None and not tensor._data.flags.c_contiguous:
        raise RuntimeError("input tensor has to be contiguous")
    return started


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending `tensor` to rank `dst`; returns the Work to wait on."""
    started = _message("isend", tensor, group)
    if started is None:
        return None
    group, engine, what = started
    peer = _peer("isend", group, dst, group_dst, "destination")
    return engine.send(tensor._data, peer, int(tag), what)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into `tensor` from rank `src` (any rank if None); returns the Work."""
    started = _message("irecv", tensor, group)
    if started is None:
        return None
    group, engine, what = started
    peer = _peer("irecv", group, src, group_src, "source", allow_any=True)
    work = engine.recv(tensor._data, peer, int(tag), what, [tensor])
    tensor._bump_version()
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst` and wait until it has gone."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (any rank if None); returns the sender's global
    rank (-1 outside the group)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    group = _resolve(group)
    if src is not None:
        return src
    if group_src is not None:
        return get_global_rank(group, group_src)
    return get_global_rank(group, work._source_rank())


class P2POp:
    """One send or receive for `batch_isend_irecv`: `op` is `isend` or `irecv`."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        self.op, self.tensor, self.peer, self.group = op, _tensor(tensor), peer, group
        self.tag, self.group_peer = tag, group_peer


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of the list; returns their Works."""
    if not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


# ----------------------------------------------------------------------------------------------
# Python objects (pickled)


def all_gather_object(object_list, obj, group=None):
    """Every rank's `object_list[r]` becomes rank r's `obj`."""
    started = _begin("all_gather_object", group, [])
    if started is not None:
        group, engine, what = started
        for i, each in enumerate(engine.all_gather_object(obj, what)._value_after_wait()):
            object_list[i] = each


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Every rank's `object_list` becomes rank `src`'s (each rank gives a list of that size)."""
    started = _begin("broadcast_object_list", group, [])
    if started is not None:
        group, engine, what = started
        root = _root("broadcast_object_list", group, src, group_src)
        mine = list(object_list) if group.rank() == root else None
        for i, each in enumerate(engine.broadcast_object(mine, root, what)._value_after_wait()):
            object_list[i] = each


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Rank `dst`'s `object_gather_list[r]` becomes rank r's `obj`."""
    started = _begin("gather_object", group, [])
    if started is not None:
        group, engine, what = started
        root = _root("gather_object", group, dst, group_dst)
        if group.rank() == root and object_gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        if group.rank() != root and object_gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        gathered = engine.gather_object(obj, root, what)._value_after_wait()
        for i, each in enumerate(gathered or ()):
            object_gather_list[i] = each


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    """Rank r's `scatter_object_output_list[0]` becomes rank `src`'s input list's item r."""
    if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    started = _begin("scatter_object_list", group, [])
    if started is not None:
        group, engine, what = started
        root = _root("scatter_object_list", group, src, group_src)
        objs = None
        if group.rank() == root:
            objs = list(scatter_object_input_list or ())
            if len(objs) != group.size():
                raise ValueError(f"scatter_object_list: the input list must have one object "
                                 f"per rank ({group.size()}), got {len(objs)}")
        scatter_object_output_list[0] = engine.scatter_object(objs, root,
                                                              what)._value_after_wait()

"""The multi-rank checks, run as one MPI job by tests/test_distributed_mpi.py:

    mpiexec -n 3 python tests/distributed_checks.py

Every rank runs every check (the collectives against their definitions, for several dtypes
and shapes; DDP, SyncBatchNorm and ZeroRedundancyOptimizer against one process with the
whole batch; DistributedSampler; the error cases). Each rank makes its data from its rank
alone, so it can compute what every collective must give. One job pays MPI's start-up once
for all of them; rank 0 prints one line "RESULTS {json}" mapping each check to None (it
passed on every rank) or to what failed where.
"""
import json
import os
import sys
import traceback
import warnings
from datetime import timedelta

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ember  # noqa: E402
import ember.distributed as dist  # noqa: E402
from ember import nn  # noqa: E402
from ember.distributed.optim import ZeroRedundancyOptimizer  # noqa: E402
from ember.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

CHECKS = []
R = dist.ReduceOp
FLOATS = ("float32", "float64", "float16", "bfloat16")
INTS = ("int64", "int32", "int16", "int8", "uint8")
SHAPES = ((), (5,), (3, 4), (0, 2))


def check(fn):
    CHECKS.append(fn)
    return fn


def rank_array(rank, shape, dtype, salt=0):
    """Rank `rank`'s data: small integers (exact in every dtype), bools for bool."""
    rng = np.random.default_rng(1000 * salt + rank)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("complex"):
        return (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(dtype)
    low = 0 if dtype == "uint8" else -3
    return rng.integers(low, 4, shape).astype(ember_dtype(dtype).np)


def ember_dtype(name):
    return getattr(ember, name)


def tensor(array):
    return ember.from_numpy(np.array(array, copy=True))


def equal(got, expected, what, tol=0.0):
    got = got.float().numpy() if got.dtype in (ember.float16, ember.bfloat16) else got.numpy()
    expected = np.asarray(expected).astype(got.dtype)
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=tol, atol=tol,
                                                      equal_nan=True):
        raise AssertionError(f"{what}: got {got.tolist()}, expected {expected.tolist()}")


def world():
    return dist.get_rank(), dist.get_world_size()


def _reduce(arrays, op, dtype):
    """The definition of each ReduceOp over the ranks' arrays."""
    stack = np.stack([a.astype(np.float64) if dtype in FLOATS else a for a in arrays])
    if dtype == "bool":
        table = {R.SUM: np.any, R.PRODUCT: np.all, R.MIN: np.all, R.MAX: np.any,
                 R.BAND: np.all, R.BOR: np.any, R.BXOR: lambda s, axis: s.sum(axis) % 2 == 1}
        return table[op](stack, axis=0)
    if op in (R.BAND, R.BOR, R.BXOR):
        ufunc = {R.BAND: np.bitwise_and, R.BOR: np.bitwise_or, R.BXOR: np.bitwise_xor}[op]
        return ufunc.reduce(stack, axis=0)
    table = {R.SUM: np.sum, R.AVG: np.mean, R.PRODUCT: np.prod, R.MIN: np.min, R.MAX: np.max}
    return table[op](stack, axis=0).astype(stack.dtype)  # integers wrap as torch's do


def _ops_for(dtype):
    if dtype in FLOATS:
        return (R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX)
    return (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR)


# ----------------------------------------------------------------------------------------------
# collectives against their definitions


@check
def all_reduce_every_op_dtype_and_shape():
    rank, size = world()
    for dtype in FLOATS + INTS + ("bool",):
        for op in _ops_for(dtype):
            for shape in SHAPES:
                arrays = [rank_array(r, shape, dtype) for r in range(size)]
                t = tensor(arrays[rank])
                dist.all_reduce(t, op=op)
                equal(t, _reduce(arrays, op, dtype), f"all_reduce {op} {dtype} {shape}",
                      tol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)


@check
def all_reduce_complex():
    rank, size = world()
    for dtype in ("complex64", "complex128"):
        for op, reduce in ((R.SUM, np.sum), (R.AVG, np.mean), (R.PRODUCT, np.prod)):
            arrays = [rank_array(r, (2, 3), dtype) for r in range(size)]
            t = tensor(arrays[rank])
            dist.all_reduce(t, op=op)
            equal(t, reduce(np.stack(arrays), axis=0), f"all_reduce {op} {dtype}", tol=1e-6)
    expect(ValueError, "complex", dist.all_reduce, tensor(rank_array(rank, (2,), "complex64")),
           op=R.MAX)


@check
def all_reduce_non_contiguous_and_async():
    rank, size = world()
    arrays = [rank_array(r, (4, 3), "float32") for r in range(size)]
    t = tensor(arrays[rank]).t()          # a transposed view: written back in place
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    equal(t, np.sum(arrays, 0).T, "all_reduce of a transposed tensor")
    assert work.result()[0] is t
    base = ember.full((2, 6), float(rank + 1))
    dist.all_reduce(base[:, ::2])  # a strided slice of a larger tensor: the rest stays
    expected = np.full((2, 6), rank + 1.0)
    expected[:, ::2] = size * (size + 1) / 2
    equal(base, expected, "all_reduce of a strided slice")


@check
def broadcast_from_every_rank():
    rank, size = world()
    for src in range(size):
        for dtype in ("float32", "bfloat16", "int64", "bool"):
            for shape in ((), (3, 2)):
                t = tensor(rank_array(rank, shape, dtype, salt=src))
                dist.broadcast(t, src=src)
                equal(t, rank_array(src, shape, dtype, salt=src), f"broadcast {dtype} from {src}")


@check
def reduce_to_every_rank():
    rank, size = world()
    for dst in range(size):
        for op in (R.SUM, R.MAX, R.AVG):
            arrays = [rank_array(r, (2, 3), "float64", salt=dst) for r in range(size)]
            t = tensor(arrays[rank])
            dist.reduce(t, dst=dst, op=op)
            expected = _reduce(arrays, op, "float64") if rank == dst else arrays[rank]
            equal(t, expected, f"reduce {op} to {dst}", tol=1e-12)


@check
def all_gather_lists_and_into_tensor():
    rank, size = world()
    for dtype in ("float32", "float16", "int32", "bool"):
        arrays = [rank_array(r, (2, 3), dtype) for r in range(size)]
        out = [ember.zeros(2, 3, dtype=ember_dtype(dtype)) for _ in range(size)]
        out[0] = out[0].t().contiguous().t()  # one output non-contiguous
        dist.all_gather(out, tensor(arrays[rank]))
        for r in range(size):
            equal(out[r], arrays[r], f"all_gather {dtype} block {r}")
        stacked = ember.zeros(size, 2, 3, dtype=ember_dtype(dtype))
        dist.all_gather_into_tensor(stacked, tensor(arrays[rank]))
        equal(stacked, np.stack(arrays), f"all_gather_into_tensor {dtype} stacked")
        flat = ember.zeros(size * 2, 3, dtype=ember_dtype(dtype))
        dist.all_gather_into_tensor(flat, tensor(arrays[rank]))
        equal(flat, np.concatenate(arrays), f"all_gather_into_tensor {dtype} concatenated")


@check
def reduce_scatter_list_and_tensor():
    rank, size = world()
    for dtype, op in (("float32", R.SUM), ("float64", R.AVG), ("int64", R.MAX),
                      ("bfloat16", R.SUM)):
        blocks = [[rank_array(r, (2, 2), dtype, salt=b) for b in range(size)]
                  for r in range(size)]
        out = ember.zeros(2, 2, dtype=ember_dtype(dtype))
        dist.reduce_scatter(out, [tensor(b) for b in blocks[rank]], op=op)
        expected = _reduce([blocks[r][rank] for r in range(size)], op, dtype)
        equal(out, expected, f"reduce_scatter {dtype} {op}", tol=1e-2)
        out = ember.zeros(2, 2, dtype=ember_dtype(dtype))
        dist.reduce_scatter_tensor(out, tensor(np.concatenate(blocks[rank])), op=op)
        equal(out, expected, f"reduce_scatter_tensor {dtype} {op}", tol=1e-2)


@check
def gather_and_scatter_at_every_root():
    rank, size = world()
    for root in range(size):
        arrays = [rank_array(r, (3,), "int16", salt=root) for r in range(size)]
        gathered = [ember.zeros(3, dtype=ember.int16) for _ in range(size)] if rank == root \
            else None
        dist.gather(tensor(arrays[rank]), gathered, dst=root)
        if rank == root:
            for r in range(size):
                equal(gathered[r], arrays[r], f"gather to {root} block {r}")
        pieces = [tensor(rank_array(r, (2, 2), "float32", salt=root)) for r in range(size)]
        out = ember.zeros(2, 2)
        dist.scatter(out, pieces if rank == root else None, src=root)
        equal(out, rank_array(rank, (2, 2), "float32", salt=root), f"scatter from {root}")


@check
def all_to_all_uneven_and_single():
    rank, size = world()

    def block(src, dst):  # what src sends to dst: src + 1 rows of (src, dst, k)
        return np.array([[src, dst, k] for k in range(src + 1)], np.float32)
    outputs = [ember.zeros(src + 1, 3) for src in range(size)]
    dist.all_to_all(outputs, [tensor(block(rank, dst)) for dst in range(size)])
    for src in range(size):
        equal(outputs[src], block(src, rank), f"all_to_all from {src}")
    rows = np.arange(size * 2 * 2, dtype=np.int64).reshape(size * 2, 2) + 100 * rank
    out = ember.zeros(size * 2, 2, dtype=ember.int64)
    dist.all_to_all_single(out, tensor(rows))
    expected = np.concatenate([np.arange(size * 4).reshape(size * 2, 2)[2 * rank:2 * rank + 2]
                               + 100 * src for src in range(size)])
    equal(out, expected, "all_to_all_single, equal splits")
    send = [dst + 1 for dst in range(size)]        # rank sends dst + 1 rows to dst
    receive = [rank + 1] * size                    # and gets rank + 1 rows from each
    data = np.concatenate([np.full((n, 1), 10 * rank + dst) for dst, n in enumerate(send)])
    out = ember.zeros(sum(receive), 1, dtype=ember.int64)
    dist.all_to_all_single(out, tensor(data), receive, send)
    expected = np.concatenate([np.full((rank + 1, 1), 10 * src + rank) for src in range(size)])
    equal(out, expected, "all_to_all_single, uneven splits")


@check
def point_to_point_ring():
    rank, size = world()
    right, left = (rank + 1) % size, (rank - 1) % size
    got = ember.zeros(4)
    works = [dist.isend(tensor(rank_array(rank, (4,), "float32")), right, tag=7),
             dist.irecv(got, left, tag=7)]
    for w in works:
        w.wait()
        assert w.is_completed()
    equal(got, rank_array(left, (4,), "float32"), "isend/irecv ring")
    from_right = ember.zeros(2, dtype=ember.int32)
    ops = [dist.P2POp(dist.isend, tensor(np.full(2, rank, np.int32)), left),
           dist.P2POp(dist.irecv, from_right, right)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    equal(from_right, np.full(2, right), "batch_isend_irecv")
    if rank == 1:
        dist.send(tensor(np.arange(3, dtype=np.float32)), dst=0)
    elif rank == 0:
        into = ember.zeros(3)
        assert dist.recv(into) == 1  # from any rank: the sender's rank comes back
        equal(into, np.arange(3.0), "recv from any source")


@check
def object_collectives():
    rank, size = world()
    everyone = [None] * size
    dist.all_gather_object(everyone, {"rank": rank, "t": ember.full((2,), float(rank))})
    assert [o["rank"] for o in everyone] == list(range(size))
    equal(everyone[size - 1]["t"], np.full(2, size - 1.0), "all_gather_object tensor")
    objects = ["a", {"b": 1}, (rank, 2)] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(objects, src=1)
    assert objects == ["a", {"b": 1}, (1, 2)], objects
    gathered = [None] * size if rank == 0 else None
    dist.gather_object(rank * 10, gathered, dst=0)
    assert rank != 0 or gathered == [10 * r for r in range(size)], gathered
    out = [None]
    dist.scatter_object_list(out, [f"to {r}" for r in range(size)] if rank == 0 else None, src=0)
    assert out == [f"to {rank}"], out


@check
def groups():
    rank, size = world()
    pair = dist.new_group([0, 1])
    if rank in (0, 1):
        assert dist.get_rank(pair) == rank and dist.get_world_size(pair) == 2
        t = ember.tensor([float(rank + 1)])
        dist.all_reduce(t, group=pair)
        equal(t, [3.0], "all_reduce in a group of two")
        assert dist.get_process_group_ranks(pair) == [0, 1]
    else:
        assert pair == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(pair) == -1
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert dist.all_reduce(ember.ones(1), group=pair) is None
        assert "does not belong to the given group" in str(seen[0].message)
    last = dist.new_group([size - 1, 0])  # sorted: group rank 0 is global rank 0
    if rank in (0, size - 1):
        t = ember.tensor([float(rank)])
        dist.broadcast(t, src=size - 1, group=last)
        equal(t, [float(size - 1)], "broadcast from a global rank inside a group")
        assert dist.get_global_rank(last, 1) == size - 1
    dist.barrier()
    assert dist.get_backend() == "gloo" and dist.group.WORLD.size() == size


@check
def errors_as_torch_raises_them():
    rank, size = world()
    expect(RuntimeError, "can't be cast", dist.all_reduce, ember.ones(2, dtype=ember.int64),
           op=R.AVG)
    expect(RuntimeError, "non-integral", dist.all_reduce, ember.ones(2), op=R.BAND)
    expect(TypeError, "torch.Tensor", dist.all_reduce, [1, 2])
    expect(TypeError, "ReduceOp", dist.all_reduce, ember.ones(2), op="sum")
    expect(RuntimeError, "invalid tensor list", dist.all_gather,
           [ember.zeros(2)] * (size + 1), ember.ones(2))
    expect(RuntimeError, "invalid tensor size", dist.all_gather,
           [ember.zeros(3)] * size, ember.ones(2))
    expect(RuntimeError, "invalid root rank", dist.broadcast, ember.ones(1), src=size)
    expect(ValueError, "Must specify", dist.broadcast, ember.ones(1))
    expect(ValueError, "should not be the same", dist.send, ember.ones(1), dst=rank)
    expect(RuntimeError, "contiguous", dist.send, ember.ones(3, 3).t(), dst=(rank + 1) % size)
    expect(ValueError, "twice", dist.init_process_group, "gloo")


def expect(kind, text, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except kind as error:
        if text not in str(error):
            raise AssertionError(f"{fn.__name__}: {kind.__name__} without {text!r}: {error}")
        return
    raise AssertionError(f"{fn.__name__}{args}: no {kind.__name__}")


@check
def mismatched_collectives_are_reported_in_debug_mode():
    from ember.distributed import distributed_c10d

    rank, _ = world()
    distributed_c10d._state.debug = True  # what TORCH_DISTRIBUTED_DEBUG=DETAIL sets at init
    try:
        expect(RuntimeError, "Detected mismatch between collectives", dist.all_reduce,
               ember.ones(2 + (rank == 1)))
    finally:
        distributed_c10d._state.debug = False


# ----------------------------------------------------------------------------------------------
# training: DDP, SyncBatchNorm, ZeroRedundancyOptimizer against one process with the batch


class _WithSpare(nn.Module):
    """A model with a parameter that forward never uses."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.spare = nn.Linear(3, 3)

    def forward(self, x):
        return self.net(x)


def _mlp(unused=False):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 4))
    return _WithSpare(model) if unused else model


def _batches(steps=5, batch=12, features=6, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((steps, batch, features)).astype(np.float32)
    y = rng.integers(0, 4, (steps, batch))
    return ember.from_numpy(x), ember.from_numpy(y)


def _shard(t):
    rank, size = world()
    per = t.shape[0] // size
    return t[rank * per:(rank + 1) * per]


def _train(model, optimizer, x, y, micro=1, ddp=None):
    """5 steps; each splits its (per-rank) batch into `micro` accumulated backwards, the
    first micro - 1 of them under no_sync when `ddp` is given."""
    for step in range(x.shape[0]):
        optimizer.zero_grad()
        xs, ys = x[step].chunk(micro), y[step].chunk(micro)
        for k, (xb, yb) in enumerate(zip(xs, ys)):
            quiet = ddp is not None and k < micro - 1
            with ddp.no_sync() if quiet else _nothing():
                (nn.functional.cross_entropy(model(xb), yb) / micro).backward()
        optimizer.step()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _same_parameters(a, b, what, tol=1e-5):
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        if not np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=tol, atol=tol):
            worst = float((p - q).abs().max())
            raise AssertionError(f"{what}: parameter {name} differs by {worst}")


def _ddp_against_one_process(micro=1, unused=False, **ddp_options):
    x, y = _batches(batch=12 * micro)
    reference = _mlp(unused)
    _train(reference, ember.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9), x, y,
           micro)
    model = DDP(_mlp(unused), **ddp_options)
    _train(model, ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
           ember.stack([_shard(b) for b in x]), ember.stack([_shard(b) for b in y]), micro,
           model)
    _same_parameters(reference, model.module, f"DDP {ddp_options} micro={micro}")
    return model


@check
def ddp_equals_one_process_with_the_whole_batch():
    model = _ddp_against_one_process()
    assert list(model.state_dict()) == ["module." + k for k in _mlp().state_dict()]
    assert len(model.reducer.buckets) == 1  # 5 small parameters: one bucket


@check
def ddp_with_several_buckets_and_bucket_views():
    model = _ddp_against_one_process(bucket_cap_mb=0.0005, gradient_as_bucket_view=True)
    assert len(model.reducer.buckets) == 3  # [b3 w3] [b2 w2] [b1 w1]: 528 bytes, then more
    p = next(model.module.parameters())
    bucket, position = model.reducer.slot[id(p)]
    assert p.grad is bucket.views[position]  # the gradient is the bucket's memory


@check
def ddp_no_sync_accumulation():
    _ddp_against_one_process(micro=3)


@check
def ddp_with_an_unused_parameter():
    model = _ddp_against_one_process(unused=True, find_unused_parameters=True)
    assert model.module.spare.weight.grad is None  # unused on every rank: left alone


class _SpareOnRankZero(nn.Module):
    """Uses its `spare` layer only on rank 0: a parameter used on some ranks only."""

    def __init__(self):
        super().__init__()
        ember.manual_seed(0)
        self.net, self.spare = nn.Linear(4, 2), nn.Linear(4, 1)

    def forward(self, x, use_spare):
        out = self.net(x).sum()
        return out + self.spare(x).sum() if use_spare else out


@check
def ddp_with_a_parameter_used_on_one_rank_only():
    rank, size = world()
    x0 = ember.from_numpy(rank_array(0, (3, 4), "float32"))
    local = _SpareOnRankZero()
    local(x0, True).backward()            # rank 0's own gradient of the spare layer
    model = DDP(_SpareOnRankZero(), find_unused_parameters=True)
    x = ember.from_numpy(rank_array(rank, (3, 4), "float32"))
    model(x, rank == 0).backward()
    equal(model.module.spare.weight.grad, local.spare.weight.grad.numpy() / size,
          "gradient of a parameter used on rank 0 only", tol=1e-6)


@check
def ddp_without_find_unused_parameters_raises_at_next_forward():
    model = DDP(_mlp(unused=True))
    x, y = _batches(steps=1)
    nn.functional.cross_entropy(model(_shard(x[0])), _shard(y[0])).backward()
    expect(RuntimeError, "Expected to have finished reduction", model, _shard(x[0]))


@check
def ddp_broadcasts_rank_0_parameters_and_buffers():
    rank, _ = world()
    ember.manual_seed(rank)  # a different model on each rank ...
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    model[1].running_mean.fill_(float(rank))
    wrapped = DDP(model)     # ... rank 0's everywhere after construction
    ember.manual_seed(0)
    expected = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    _same_parameters(expected, wrapped.module, "parameters after construction", tol=0)
    equal(model[1].running_mean, np.zeros(3), "buffers after construction")
    model[1].running_mean.fill_(float(rank) + 5)
    with ember.no_grad():
        wrapped(ember.ones(2, 3))  # forward broadcasts the buffers from rank 0 first
        batch_mean = expected[0](ember.ones(1, 3))[0].numpy()
    equal(model[1].running_mean, 0.9 * 5.0 + 0.1 * batch_mean, "buffers synced in forward",
          tol=1e-6)


@check
def sync_batchnorm_equals_batchnorm_over_the_whole_batch():
    rank, size = world()
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4 * size, 3, 5)).astype(np.float32)
    g = rng.standard_normal((4 * size, 3, 5)).astype(np.float32)
    plain = nn.BatchNorm1d(3)
    xa = ember.from_numpy(x).requires_grad_()
    expected = plain(xa)
    (expected * ember.from_numpy(g)).sum().backward()
    synced = nn.SyncBatchNorm(3)
    xs = _shard(ember.from_numpy(x)).clone().requires_grad_()
    out = synced(xs)
    (out * _shard(ember.from_numpy(g))).sum().backward()
    equal(out.detach(), _shard(expected.detach()).numpy(), "forward", tol=1e-5)
    equal(xs.grad, _shard(xa.grad).numpy(), "input gradient", tol=1e-5)
    for name in ("running_mean", "running_var"):
        equal(getattr(synced, name), getattr(plain, name).numpy(), name, tol=1e-6)
    summed = synced.weight.grad.clone()
    dist.all_reduce(summed)  # each rank's weight gradient is its share of the whole sum
    equal(summed, plain.weight.grad.numpy(), "weight gradient summed over ranks", tol=1e-5)


@check
def ddp_with_sync_batchnorm_trains_as_one_process():
    def model():
        ember.manual_seed(0)  # no bias before the norm: its gradient is pure rounding noise
        return nn.Sequential(nn.Linear(6, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(),
                             nn.Linear(16, 4))
    x, y = _batches()
    reference = model()
    _train(reference, ember.optim.SGD(reference.parameters(), lr=0.1), x, y)
    wrapped = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(model()))
    _train(wrapped, ember.optim.SGD(wrapped.parameters(), lr=0.1),
           ember.stack([_shard(b) for b in x]), ember.stack([_shard(b) for b in y]))
    _same_parameters(reference, wrapped.module, "DDP + SyncBatchNorm")
    equal(wrapped.module[1].running_var, reference[1].running_var.numpy(), "running_var",
          tol=1e-5)


@check
def zero_redundancy_optimizer_equals_the_plain_optimizer():
    rank, size = world()
    x, y = _batches()
    reference = _mlp()
    plain = ember.optim.Adam(reference.parameters(), lr=0.01)
    _train(reference, plain, x, y)
    model = DDP(_mlp())
    zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=ember.optim.Adam,
                                   lr=0.01)
    _train(model, zero, ember.stack([_shard(b) for b in x]),
           ember.stack([_shard(b) for b in y]))
    _same_parameters(reference, model.module, "ZeroRedundancyOptimizer(Adam)")
    owned = sum(1 for group in zero.optim.param_groups for _ in group["params"])
    assert owned < len(list(reference.parameters())) or size == 1
    zero.consolidate_state_dict(to=0)
    if rank == 0:
        state, expected = zero.state_dict(), plain.state_dict()
        assert sorted(state["state"]) == sorted(expected["state"])
        for index, entry in expected["state"].items():
            for key, value in entry.items():
                equal(state["state"][index][key], value.numpy(), f"state {index} {key}",
                      tol=1e-5)
        fresh = ember.optim.Adam(_mlp().parameters(), lr=0.01)
        fresh.load_state_dict(state)  # the consolidated state loads into the plain optimizer


@check
def distributed_sampler_reads_the_group_and_partitions():
    rank, size = world()
    from ember.utils.data import DistributedSampler

    sampler = DistributedSampler(range(23), shuffle=True, seed=4)
    assert (sampler.num_replicas, sampler.rank) == (size, rank)
    sampler.set_epoch(2)
    everyone = [None] * size
    dist.all_gather_object(everyone, list(sampler))
    flat = [i for share in everyone for i in share]
    assert set(flat) == set(range(23)) and len(flat) == size * len(sampler)


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    rank, size = world()
    results = {}
    for fn in CHECKS:
        try:
            fn()
            results[fn.__name__] = None
        except Exception:
            results[fn.__name__] = f"rank {rank}: {traceback.format_exc()}"
    everyone = [None] * size if rank == 0 else None
    dist.gather_object(results, everyone, dst=0)
    if rank == 0:
        merged = {name: "\n".join(r[name] for r in everyone if r[name]) or None
                  for name in results}
        print("RESULTS " + json.dumps(merged), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

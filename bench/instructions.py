"""Instructions per op of the tiny-op loop, counted by callgrind, in ember and in torch.

    python bench/instructions.py                  # forward, backward, no_grad; 1000 iterations
    python bench/instructions.py --modes forward --iterations 500

The loop is the issue's `c = (a * b + a).sum()` on 16-element tensors that require grad (three
ops an iteration), with `.backward()` in "backward" and under `no_grad` in "no_grad". Each run
starts Python under `valgrind --tool=callgrind --instr-atstart=no`; the child warms up, collects
garbage, switches counting on with `callgrind_control` around the loop only, and the count less
that of a run with no iterations is divided by the ops run. Instruction counts do not move with
the machine's load, so they decide which micro-optimisations pay (wall-clock ratios then
confirm). Needs valgrind; one thread, and ember's helper process off.
"""
import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import gc, importlib, os, subprocess, sys
m = importlib.import_module(sys.argv[1])
mode, n = sys.argv[2], int(sys.argv[3])
a = m.randn(16, requires_grad=True)
b = m.randn(16, requires_grad=True)
if mode == "no_grad":
    m.set_grad_enabled(False)

def step():
    c = (a * b + a).sum()
    if mode == "backward":
        c.backward()

for _ in range(300):
    step()
gc.collect()
switch = ["callgrind_control", "-i"]
subprocess.run(switch + ["on", str(os.getpid())], capture_output=True)
for _ in range(n):
    step()
subprocess.run(switch + ["off", str(os.getpid())], capture_output=True)
"""
OPS_PER_ITERATION = 3


def count(library, mode, iterations):
    """Instructions callgrind counted in the loop of `iterations` steps."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   EMBER_HELPER_PROCESS="0")
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                        f"--callgrind-out-file={out}", sys.executable, "-c", CHILD, library,
                        mode, str(iterations)], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            totals = [line for line in f if line.startswith("totals:")]
    return int(totals[0].split()[1])


def per_op(library, mode, iterations):
    """Thousands of instructions per op: (loop - empty loop) / ops."""
    spent = count(library, mode, iterations) - count(library, mode, 0)
    return spent / (iterations * OPS_PER_ITERATION) / 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default="forward,backward,no_grad")
    parser.add_argument("--iterations", type=int, default=1000)
    args = parser.parse_args()
    print(f"{'tiny loop':10s} {'ember':>8s} {'torch':>8s} {'ratio':>6s}   (k instructions/op)")
    for mode in args.modes.split(","):
        ours, theirs = (per_op(lib, mode, args.iterations) for lib in ("ember", "torch"))
        print(f"{mode:10s} {ours:8.1f} {theirs:8.1f} {ours / theirs:6.2f}")


if __name__ == "__main__":
    main()

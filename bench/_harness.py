"""Shared timing harness: run a workload in ember and in torch, alternating, and print ratios.

Each workload is a function `make(lib) -> step` that builds its inputs with the given library
(ember or torch) and returns a zero-argument `step` to time. Runs alternate between the two
libraries (A B A B ...) after a warm-up, so drift in machine speed hits both equally, each block
after a pause in which the other library's worker threads go idle (`settle`); we report
medians and the ember/torch ratio of medians.
"""
import json
import os
import statistics
import time

import ember

try:
    import torch
except ImportError:
    torch = None


def set_threads(n):
    """Fix torch's threads, and BLAS's where threadpoolctl is installed. NumPy's OpenBLAS reads
    OPENBLAS_NUM_THREADS once, at import: scripts set it before importing NumPy (run.py does
    so by starting a fresh process per thread count)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)
    if torch is not None:
        torch.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(n)
    except ImportError:
        pass


# torch's OpenMP worker threads keep spinning, a core busy, for ~10 ms after its last op
# (measured: process CPU time during a sleep right after an mlp step); ember's OpenBLAS
# workers for ~0.3 ms. A block of one library that starts at once after the other's would
# share the cores with those spinning threads for its first step.
SETTLE_SECONDS = 0.05


def settle():
    """Wait until the other library's idle worker threads have stopped spinning."""
    time.sleep(SETTLE_SECONDS)


def time_step(step, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return times


def warm_up(step, count=2, seconds=1.0, patience=30.0):
    """Run `step` at least `count` times and for at least `seconds`: long enough for lazy
    start-up work in either library. ember starts its helper process on a large LSTM's first
    step, which takes ~0.5 s on a quiet machine and longer on a busy one: while it is starting,
    keep warming up (for at most `patience` seconds), so that what is timed is the steady
    state."""
    start = time.perf_counter()
    done = 0
    while done < count or time.perf_counter() - start < seconds or (
            _helper_starting() and time.perf_counter() - start < patience):
        step()
        done += 1


def _helper_starting():
    """Whether ember's helper process was started and has not reported in yet."""
    from ember import _helper

    helper = _helper._helper
    return helper is not None and not _helper._retired and not helper.is_up()


def compare(name, make, repeats=20, warmup=3, rounds=3):
    """Median seconds per step for ember and torch, alternating `rounds` times."""
    libs = [("ember", ember)] + ([("torch", torch)] if torch is not None else [])
    steps = {label: make(lib) for label, lib in libs}
    for label, _ in libs:
        time_step(steps[label], warmup)
    samples = {label: [] for label, _ in libs}
    for _ in range(rounds):
        for label, _ in libs:
            settle()
            samples[label] += time_step(steps[label], repeats)
    result = {"workload": name}
    for label, _ in libs:
        result[label] = statistics.median(samples[label])
    if torch is not None:
        result["ratio"] = result["ember"] / result["torch"]
    return result


def report(results, unit="ms", scale=1e3, path=None):
    width = max(len(r["workload"]) for r in results)
    print(f"{'workload':<{width}}  {'ember':>10}  {'torch':>10}  {'ember/torch':>11}")
    for r in results:
        torch_time = f"{r['torch'] * scale:10.2f}" if "torch" in r else f"{'-':>10}"
        ratio = f"{r['ratio']:11.2f}" if "ratio" in r else f"{'-':>11}"
        print(f"{r['workload']:<{width}}  {r['ember'] * scale:10.2f}  {torch_time}  {ratio}"
              f"   ({unit})")
    if path:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(results, f, indent=2)

"""Where a workload's step goes, in ember and in PyTorch side by side: each library's own
profiler on the same workload of `bench/workloads.py`, its ops ranked by self CPU time.

    python bench/op_profile.py gpt --threads 2
    python bench/op_profile.py resnet_inference --threads 1 --steps 5 --rows 12

Each row is an op's self time (its own work, without the ops it called) in ms per step, its
calls per step, and its share of the profiled time. The libraries name their ops differently
(`ember::gelu` and `aten::gelu`, ember's fused `layer_norm_backward` and torch's
`native_layer_norm_backward`), so the two tables are printed one after the other. Profiling
adds a little time to every op in both, so compare the shares and the ranking between the
libraries, and take the ratio of whole steps from `bench/run.py`. (Not named profile.py: run
as a script, that would shadow the standard library's `profile`, which torch imports.)
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _profile_ember(ember, step, steps):
    from ember.profiler import profile

    with profile() as prof:
        for _ in range(steps):
            step()
    return prof.key_averages()


def _profile_torch(torch, step, steps):
    with torch.profiler.profile() as prof:
        for _ in range(steps):
            step()
    return prof.key_averages()


def top_ops(averages, steps, rows):
    """(name, self ms per step, calls per step, share of all self time) of the `rows` ops
    with the most self time; the profilers report microseconds."""
    ranked = sorted(averages, key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in ranked) or 1.0
    return [(e.key, e.self_cpu_time_total / 1e3 / steps, e.count / steps,
             e.self_cpu_time_total / total) for e in ranked[:rows]]


def _print(label, ops):
    print(f"\n{label}\n{'op':<56}{'ms/step':>10}{'calls':>8}{'share':>8}")
    for name, ms, calls, share in ops:
        print(f"{name[:55]:<56}{ms:10.2f}{calls:8.1f}{share:8.1%}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", help="a name from bench/workloads.py")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--steps", type=int, default=10, help="profiled steps per library")
    parser.add_argument("--rows", type=int, default=20, help="ops shown per library")
    args = parser.parse_args()
    # BLAS reads its thread count once, at import: set it before NumPy is imported
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    sys.path.insert(0, os.path.dirname(HERE))
    import ember
    from bench._harness import warm_up
    from bench.workloads import WORKLOADS

    if args.workload not in WORKLOADS:
        parser.error(f"unknown workload {args.workload!r}; one of {', '.join(WORKLOADS)}")
    libraries = [("ember", ember, _profile_ember)]
    try:
        import torch

        torch.set_num_threads(args.threads)
        libraries.append(("torch", torch, _profile_torch))
    except ImportError:
        print("(PyTorch is not installed: ember alone)")
    ember.set_num_threads(args.threads)
    for label, lib, profile in libraries:
        step = WORKLOADS[args.workload](lib)
        warm_up(step)
        averages = profile(lib, step, args.steps)
        _print(f"{label}: {args.workload}, {args.threads} thread(s), {args.steps} steps",
               top_ops(averages, args.steps, args.rows))


if __name__ == "__main__":
    main()

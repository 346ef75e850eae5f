"""`make bench`: every workload in ember and PyTorch, side by side, in one run.

    python bench/run.py                    # all workloads, at the core count and at 1 thread
    python bench/run.py --only mlp,cnn --threads 2
    python bench/run.py --device cuda      # on the GPU (ember through CuPy), time only

For each thread count a fresh process is started (BLAS reads its thread count at import).
In it, each workload is built in both libraries, warmed up (at least a second each), then
timed alternately (ember, torch, ember, torch, ...) so that drift in machine speed affects
both alike, each block after a 50 ms pause in which the other library's worker threads stop
spinning (torch's keep a core busy for ~10 ms after its last op); the median time per step
is reported with the ember/torch ratio. Peak memory is
measured separately: one fresh process per library and workload warms up, runs a few steps
and reports the growth of its peak resident memory (VmHWM) over what it held once the model
was built, plus the private memory of ember's helper process where one ran (a large LSTM
layer shares its batch with it). Results go to bench/results/.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _set_thread_env(threads):
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMEXPR_NUM_THREADS"):
        os.environ[var] = str(threads)


def _libraries():
    import ember

    libs = [("ember", ember)]
    try:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        libs.append(("torch", torch))
    except ImportError:
        pass
    return libs


def _on(lib, device, make):
    """`make(lib)` built on `device`; on a GPU each step waits for its kernels to finish, so
    the time measured is the GPU's, not the time to queue the work. The CPU is the default
    device already: setting it anyway would put torch under a device mode for the rest of the
    process, in which some of its functions behave differently (l1_loss drops `weight`)."""
    if device == "cpu":
        return make(lib)
    lib.set_default_device(device)
    step = make(lib)

    def synced():
        step()
        lib.cuda.synchronize()
    synced.ops_per_step = getattr(step, "ops_per_step", None)
    return synced


def _importable_root():
    """`bench` importable as a package in a child process started on this file."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)


def time_workloads(names, rounds, repeats, device):
    """Child process: alternate the libraries on each workload; return rows of results."""
    _importable_root()
    from bench._harness import settle, time_step, warm_up
    from bench.workloads import WORKLOADS

    libs = _libraries()
    rows = []
    for name in names:
        steps = {label: _on(lib, device, WORKLOADS[name]) for label, lib in libs}
        for step in steps.values():
            warm_up(step)
        samples = {label: [] for label in steps}
        round_ratios = []  # ember/torch of each round's medians: how much the ratio moves
        for _ in range(rounds):
            this_round = {}
            for label, step in steps.items():
                settle()
                this_round[label] = time_step(step, repeats)
            for label, times in this_round.items():
                samples[label] += times
            if "torch" in this_round:
                round_ratios.append(statistics.median(this_round["ember"]) /
                                    statistics.median(this_round["torch"]))
        per = getattr(steps["ember"], "ops_per_step", None)
        row = {"workload": name, "unit": "us/op" if per else "ms/step"}
        for label in steps:
            median = statistics.median(samples[label])
            row[label] = median * 1e6 / per if per else median * 1e3
        if "torch" in row:
            row["ratio"] = row["ember"] / row["torch"]
            row["ratio_range"] = [min(round_ratios), max(round_ratios)]
        rows.append(row)
        print(f"  {name}: done", file=sys.stderr, flush=True)
    return rows


def peak_memory(lib_name, name, steps=5):
    """Grandchild process: MiB of peak memory added by a warm-up and `steps` steps, plus the
    private memory of ember's helper process where one ran (its shared arrays are counted
    here already)."""
    _importable_root()
    from bench._harness import warm_up
    from bench.workloads import WORKLOADS

    lib = __import__(lib_name)
    step = WORKLOADS[name](lib)
    before = _status("VmRSS")
    warm_up(step)
    for _ in range(steps):
        step()
    helper = getattr(getattr(lib, "_helper", None), "_helper", None)
    extra = _status("RssAnon", helper.process.pid) if helper is not None else 0
    return (_status("VmHWM") - before + extra) / 1024


def _status(field, pid="self"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])  # kB
    return 0


def _run_child(args):
    out = subprocess.run([sys.executable, __file__] + args, capture_output=True, text=True,
                         env=os.environ.copy())
    if out.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {' '.join(args)}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _memory_column(rows, threads):
    for row in rows:
        if row["unit"] != "ms/step":
            continue
        for lib in ("ember", "torch"):
            if lib in row:
                row[f"{lib}_peak_mib"] = _run_child(
                    ["--memory", lib, row["workload"], "--threads", str(threads)])


def _print(rows, threads, device):
    where = f"{threads} thread(s)" if device == "cpu" else f"{device}, {threads} CPU thread(s)"
    print(f"\n{where}  (median per step; rounds = the lowest and highest ratio of "
          "single rounds; peak = extra resident memory while training)")
    print(f"{'workload':<20}{'ember':>10}{'torch':>10}{'ratio':>8}{'rounds':>12}"
          f"{'ember MiB':>11}{'torch MiB':>11}")
    for r in rows:
        torch_time = f"{r['torch']:10.2f}" if "torch" in r else f"{'-':>10}"
        ratio = f"{r['ratio']:8.2f}" if "ratio" in r else f"{'-':>8}"
        low, high = r.get("ratio_range", (None, None))
        spread = f"{low:6.2f}-{high:.2f}" if low is not None else f"{'':>12}"
        ratio += f"{spread:>12}"
        em = f"{r['ember_peak_mib']:11.0f}" if "ember_peak_mib" in r else f"{'':>11}"
        tm = f"{r['torch_peak_mib']:11.0f}" if "torch_peak_mib" in r else f"{'':>11}"
        print(f"{r['workload']:<20}{r['ember']:10.2f}{torch_time}{ratio}{em}{tm}   "
              f"{r['unit']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--threads", type=int, action="append",
                        help="thread counts (default: the core count and 1)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="cuda: both libraries on the GPU (no memory column)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--memory", nargs=2, metavar=("LIB", "WORKLOAD"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    threads = args.threads or sorted({os.cpu_count() or 1, 1}, reverse=True)
    if args.child or args.memory:
        _set_thread_env(threads[0])
        if args.memory:
            print(json.dumps(peak_memory(*args.memory)))
        else:
            print(json.dumps(time_workloads(args.only.split(","), args.rounds, args.repeats,
                                            args.device)))
        return
    sys.path.insert(0, ROOT)
    from bench.workloads import WORKLOADS

    names = args.only.split(",") if args.only else list(WORKLOADS)
    if args.device == "cuda":
        threads = threads[:1]  # the GPU does the work; one run is enough
    results = {"cpu_count": os.cpu_count(), "device": args.device, "runs": []}
    for n in threads:
        _set_thread_env(n)
        rows = _run_child(["--child", "--only", ",".join(names), "--threads", str(n),
                           "--rounds", str(args.rounds), "--repeats", str(args.repeats),
                           "--device", args.device])
        if not args.no_memory and args.device == "cpu":
            _memory_column(rows, n)
        _print(rows, n, args.device)
        results["runs"].append({"threads": n, "rows": rows})
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", "bench.json" if args.device == "cpu" else
                        f"bench_{args.device}.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=2)
    print(f"\nresults written to {os.path.relpath(path)}")


if __name__ == "__main__":
    main()

"""Which of OpenBLAS's kernel sets runs float32 GEMMs faster on this machine?

    python bench/blas_kernels.py                      # OpenBLAS's own choice against Haswell
    python bench/blas_kernels.py --cores SkylakeX,Haswell,Zen --threads 1

On AMD Zen 4 ember switches OpenBLAS from its own choice (AVX-512 "SkylakeX" kernels) to its
AVX2 "Haswell" kernels when it is imported (see ember/_blas.py); this script is the
measurement behind that, and the way to check it on another CPU. It times GEMMs of the shapes
the benchmark workloads run -- LSTM steps, MLP and GPT layers, ResNet convolution chunks --
under each kernel set in turn, switching back and forth within one process (A B A B ...), and
prints each shape's median time per set and the speed-up of the last set over the first.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench._threads import fix_threads_from_argv  # noqa: E402

fix_threads_from_argv(os.cpu_count() or 1, ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"))

import numpy as np  # noqa: E402

from ember import _blas  # noqa: E402

# (M, K, N) of A @ B, and where the benchmarks run it
SHAPES = [
    ((32, 256, 1024), "lstm step, forward"),
    ((32, 1024, 256), "lstm step, backward"),
    ((1600, 64, 1024), "lstm input projection"),
    ((256, 784, 1024), "mlp layer 1"),
    ((256, 1024, 1024), "mlp layer 2"),
    ((2048, 256, 768), "gpt qkv projection"),
    ((2048, 256, 1024), "gpt mlp up"),
    ((2048, 1024, 256), "gpt mlp down"),
    ((64, 576, 1024), "resnet stage 1 conv, one image"),
    ((128, 1152, 256), "resnet stage 2 conv, one image"),
    ((512, 4608, 112), "resnet stage 4 conv, 7 images"),
]


def _median_us(a, b, repeats):
    a @ b
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default=f"{_blas.openblas_choice},Haswell",
                        help="comma-separated OpenBLAS kernel sets (OPENBLAS_CORETYPE names)")
    parser.add_argument("--threads", type=int)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    if _blas.thread_control is None:
        sys.exit("NumPy's BLAS is not an OpenBLAS that ember can reach")
    cores = args.cores.split(",")
    rng = np.random.default_rng(0)
    operands = [(rng.standard_normal((m, k), dtype=np.float32),
                 rng.standard_normal((k, n), dtype=np.float32)) for (m, k, n), _ in SHAPES]
    times = {core: [[] for _ in SHAPES] for core in cores}
    for _ in range(args.rounds):
        for core in cores:
            if not _blas.select_kernels(_blas._openblas, core) and _blas.corename() != core:
                sys.exit(f"OpenBLAS here has no {core!r} kernels")
            for i, (a, b) in enumerate(operands):
                times[core][i].append(_median_us(a, b, args.repeats))
    print(f"{os.environ['OPENBLAS_NUM_THREADS']} thread(s); median us per GEMM; "
          f"speed-up = {cores[0]} / {cores[-1]}")
    print(f"{'shape (M, K, N)':>18}  " + "".join(f"{c:>11}" for c in cores) + "  speed-up")
    for i, ((m, k, n), where) in enumerate(SHAPES):
        medians = [statistics.median(times[c][i]) for c in cores]
        print(f"{str((m, k, n)):>18}  " + "".join(f"{t:11.0f}" for t in medians) +
              f"  {medians[0] / medians[-1]:8.2f}   {where}")


if __name__ == "__main__":
    main()

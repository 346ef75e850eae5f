"""How fast ember draws torch's random streams: 10**7 numbers per call, timed alternately
against torch (1 thread) and NumPy's own generator (PCG64), medians of a few rounds.

    python bench/random_speed.py            # 10**7 numbers
    python bench/random_speed.py --n 1000000

Not a test: it prints ember's time per call and its ratio to torch and to
`np.random.Generator(PCG64).random(n)` (float64) / `.random(n, dtype=float32)`.
"""
import argparse
import statistics
import time

import numpy as np


def _cases(ember, torch, n):
    pcg = np.random.Generator(np.random.PCG64(0))
    return {
        "rand float32": (lambda: ember.rand(n), lambda: torch.rand(n),
                         lambda: pcg.random(n, dtype=np.float32)),
        "rand float64": (lambda: ember.rand(n, dtype=ember.float64),
                         lambda: torch.rand(n, dtype=torch.float64), lambda: pcg.random(n)),
        "randn float32": (lambda: ember.randn(n), lambda: torch.randn(n),
                          lambda: pcg.standard_normal(n, dtype=np.float32)),
        "randn float64": (lambda: ember.randn(n, dtype=ember.float64),
                          lambda: torch.randn(n, dtype=torch.float64),
                          lambda: pcg.standard_normal(n)),
        "randint 0..1000": (lambda: ember.randint(0, 1000, (n,)),
                            lambda: torch.randint(0, 1000, (n,)),
                            lambda: pcg.integers(0, 1000, n)),
    }


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**7)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import torch

    import ember

    torch.set_num_threads(1)
    print(f"{'draw':18s} {'ember s':>9s} {'/ torch':>8s} {'/ numpy':>8s}")
    for name, fns in _cases(ember, torch, args.n).items():
        for fn in fns:
            fn()  # warm up
        times = [[], [], []]
        for _ in range(args.rounds):
            for i, fn in enumerate(fns):
                times[i].append(_time(fn))
        e, t, n = (statistics.median(ts) for ts in times)
        print(f"{name:18s} {e:9.3f} {e / t:8.1f} {e / n:8.1f}")


if __name__ == "__main__":
    main()

"""Per-sample gradients: `vmap(grad(loss))` against a Python loop over the samples, for a small
MLP and a small CNN, in ember (and the same in torch.func, for reference), timed alternately,
medians of rounds.

    python bench/per_sample_grads.py                # batch 64, 7 rounds
    python bench/per_sample_grads.py --batch 32 --rounds 5

Not a test (tests/test_vmap.py checks the values): it first checks that vmap's gradients equal
the loop's, then prints the time of each way and the loop / vmap speedup.
"""
import argparse
import statistics
import time

import numpy as np


def _mlp(m):
    return m.nn.Sequential(m.nn.Linear(32, 64), m.nn.ReLU(), m.nn.Linear(64, 10))


def _cnn(m):
    return m.nn.Sequential(m.nn.Conv2d(1, 8, 3), m.nn.ReLU(), m.nn.MaxPool2d(2),
                           m.nn.Conv2d(8, 16, 3), m.nn.ReLU(), m.nn.Flatten(),
                           m.nn.Linear(16 * 4 * 4, 10))


def _ways(m, build, shape, batch):
    """(vmap, loop): each returns the per-sample gradients of every parameter."""
    m.manual_seed(0)
    model = build(m)
    params = {k: v.detach() for k, v in model.named_parameters()}
    rng = np.random.default_rng(0)
    xs = m.tensor(rng.standard_normal((batch, *shape)).astype(np.float32))
    ys = m.tensor(rng.integers(0, 10, batch))

    def loss(p, x, y):
        out = m.func.functional_call(model, p, (x[None],))
        return m.nn.functional.cross_entropy(out, y[None])

    per_sample = m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))

    def vmapped():
        return per_sample(params, xs, ys)

    def loop():
        found = [m.func.grad(loss)(params, xs[i], ys[i]) for i in range(batch)]
        return {k: m.stack([g[k] for g in found]) for k in params}

    return vmapped, loop


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    import torch

    import ember

    torch.set_num_threads(1)
    print(f"{'model':6s} {'lib':6s} {'vmap s':>8s} {'loop s':>8s} {'loop/vmap':>9s}")
    for name, build, shape in (("mlp", _mlp, (32,)), ("cnn", _cnn, (1, 14, 14))):
        fns = {lib: _ways(m, build, shape, args.batch) for lib, m in (("ember", ember),
                                                                       ("torch", torch))}
        v, lp = fns["ember"]
        a, b = v(), lp()
        for k in a:
            np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=1e-4, atol=1e-6)
        for pair in fns.values():
            for fn in pair:
                fn()  # warm up
        times = {(lib, way): [] for lib in fns for way in (0, 1)}
        for _ in range(args.rounds):
            for lib, pair in fns.items():
                for way, fn in enumerate(pair):
                    times[lib, way].append(_time(fn))
        for lib in fns:
            tv, tl = (statistics.median(times[lib, w]) for w in (0, 1))
            print(f"{name:6s} {lib:6s} {tv:8.4f} {tl:8.4f} {tl / tv:9.1f}")


if __name__ == "__main__":
    main()

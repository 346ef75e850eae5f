"""nn kernels one by one: forward + backward of each activation, normalization, softmax,
dropout and embedding, in ember and torch in one run (alternating), as ember/torch ratios.

    python bench/nn_kernels.py                        # every kernel, 1 thread
    python bench/nn_kernels.py --only gelu,silu --threads 2 --rounds 5

Inputs are float32 of shape (64, 128, 256) -- read as (N, C, L) by the channel norms -- unless
the name says otherwise. A step is the forward, then backward with a fixed upstream gradient,
then the input's gradient is dropped (so each step allocates it afresh in both libraries).
The machine may be shared: compare ratios from the same run, and repeat.
"""
import argparse
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench._threads import fix_threads_from_argv  # noqa: E402

fix_threads_from_argv(1)

import numpy as np  # noqa: E402

from bench._harness import compare, report, set_threads  # noqa: E402

SHAPE = (64, 128, 256)
VOCAB = 30000


def _float(lib, shape, seed, requires_grad=False):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return lib.from_numpy(data).requires_grad_(requires_grad)


def _fwd_bwd(lib, forward, shape=SHAPE, params=()):
    """A step running forward(x) and its backward for a fixed random upstream gradient."""
    x = _float(lib, shape, 0, requires_grad=True)
    g = _float(lib, shape, 1)
    leaves = (x,) + tuple(params)

    def step():
        forward(x).backward(g)
        for t in leaves:
            t.grad = None
    return step


def _pointwise(name, **kwargs):
    def make(lib):
        fn = getattr(lib.nn.functional, name)
        return _fwd_bwd(lib, lambda x: fn(x, **kwargs))
    return make


def _affine(lib, n):
    w = _float(lib, (n,), 2).requires_grad_()
    b = _float(lib, (n,), 3).requires_grad_()
    return w, b


def layer_norm(lib):
    w, b = _affine(lib, SHAPE[-1])
    return _fwd_bwd(lib, lambda x: lib.nn.functional.layer_norm(x, SHAPE[-1:], w, b),
                    params=(w, b))


def group_norm(lib):
    w, b = _affine(lib, SHAPE[1])
    return _fwd_bwd(lib, lambda x: lib.nn.functional.group_norm(x, 32, w, b), params=(w, b))


def batch_norm(lib):
    w, b = _affine(lib, SHAPE[1])
    mean, var = lib.zeros(SHAPE[1]), lib.ones(SHAPE[1])
    return _fwd_bwd(lib, lambda x: lib.nn.functional.batch_norm(x, mean, var, w, b,
                                                                 training=True), params=(w, b))


def softmax(lib):
    return _fwd_bwd(lib, lambda x: lib.softmax(x, -1))


def log_softmax(lib):
    return _fwd_bwd(lib, lambda x: lib.log_softmax(x, -1))


def dropout(lib):
    return _fwd_bwd(lib, lambda x: lib.nn.functional.dropout(x, 0.5))


def erf(lib):
    return _fwd_bwd(lib, lambda x: lib.erf(x))


def embedding(lib, vocab=VOCAB, dim=SHAPE[-1]):
    """A (vocab, dim) table looked up with (64, 128) indices."""
    indices = np.random.default_rng(4).integers(0, vocab, SHAPE[:2])
    index = lib.from_numpy(indices)
    weight = _float(lib, (vocab, dim), 5, requires_grad=True)
    g = _float(lib, SHAPE[:2] + (dim,), 6)

    def step():
        lib.nn.functional.embedding(index, weight).backward(g)
        weight.grad = None
    return step


def embedding_small(lib):
    return embedding(lib, vocab=100)


KERNELS = {
    "layer_norm": layer_norm, "group_norm": group_norm, "batch_norm": batch_norm,
    "softmax": softmax, "log_softmax": log_softmax,
    "gelu": _pointwise("gelu"), "gelu_tanh": _pointwise("gelu", approximate="tanh"),
    "silu": _pointwise("silu"), "mish": _pointwise("mish"), "softplus": _pointwise("softplus"),
    "hardswish": _pointwise("hardswish"), "hardsigmoid": _pointwise("hardsigmoid"),
    "elu": _pointwise("elu"), "selu": _pointwise("selu"), "celu": _pointwise("celu"),
    "leaky_relu": _pointwise("leaky_relu"), "relu6": _pointwise("relu6"),
    "hardtanh": _pointwise("hardtanh"), "logsigmoid": _pointwise("logsigmoid"),
    "softshrink": _pointwise("softshrink"), "hardshrink": _pointwise("hardshrink"),
    "erf": erf, "dropout": dropout,
    "embedding (30000x256)": embedding, "embedding (100x256)": embedding_small,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated kernel names (prefix match)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    set_threads(args.threads)
    wanted = args.only.split(",") if args.only else None
    results = []
    for name, make in KERNELS.items():
        if wanted and not any(name.split(" ")[0] == w or name == w for w in wanted):
            continue
        results.append(compare(name, make, repeats=args.repeats, warmup=2, rounds=args.rounds))
        print(f"  {name}: done", file=sys.stderr, flush=True)
    report(results, path="bench/results/nn_kernels.json")


if __name__ == "__main__":
    main()

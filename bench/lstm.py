"""LSTM training step, ember vs torch in one run: nn.LSTM and the same cell written by hand.

    python bench/lstm.py [--threads N]

Workload: input 64, hidden 256, 50 time steps, batch 32, float32; one step = forward, MSE
loss against a fixed target, backward, AdamW step.
  nn.LSTM      the library's layer (ember: one fused op per layer, see ember/ops/nn/rnn.py)
  hand cell    two Linear layers + sigmoid/tanh in a Python loop over time, as users write
               their own cells -- this measures the per-op overhead of a long graph
"""
import argparse
import os
import sys

THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(THREADS)  # before NumPy loads its BLAS, which reads them once

import numpy as np  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench._harness import compare, report, set_threads  # noqa: E402

STEPS, BATCH, INPUT, HIDDEN = 50, 32, 64, 256


def _data(lib, *shape, seed):
    return lib.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _train_step(lib, model, run):
    x = _data(lib, STEPS, BATCH, INPUT, seed=0)
    target = _data(lib, STEPS, BATCH, HIDDEN, seed=1)
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        loss = lib.nn.functional.mse_loss(run(x), target)
        loss.backward()
        optimizer.step()
    return step


def nn_lstm(lib):
    lib.manual_seed(0)
    model = lib.nn.LSTM(INPUT, HIDDEN)
    return _train_step(lib, model, lambda x: model(x)[0])


def hand_cell(lib):
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.ModuleDict({"ih": nn.Linear(INPUT, 4 * HIDDEN), "hh": nn.Linear(HIDDEN, 4 * HIDDEN)})

    def run(x):
        h = c = lib.zeros(BATCH, HIDDEN)
        outputs = []
        for t in range(x.shape[0]):
            i, f, g, o = (model["ih"](x[t]) + model["hh"](h)).chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            h = o.sigmoid() * c.tanh()
            outputs.append(h)
        return lib.stack(outputs)
    return _train_step(lib, model, run)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads, both libraries")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    set_threads(THREADS)
    results = [compare(f"nn.LSTM step ({args.threads} thr)", nn_lstm, repeats=args.repeats),
               compare(f"hand-written cell step ({args.threads} thr)", hand_cell,
                       repeats=args.repeats)]
    report(results, path="bench/results/lstm.json")


if __name__ == "__main__":
    main()

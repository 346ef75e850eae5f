"""Per-op overhead of small ops: microseconds per op, ember vs torch in one run.

    python bench/overhead.py

Workload: a chain of 100 elementwise ops (mul, add, tanh, ... on 16-element float32 tensors, one
input requiring grad), then backward. Reported per op: forward with graph recording, and
forward + backward. Tiny tensors make the arithmetic negligible, so this measures what the
framework adds around each op (dispatch, promotion, graph nodes, the engine).
"""
import sys

sys.path.insert(0, __file__.rsplit("/", 2)[0])

from bench._harness import compare, report, set_threads  # noqa: E402

CHAIN = 100


def _chain(lib):
    x = lib.ones(16, requires_grad=True)
    w = lib.full((16,), 0.5)

    def forward():
        y = x
        for _ in range(CHAIN // 4):
            y = y * w
            y = y + 1.0
            y = lib.tanh(y)
            y = y - w
        return y.sum()
    return forward


def forward_only(lib):
    forward = _chain(lib)
    return forward


def forward_backward(lib):
    forward = _chain(lib)

    def step():
        forward().backward()
    return step


def main():
    set_threads(1)
    results = []
    for name, make in (("forward (us/op)", forward_only), ("forward+backward (us/op)",
                                                            forward_backward)):
        r = compare(name, make, repeats=50, rounds=5)
        for key in ("ember", "torch"):
            if key in r:
                r[key] /= CHAIN + 1  # + the final sum
        results.append(r)
    report(results, unit="us", scale=1e6, path="bench/results/overhead.json")


if __name__ == "__main__":
    main()

"""Rows for ember/ops/linalg.py."""
from ._spec import Spec, T

SPECS = [
    Spec("matmul", lambda m, a, b: a @ b,
         [(T(3, 4), T(4, 5)), (T(4), T(4)), (T(4), T(2, 4, 3)), (T(2, 3, 4), T(4)),
          (T(2, 1, 3, 4), T(5, 4, 2)), (T(3, 4, t=True), T(4, 5))]),
    Spec("mm", lambda m, a, b: m.mm(a, b), [(T(3, 4), T(4, 5))], ops=["matmul"]),
]

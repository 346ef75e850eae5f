"""Rows for ember/ops/reduce.py."""
from ._spec import B, I, Spec, T

SPECS = [
    Spec("sum", lambda m, a: a.sum(), [(T(3, 4),), (T(),), (T(0, 3),), (I(3),), (B(4),)]),
    Spec("sum_dim", lambda m, a: (a.sum(1), a.sum((0, -1), keepdim=True)),
         [(T(2, 3, 4),), (T(2, 3, 4, t=True),)], ops=["sum"]),
    Spec("mean", lambda m, a: (a.mean(), a.mean(-1, keepdim=True)), [(T(3, 4),)]),
    Spec("sum_to_size", lambda m, a: a.sum_to_size(3, 1), [(T(2, 3, 4),)]),
    Spec("any_all", lambda m, a: (a.any(), a.all(0)), [(B(3, 4),)], ops=["any", "all"]),
]

"""Rows for ember/ops/index.py."""
from ._spec import Spec, T

SPECS = [
    Spec("getitem", lambda m, a: (a[1], a[:, 1:3], a[None, ..., ::2], a[-1, -1]), [(T(3, 4),)],
         ops=["getitem", "basic_index_backward"]),
]

"""Rows for ember/ops/shape.py."""
from ._spec import Spec, T

SPECS = [
    Spec("view", lambda m, a: a.view(4, -1), [(T(2, 6),)]),
    Spec("reshape", lambda m, a: a.reshape(-1), [(T(3, 4, t=True),), (T(),)], ops=["view"]),
    Spec("transpose", lambda m, a: a.transpose(0, -1), [(T(2, 3, 4),)]),
    Spec("permute", lambda m, a: a.permute(2, 0, 1), [(T(2, 3, 4),)]),
    Spec("expand", lambda m, a: a.expand(2, 3, 4), [(T(3, 1),)]),
    Spec("unsqueeze", lambda m, a: a.unsqueeze(-1), [(T(2, 3),)]),
    Spec("squeeze", lambda m, a: (a.squeeze(), a.squeeze(1)), [(T(2, 1, 3, 1),)]),
    Spec("unbind", lambda m, a: a.unbind(1), [(T(2, 3),)]),
    Spec("stack", lambda m, a, b: m.stack([a, b], 1), [(T(2, 3), T(2, 3))]),
    Spec("flatten", lambda m, a: a.flatten(1), [(T(2, 3, 4),)], ops=["view"]),
]

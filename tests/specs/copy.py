"""Rows for ember/ops/copy.py."""
from ._spec import Spec, T

SPECS = [
    Spec("to_dtype", lambda m, a: (a.double(), a.to(m.float16), a.long()), [(T(2, 3),)],
         gradcheck=False),
    Spec("clone", lambda m, a: a.clone(), [(T(2, 3, t=True),)]),
    Spec("copy", lambda m, a, b: (a * 1).copy_(b), [(T(2, 3), T(3))]),
    Spec("fill", lambda m, a: (a * 1).fill_(2.0), [(T(2, 3),)]),
    Spec("fill_tensor", lambda m, a, v: (a * 1).fill_(v), [(T(2, 3), T())]),
    Spec("zero", lambda m, a: (a * 1).zero_(), [(T(2, 3),)]),
]

SPECS += [
    Spec("alias", lambda m, a: a.as_subclass(m.Tensor) * 2, [(T(3, 4),), (T(),)]),
]

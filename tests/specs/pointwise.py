"""Rows for ember/ops/pointwise.py."""
from ._spec import B, I, Spec, T

UNARY_CASES = [(T(3, 4),), (T(),), (T(0, 3),), (T(4, 3, t=True),)]
BINARY_CASES = [(T(3, 4), T(4)), (T(), T(2, 3)), (T(0, 3), T(3)), (T(4, 3, t=True), T(4, 3)),
                (T(2, 3), 1.5), (I(2, 3), 2.5), (T(2, 3, dtype="float64"), T(3))]

SPECS = [
    Spec("neg", lambda m, a: m.neg(a), UNARY_CASES),
    Spec("exp", lambda m, a: m.exp(a), UNARY_CASES + [(I(3),)]),
    Spec("log", lambda m, a: m.log(a), [(T(3, 4, low=0.1),), (T(low=0.5),)]),
    Spec("tanh", lambda m, a: a.tanh(), UNARY_CASES),
    Spec("sigmoid", lambda m, a: m.sigmoid(a), UNARY_CASES + [(T(5, low=-100, high=100),)]),
    Spec("relu", lambda m, a: m.relu(a), UNARY_CASES),
    Spec("add", lambda m, a, b: m.add(a, b), BINARY_CASES + [(I(3), B(3)), (B(2), B(2))]),
    Spec("add_alpha", lambda m, a, b: m.add(a, b, alpha=2), BINARY_CASES[:3], ops=["add"]),
    Spec("sub", lambda m, a, b: a - b, BINARY_CASES),
    Spec("rsub_scalar", lambda m, a: 3 - a, [(T(3),)], ops=["sub"]),
    Spec("mul", lambda m, a, b: a * b, BINARY_CASES),
    Spec("div", lambda m, a, b: a / b, [(T(3, 4), T(4, low=0.5)), (I(3), I(3, low=1))]),
    Spec("pow_scalar", lambda m, a: a ** 3, [(T(3, 4),), (T(),)]),
    Spec("compare", lambda m, a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b),
         [(I(3, 4), I(4)), (T(3), 0.5)], ops=["eq", "ne", "lt", "le", "gt", "ge"]),
    Spec("isnan", lambda m, a: m.isnan(a / a), [(T(3, low=0, high=1),)], grad=False),
]

"""`Spec`: one row of the op table -- a lambda run in both libraries over several input cases.

    Spec("add", lambda m, a, b: m.add(a, b),
         cases=[(T(3, 4), T(4)),            # broadcasting
                (T(), T(2, 3)),             # 0-d with n-d
                (T(0, 3), T(3)),            # empty
                (T(4, 3, t=True), T(4, 3))])  # non-contiguous (transposed storage)

Input makers (deterministic per case):
    T(*shape, dtype="float32", low=-2, high=2, t=False)  floating data in [low, high)
    C(*shape, dtype="complex64", low=-2, high=2, t=False)  complex data, each part in [low, high)
    I(*shape, dtype="int64", low=0, high=5)              integer data
    B(*shape)                                            bool data
Python scalars and other objects in a case are passed through unchanged.
"""
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np


@dataclass
class Maker:
    shape: tuple
    dtype: str
    low: float
    high: float
    transposed: bool = False

    def build(self, rng):
        shape = self.shape[::-1] if self.transposed else self.shape
        if self.dtype == "bool":
            a = rng.random(shape) < 0.5
        elif self.dtype.startswith(("int", "uint")):
            a = rng.integers(self.low, self.high, shape).astype(self.dtype)
        elif self.dtype.startswith("complex"):
            parts = rng.uniform(self.low, self.high, (2,) + tuple(shape))
            a = (parts[0] + 1j * parts[1]).astype(self.dtype)
        else:
            a = rng.uniform(self.low, self.high, shape)
            a = a.astype(ml_dtypes.bfloat16 if self.dtype == "bfloat16" else self.dtype)
        a = np.asarray(a)
        return a.T if self.transposed else a


def T(*shape, dtype="float32", low=-2.0, high=2.0, t=False):
    return Maker(shape, dtype, low, high, t)


def C(*shape, dtype="complex64", low=-2.0, high=2.0, t=False):
    return Maker(shape, dtype, low, high, t)


def I(*shape, dtype="int64", low=0, high=5):  # noqa: E743
    return Maker(shape, dtype, low, high)


def B(*shape):
    return Maker(shape, "bool", 0, 1)


@dataclass
class Spec:
    """One op's test row.

    ops        registered op names this row exercises (defaults to [name])
    grad       compare gradients with torch
    gradcheck  run ember's float64 (complex128) gradcheck on the first case (no torch needed)
    """
    name: str
    fn: object
    cases: list
    ops: list = field(default=None)
    grad: bool = True
    gradcheck: bool = True
    rtol: float = None
    atol: float = None
    grad_rtol: float = None
    grad_atol: float = None

    def __post_init__(self):
        if self.ops is None:
            self.ops = [self.name]

    def inputs(self, case_index):
        rng = np.random.default_rng(1234 + case_index)
        return [x.build(rng) if isinstance(x, Maker) else x for x in self.cases[case_index]]

    def float64_inputs(self, case_index):
        """The case with floating inputs in float64 and complex ones in complex128, for
        gradcheck."""
        out = []
        for x in self.inputs(case_index):
            if isinstance(x, np.ndarray) and x.dtype.kind == "f" or \
                    isinstance(x, np.ndarray) and x.dtype.name == "bfloat16":
                x = x.astype(np.float64)
            elif isinstance(x, np.ndarray) and x.dtype.kind == "c":
                x = x.astype(np.complex128)
            out.append(x)
        return out

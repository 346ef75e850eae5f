"""Type promotion and broadcasting of elementwise ops, against torch.

Every pair of dtypes goes through add, mul, div and the comparisons in each operand form:
tensor with tensor, tensor with 0-d tensor (either side) and tensor with a Python scalar
(either side). A pair torch refuses must make ember raise the same exception type. Hypothesis
then draws shapes: broadcastable pairs must match torch's result, the rest must fail like it.
"""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

from .oracle import check, check_raises, to_torch

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
SCALARS = [True, 3, 2.5, -1]
OPS = {
    "add": lambda m, a, b: (m.add(a, b), a + b if isinstance(a, m.Tensor) else b + a),
    "mul": lambda m, a, b: m.mul(a, b),
    "div": lambda m, a, b: (m.div(a, b), m.div(a, b, rounding_mode="floor")),
    "compare": lambda m, a, b: (m.eq(a, b), m.lt(a, b), a >= b),
}


def make(dtype, shape, seed=0):
    """Values that are valid for every op here: nonzero (divisors) and small."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        values = np.ones(shape, dtype=bool) if seed else rng.random(shape) < 0.5
    elif dtype.startswith(("int", "uint")):
        values = rng.integers(1, 6, shape).astype(dtype)
    else:
        values = rng.uniform(0.5, 4.0, shape)
        values = values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    return np.asarray(values)  # a 0-d array, not a NumPy scalar, for shape ()


def agree(fn, inputs):
    """ember matches torch: same results, or the same exception type when torch raises."""
    try:
        fn(torch, *[to_torch(x, False) for x in inputs])
    except Exception:
        check_raises(fn, inputs)
        return
    check(fn, inputs, grad=False)


def _rounded_div_refused(op, left, right):
    """div(rounding_mode='floor') with two bools is refused by both; keep that case for
    test_pointwise.py and compare only true division here."""
    return op == "div" and left == "bool" and right == "bool"


@pytest.mark.parametrize("op", sorted(OPS))
def test_tensor_tensor(op):
    for left in DTYPES:
        for right in DTYPES:
            fn = OPS[op]
            if _rounded_div_refused(op, left, right):
                fn = lambda m, a, b: m.div(a, b)  # noqa: E731
            agree(fn, [make(left, (2, 3)), make(right, (3,), seed=1)])


@pytest.mark.parametrize("op", sorted(OPS))
def test_tensor_zero_dim(op):
    for left in DTYPES:
        for right in DTYPES:
            fn = OPS[op]
            if _rounded_div_refused(op, left, right):
                fn = lambda m, a, b: m.div(a, b)  # noqa: E731
            agree(fn, [make(left, (3,)), make(right, (), seed=1)])
            agree(fn, [make(left, ()), make(right, (3,), seed=1)])


@pytest.mark.parametrize("op", sorted(OPS))
def test_tensor_scalar(op):
    for dtype in DTYPES:
        for scalar in SCALARS:
            fn = OPS[op]
            if dtype == "bool" and scalar is True and op == "div":
                fn = lambda m, a, b: m.div(a, b)  # noqa: E731
            agree(fn, [make(dtype, (3,)), scalar])
            agree(fn, [scalar, make(dtype, (3,))])  # eq(2, x) is a TypeError in both


@pytest.mark.parametrize("op", sorted(OPS))
def test_zero_dim_with_zero_dim(op):
    """Two 0-d tensors are promoted like dimensioned ones; the result stays 0-d."""
    for left in DTYPES:
        for right in ("bool", "int8", "int64", "float16", "float64"):
            fn = OPS[op] if not _rounded_div_refused(op, left, right) else \
                (lambda m, a, b: m.div(a, b))
            agree(fn, [make(left, ()), make(right, (), seed=1)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_float_ops_promote_integers_to_default_float(dtype):
    agree(lambda m, a: (m.exp(a), m.sqrt(a), m.sigmoid(a), m.erf(a), a.reciprocal()),
          [make(dtype, (3,))])


# ----------------------------------------------------------------------------------------------
# broadcasting


def _floats(shape, seed):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def _broadcast_ops(m, a, b):
    return (a + b, a * b, m.maximum(a, b), m.where(a > 0, a, b), m.atan2(a, b),
            m.lerp(a, b, 0.25), m.clamp(a, min=b))


@settings(max_examples=40, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3))
def test_broadcasting_matches_torch(shapes):
    a_shape, b_shape = shapes.input_shapes
    check(_broadcast_ops, [_floats(a_shape, 0), _floats(b_shape, 1)])


@settings(max_examples=40, deadline=None)
@given(array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
def test_any_shapes_broadcast_or_fail_like_torch(a_shape, b_shape):
    """Pairs that do not broadcast raise RuntimeError in both; in-place ops also need the
    broadcast shape to be self's shape."""
    inputs = [_floats(a_shape, 0), _floats(b_shape, 1)]
    agree(lambda m, a, b: a + b, inputs)
    agree(lambda m, a, b: a.clone().mul_(b), inputs)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES),
       mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3))
def test_promotion_with_broadcasting(left, right, shapes):
    a_shape, b_shape = shapes.input_shapes
    agree(lambda m, a, b: (m.maximum(a, b), a * b, a != b, m.where(a != a, a, b)),
          [make(left, a_shape), make(right, b_shape, seed=1)])

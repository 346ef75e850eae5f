"""Rows for ember/ops/pointwise.py.

Each row covers broadcasting, 0-d, empty and transposed (non-contiguous) inputs where they
apply, float64 and the integer / bool dtypes torch accepts; inputs stay inside the op's domain
(`T(..., low=, high=)`). float16 / bfloat16 values are compared in the `*_half` rows, forward
only: half-precision gradients are too coarse to compare with torch's, which rounds
differently. In-place semantics, operators, promotion and errors are in tests/test_pointwise.py
and tests/test_promotion.py.
"""
import numpy as np

from ._spec import B, I, Spec, T


def unary(low=-2.0, high=2.0):
    """The shape cases of a unary op, with data in [low, high)."""
    return [(T(3, 4, low=low, high=high),), (T(low=low, high=high),),
            (T(0, 3, low=low, high=high),), (T(4, 3, low=low, high=high, t=True),),
            (T(5, dtype="float64", low=low, high=high),)]


INTS = [(I(6, low=-5, high=5),), (I(6, dtype="uint8", low=0, high=200),),
        (I(6, dtype="int32", low=-3, high=3),)]
BOOLS = [(B(6),)]


def binary(low=-2.0, high=2.0):
    """Shape cases of a binary op; the second operand (a divisor, say) lies in [low, high)."""
    return [(T(3, 4), T(4, low=low, high=high)), (T(), T(2, 3, low=low, high=high)),
            (T(0, 3), T(3, low=low, high=high)),
            (T(4, 3, t=True), T(4, 3, low=low, high=high)),
            (T(2, 3, dtype="float64"), T(3, low=low, high=high)),
            (T(2, 3), T(low=low, high=high, dtype="float64"))]


INT_PAIRS = [(I(2, 3, low=-5, high=5), I(3, low=1, high=4)),
             (I(4, dtype="uint8", low=0, high=100), I(4, dtype="int8", low=1, high=9)),
             (I(3, dtype="int32", low=-9, high=9), I(low=-4, high=-1))]
SPECIALS = np.array([np.nan, np.inf, -np.inf, 1.5, -0.0, 0.0, -2.5], dtype=np.float32)


def _positive_unary(name, low=0.5, high=3.0):
    return Spec(name, lambda m, a: getattr(m, name)(a), unary(low, high) + [(I(4, low=1),)])


SPECS = [
    # ------------------------------------------------------------------------------ unary math
    Spec("abs", lambda m, a: (m.abs(a), m.absolute(a), abs(a)),
         unary() + [(I(6, low=-5, high=5),), (I(6, dtype="int8", low=-5, high=5),)]),
    Spec("neg", lambda m, a: (m.neg(a), m.negative(a), -a), unary() + INTS),
    Spec("positive", lambda m, a: m.positive(a) * 1, unary()[:2] + INTS[:1], ops=["mul"]),
    Spec("exp", lambda m, a: m.exp(a), unary() + INTS + BOOLS),
    Spec("exp2", lambda m, a: m.exp2(a), unary() + INTS[:1]),
    Spec("expm1", lambda m, a: m.expm1(a), unary() + [(T(4, low=-1e-6, high=1e-6),)]),
    _positive_unary("log"),
    _positive_unary("log2"),
    _positive_unary("log10"),
    Spec("log1p", lambda m, a: m.log1p(a),
         unary(-0.5, 2.0) + [(T(4, low=-1e-6, high=1e-6),), (I(4, low=0),)]),
    _positive_unary("sqrt"),
    _positive_unary("rsqrt"),
    _positive_unary("reciprocal"),
    Spec("sin", lambda m, a: m.sin(a), unary() + INTS[:1]),
    Spec("cos", lambda m, a: m.cos(a), unary() + INTS[:1]),
    Spec("tan", lambda m, a: m.tan(a), unary(-1.2, 1.2) + INTS[:1]),
    Spec("asin", lambda m, a: (m.asin(a), m.arcsin(a)), unary(-0.9, 0.9)),
    Spec("acos", lambda m, a: (m.acos(a), m.arccos(a)), unary(-0.9, 0.9)),
    Spec("atan", lambda m, a: (m.atan(a), m.arctan(a)), unary() + INTS[:1]),
    Spec("sinh", lambda m, a: m.sinh(a), unary()),
    Spec("cosh", lambda m, a: m.cosh(a), unary()),
    Spec("tanh", lambda m, a: a.tanh(), unary() + INTS[:1]),
    Spec("asinh", lambda m, a: (m.asinh(a), m.arcsinh(a)), unary()),
    Spec("acosh", lambda m, a: (m.acosh(a), m.arccosh(a)), unary(1.1, 3.0)),
    Spec("atanh", lambda m, a: (m.atanh(a), m.arctanh(a)), unary(-0.9, 0.9)),
    Spec("sigmoid", lambda m, a: m.sigmoid(a),
         unary() + [(T(5, low=-100, high=100),), (T(4, dtype="float64", low=-800, high=800),)]
         + INTS[:1]),
    Spec("logit", lambda m, a: (m.logit(a), a.logit(0.2)), unary(0.05, 0.95)),
    Spec("logit_outside", lambda m, a: m.logit(a, eps=1e-3),
         [(T(6, low=-0.5, high=1.5),)], ops=["logit"], gradcheck=False),
    Spec("relu", lambda m, a: m.relu(a), unary() + INTS),
    Spec("erf", lambda m, a: m.erf(a),
         unary() + [(T(6, dtype="float64", low=-7, high=7),), (T(3, low=-1e-4, high=1e-4),)]
         + INTS[:1]),
    Spec("erfc", lambda m, a: m.erfc(a),
         unary() + [(T(6, dtype="float64", low=-5, high=26),), (T(4, low=-3, high=9),)]
         + INTS[:1]),
    Spec("erfinv", lambda m, a: m.erfinv(a),
         unary(-0.95, 0.95) + [(T(5, dtype="float64", low=-1, high=1),),
                               (np.array([1 - 1e-12, -1 + 1e-9, 1e-300, 0.0, 1.0, -1.0]),)]),
    Spec("deg2rad", lambda m, a: (m.deg2rad(a), m.rad2deg(a)), unary() + INTS[:1],
         ops=["deg2rad", "rad2deg"]),
    Spec("sign", lambda m, a: (m.sign(a), m.sgn(a)), unary() + INTS + BOOLS + [(SPECIALS,)],
         ops=["sign", "sgn"]),
    Spec("unary_half", lambda m, a: [m.exp(a), m.log(a.abs() + 1), m.sqrt(a.abs()), a.sin(),
                                     a.tanh(), a.sigmoid(), m.erf(a), m.erfinv(a / 2), a.neg(),
                                     a.abs(), a.reciprocal(), m.log1p(a.abs()), a.relu()],
         [(T(3, 4, dtype="float16"),), (T(5, dtype="bfloat16"),)], grad=False,
         ops=["exp", "log", "sqrt", "sin", "tanh", "sigmoid", "erf", "erfinv", "neg", "abs",
              "reciprocal", "log1p", "relu"]),

    Spec("binary_half", lambda m, a, b: [a + b, a - b * 2, a * b, a / b, a ** 2, a.abs() ** b,
                                         m.atan2(a, b), m.hypot(a, b), m.maximum(a, b),
                                         m.fmin(a, b), m.remainder(a, b), m.fmod(a, b),
                                         m.logaddexp(a, b), m.copysign(a, b), m.xlogy(b, b),
                                         m.lerp(a, a * 2, 0.3), m.where(a > b, a, b),
                                         m.clamp(a, -0.5, 0.5), a < b, m.floor(a), a.sign()],
         [(T(3, 4, dtype="float16"), T(4, dtype="float16", low=0.5, high=2)),
          (T(5, dtype="bfloat16"), T(5, dtype="bfloat16", low=0.5, high=2)),
          (T(3, dtype="float16"), T(dtype="float64", low=0.5, high=2))], grad=False,
         ops=["add", "sub", "mul", "div", "pow_tensor_scalar", "pow_tensor_tensor", "atan2",
              "hypot", "maximum", "fmin", "remainder", "fmod", "logaddexp", "copysign", "xlogy",
              "lerp", "where", "clamp_scalar", "lt", "floor", "sign"]),

    # ---------------------------------------------------------------- rounding, clamp and friends
    Spec("floor_ceil_trunc", lambda m, a: (m.floor(a), m.ceil(a), m.trunc(a), m.fix(a)),
         unary(-5, 5) + INTS + [(SPECIALS,)], ops=["floor", "ceil", "trunc"]),
    Spec("round", lambda m, a: (m.round(a), m.round(a, decimals=2), a.round(decimals=-1)),
         unary(-50, 50) + [(np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.14159, 125.0],
                                     dtype=np.float32),)]),
    Spec("round_int", lambda m, a: m.round(a), INTS, ops=["round"]),
    Spec("frac", lambda m, a: m.frac(a), unary(-5, 5)),
    Spec("clamp", lambda m, a: (m.clamp(a, -0.5, 0.5), a.clamp(min=0.1), a.clip(max=-0.2),
                                m.clamp_min(a, 0.3), m.clamp_max(a, 0.3), a.clamp(1.0, -1.0)),
         unary() + INTS[:1] + [(I(5, low=-5, high=5),)],
         ops=["clamp_scalar", "clamp_min", "clamp_max"]),
    Spec("clamp_int_float_bound", lambda m, a: (a.clamp(1.5), a.clamp(max=2.5), a.clamp(0, 1)),
         INTS + BOOLS, ops=["clamp_scalar"]),
    Spec("clamp_tensor", lambda m, a, lo, hi: (m.clamp(a, lo, hi), m.clamp(a, min=lo),
                                               m.clamp(a, max=hi), m.clamp_min(a, lo),
                                               m.clamp_max(a, hi)),
         [(T(3, 4), T(4, low=-1, high=0), T(3, 1, low=0, high=1)),
          (T(5), T(5, low=-1, high=1), T(5, low=-1, high=1)),  # some min > max
          (T(2, 3, dtype="float64"), T(low=-1, high=0), T(3, low=0, high=1)),
          (I(4, low=-5, high=5), T(4, low=-1, high=0), T(4, low=0, high=1))],
         ops=["clamp", "clamp_min_tensor", "clamp_max_tensor"]),
    Spec("nan_to_num", lambda m, a: (m.nan_to_num(a), m.nan_to_num(a, nan=1.0, posinf=2.0),
                                     a.nan_to_num(neginf=-3.0)),
         [(SPECIALS,), (SPECIALS.astype(np.float64),), (SPECIALS.astype(np.float16),),
          (T(3, 4),), (I(4),), (B(3),)]),

    # -------------------------------------------------------------------------- add ... pow
    Spec("add", lambda m, a, b: (m.add(a, b), a + b),
         binary() + [(T(2, 3), 1.5), (I(2, 3), 2.5), (I(3), B(3)), (B(2), B(2)), (B(3), 2),
                     (I(3, dtype="uint8"), I(3, dtype="int8")), (T(3, dtype="float16"), T(3))]
         + INT_PAIRS),
    Spec("add_alpha", lambda m, a, b: (m.add(a, b, alpha=2), a.add(b, alpha=-0.5)),
         binary()[:4] + [(T(3), 2)], ops=["add"]),
    Spec("add_int_alpha", lambda m, a, b: m.add(a, b, alpha=3), INT_PAIRS + [(I(2), 4)],
         ops=["add"]),
    Spec("radd", lambda m, a: (2 + a, 1.5 + a, m.add(3, a)), [(T(3),), (I(3),)], ops=["add"]),
    Spec("sub", lambda m, a, b: (m.sub(a, b), a - b, m.subtract(a, b, alpha=2)),
         binary() + [(T(2, 3), 1.5), (I(2, 3), 2.5)] + INT_PAIRS),
    Spec("rsub", lambda m, a, b: (3 - a, m.rsub(a, b), m.rsub(a, b, alpha=2), m.sub(2.5, a)),
         [(T(3), T(3)), (T(2, 3), T(3)), (I(3), I(3))], ops=["sub", "rsub", "rsub_scalar"]),
    Spec("mul", lambda m, a, b: (m.mul(a, b), a * b, m.multiply(a, b)),
         binary() + [(T(2, 3), 1.5), (I(2, 3), 2.5), (B(3), B(3)), (B(3), 3)] + INT_PAIRS),
    Spec("rmul", lambda m, a: (2 * a, 0.5 * a), [(T(3),), (I(3),)], ops=["mul"]),
    Spec("div", lambda m, a, b: (m.div(a, b), a / b, m.divide(a, b), m.true_divide(a, b)),
         binary(0.5, 2) + [(T(3), 4), (I(3), I(3, low=1)), (B(3), 2)] + INT_PAIRS),
    Spec("rdiv", lambda m, a: (1 / a, m.div(2, a)), [(T(3, low=0.5),), (I(3, low=1),)],
         ops=["div"]),
    Spec("div_rounding", lambda m, a, b: (m.div(a, b, rounding_mode="trunc"),
                                          m.div(a, b, rounding_mode="floor")),
         [(T(3, 4, low=-9, high=9), T(4, low=0.5, high=3)),
          (T(5, low=-9, high=9), T(5, low=-3, high=-0.5)),
          (T(low=-9, high=9, dtype="float64"), T(2, 3, low=0.5, high=2)),
          (T(0, 3), T(3, low=1, high=2)), (T(3, 4, t=True, low=-9, high=9), 0.7)]
         + INT_PAIRS + [(I(4, low=-9, high=9), 2.5)], ops=["div_trunc", "div_floor"]),
    Spec("floor_divide", lambda m, a, b: (m.floor_divide(a, b), a // b),
         [(T(3, 4, low=-9, high=9), T(4, low=0.5, high=3)),
          (T(5, low=-9, high=9), T(5, low=-3, high=-0.5)), (T(3, low=-9, high=9), 2)]
         + INT_PAIRS, grad=False),
    Spec("rfloordiv", lambda m, a: (7 // a, m.floor_divide(7, a)), [(I(4, low=1, high=5),)],
         ops=["floor_divide"]),
    Spec("remainder", lambda m, a, b: (m.remainder(a, b), a % b),
         [(T(3, 4, low=-9, high=9), T(4, low=0.5, high=3)),
          (T(5, low=-9, high=9), T(5, low=-3, high=-0.5)), (T(low=-9, high=9), T(3, low=1)),
          (T(0, 3), T(3, low=1, high=2)), (T(3, low=-5, high=5), -1.5)] + INT_PAIRS),
    Spec("rremainder", lambda m, a: 7 % a, [(I(4, low=1, high=5),), (T(3, low=1, high=3),)],
         ops=["remainder"], grad=False),  # torch cannot differentiate remainder(number, x)
    Spec("fmod", lambda m, a, b: m.fmod(a, b),
         [(T(3, 4, low=-9, high=9), T(4, low=0.5, high=3)),
          (T(5, low=-9, high=9), T(5, low=-3, high=-0.5)), (T(low=-9, high=9), T(3, low=1)),
          (T(3, low=-5, high=5), -1.5)] + INT_PAIRS),
    Spec("pow_tensor_scalar", lambda m, a: (a ** 3, m.pow(a, 2), a ** 0, a ** -1, a ** 1),
         unary(0.5, 2) + [(T(4, low=-2, high=2),)], ops=["pow_tensor_scalar"]),
    Spec("pow_fractional", lambda m, a: (a ** 2.5, m.pow(a, 0.5)), unary(0.5, 2),
         ops=["pow_tensor_scalar"]),
    Spec("pow_int", lambda m, a: (a ** 2, a ** 2.5, a ** 0, a ** True, a ** False),
         INTS + BOOLS, ops=["pow_tensor_scalar"]),
    Spec("square", lambda m, a: (m.square(a), a.square()), unary() + INTS + BOOLS,
         ops=["pow_tensor_scalar"]),
    Spec("pow_tensor_tensor", lambda m, a, b: (a.abs() + 0.5) ** b,
         binary() + [(T(3), T(dtype="float64"))], ops=["pow_tensor_tensor"]),
    Spec("pow_tensor_tensor_edges", lambda m, a, b: a ** b,
         [(np.array([0.0, 0.0, 2.0, -1.0, -2.0]), np.array([0.0, 2.0, 0.0, 2.0, 3.0]))],
         ops=["pow_tensor_tensor"], gradcheck=False),
    Spec("pow_int_tensor", lambda m, a, b: (a ** b, m.pow(a, b.abs())),
         [(I(6, low=-3, high=4), I(6, low=-3, high=4)),
          (np.array([2, 1, -1, 0, 3, -1], dtype=np.int32),
           np.array([-1, -1, -3, -1, -2, -2], dtype=np.int32)),
          (I(4, dtype="uint8", low=0, high=5), I(4, dtype="uint8", low=0, high=4)),
          (T(3, low=0.5), I(3, low=-2, high=3)), (I(3, low=1, high=3), T(3, low=-1, high=1))],
         ops=["pow_tensor_tensor"]),
    Spec("pow_scalar_tensor", lambda m, a: (2 ** a, m.pow(2.5, a), m.pow(0.5, a), -1.5 ** a),
         unary() + [(I(5, low=0, high=5),), (I(5, low=-3, high=3),), (B(4),)],
         ops=["pow_scalar_tensor"]),
    Spec("pow_zero_base", lambda m, a: m.pow(0.0, a),
         [(T(3, 4),), (np.array([-1.0, 0.0, 2.0]),), (I(4, low=0, high=3),)],
         ops=["pow_scalar_tensor"], gradcheck=False),
    Spec("float_power", lambda m, a, b: (m.float_power(a.abs() + 0.5, b),
                                         m.float_power(a.abs() + 0.5, 2), m.float_power(2, b)),
         binary()[:4] + [(I(3, low=1), I(3, low=-2, high=3))], ops=["pow_tensor_tensor"]),

    # ------------------------------------------------------------------ other binary math
    Spec("atan2", lambda m, a, b: (m.atan2(a, b), m.arctan2(a, b)),
         binary() + [(I(3, low=-3, high=3), I(3, low=1)), (B(2), B(2))]),
    Spec("hypot", lambda m, a, b: m.hypot(a, b), binary()),
    Spec("maximum_minimum", lambda m, a, b: (m.maximum(a, b), m.minimum(a, b)),
         binary() + INT_PAIRS + [(B(3), B(3))], ops=["maximum", "minimum"]),
    Spec("maximum_ties_nan", lambda m, a, b: (m.maximum(a, b), m.minimum(a, b)),
         [(np.array([1.0, 2.0, 3.0, np.nan, 1.0]), np.array([1.0, 3.0, 2.0, 1.0, np.nan]))],
         ops=["maximum", "minimum"], gradcheck=False),
    Spec("fmax_fmin", lambda m, a, b: (m.fmax(a, b), m.fmin(a, b)),
         binary() + INT_PAIRS + [(np.array([1.0, 2.0, 3.0, np.nan, 1.0, np.nan]),
                                  np.array([1.0, 3.0, 2.0, 1.0, np.nan, np.nan]))],
         ops=["fmax", "fmin"]),
    Spec("logaddexp", lambda m, a, b: (m.logaddexp(a, b), m.logaddexp2(a, b)),
         binary() + [(T(4, low=-200, high=200), T(4, low=-200, high=200)),
                     (T(3, dtype="float64", low=-800, high=800), T(3, dtype="float64"))],
         ops=["logaddexp", "logaddexp2"]),
    Spec("copysign", lambda m, a, b: (m.copysign(a, b), m.copysign(a, -1.5)),
         binary() + [(I(4, low=-3, high=3), I(4, low=-3, high=3)),
                     (np.array([0.0, -0.0, 2.0, 1.0]), np.array([1.0, -1.0, -3.0, 2.0]))]),
    Spec("nextafter", lambda m, a, b: m.nextafter(a, b),
         binary() + [(np.array([0.7, 1.3, -2.0]), np.array([0.7, 2.0, -2.0]))]),
    Spec("xlogy", lambda m, a, b: (m.xlogy(a, b), m.xlogy(2, b), m.xlogy(a, 3.0)),
         binary(0.5, 3) + [(I(3, low=0, high=3), I(3, low=1)),
                           (np.array([0.0, 0.0, 2.0, 1.0]), np.array([0.0, 2.0, 3.0, np.nan]))]),
    Spec("heaviside", lambda m, a, b: m.heaviside(a, b),
         [(T(3, 4), T(4)), (np.array([-1.0, 0.0, 2.0, np.nan, 0.0]), np.array([0.5])),
          (np.array([-1, 0, 2]), np.array([7])), (T(0, 3), T(3))], grad=False),

    # --------------------------------------------------------------------- three inputs
    Spec("lerp", lambda m, a, b: (m.lerp(a, b, 0.3), a.lerp(b, 0.7), m.lerp(a, b, 2.0)),
         binary()[:4] + [(T(3, dtype="float64"), T(3, dtype="float64"))]),
    Spec("lerp_tensor", lambda m, a, b, w: m.lerp(a, b, w),
         [(T(3, 4), T(4), T(3, 1, low=-0.5, high=1.5)), (T(), T(2), T(2, 1)),
          (T(3), T(3), T(dtype="float64"))], ops=["lerp_tensor"]),
    Spec("addcmul", lambda m, a, b, c: (m.addcmul(a, b, c), a.addcmul(b, c, value=-0.5)),
         [(T(3, 4), T(4), T(3, 1)), (T(), T(2, 3), T(3)), (T(0, 2), T(2), T(2)),
          (T(3, t=True), T(3), T(dtype="float64"))]),
    Spec("addcmul_int", lambda m, a, b, c: (m.addcmul(a, b, c, value=2), m.addcmul(a, b, c,
                                                                                   value=2.5)),
         [(I(3), I(3), I(3)), (I(3), T(3), I(3))], ops=["addcmul"]),
    Spec("addcdiv", lambda m, a, b, c: (m.addcdiv(a, b, c), a.addcdiv(b, c, value=2)),
         [(T(3, 4), T(4), T(3, 1, low=0.5)), (T(), T(2, 3), T(3, low=0.5)),
          (I(3), T(3), T(3, low=0.5))]),
    Spec("addcdiv_mixed", lambda m, a, b, c: m.addcdiv(a, b, c, value=2),
         [(T(3), T(3), I(3, low=1)), (I(3), I(3), T(3, low=0.5))], ops=["addcdiv"],
         grad=False),  # torch's own backward fails for an integer divisor
    Spec("where", lambda m, c, a, b: (m.where(c, a, b), a.where(c, b)),
         [(B(3, 4), T(3, 4), T(4)), (B(2, 3), T(), T(2, 1)), (B(0, 3), T(3), T(0, 3)),
          (B(3), T(3, dtype="float64"), T(3)), (B(3), I(3), T(3)), (B(2), I(2), B(2))]),
    Spec("where_scalars", lambda m, c, a: (m.where(c, a, 0.0), m.where(c, 2, a),
                                           m.where(c, 1.0, 0), m.where(c, 1, 0),
                                           m.where(c, True, 2.5)),
         [(B(3, 2), T(3, 2)), (B(3), I(3)), (B(3), B(3))], ops=["where"]),

    # ---------------------------------------------------------------------- comparisons
    Spec("compare", lambda m, a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b),
         [(I(3, 4), I(4)), (T(3), 0.5), (T(2, 3), T(3)), (T(), T(3)), (T(0, 2), T(2)),
          (B(3), B(3)), (I(3, dtype="uint8"), -1), (I(3), 2.5), (SPECIALS, SPECIALS[::-1])],
         ops=["eq", "ne", "lt", "le", "gt", "ge"]),
    Spec("compare_names", lambda m, a, b: (m.eq(a, b), m.ne(a, b), m.not_equal(a, b),
                                           m.lt(a, b), m.less(a, b), m.le(a, b),
                                           m.less_equal(a, b), m.gt(a, b), m.greater(a, b),
                                           m.ge(a, b), m.greater_equal(a, b), a.greater(1)),
         [(I(3, 4), I(4)), (T(3, t=True), T(3))], ops=["eq", "ne", "lt", "le", "gt", "ge"]),
    Spec("equal", lambda m, a, b: (m.equal(a, b), a.equal(a), m.equal(a, a.clone()),
                                   m.equal(a, a + 1)),
         [(T(3), T(3)), (I(3), I(3)), (T(3), I(3)), (T(2, 3), T(3)), (SPECIALS, SPECIALS)],
         ops=["eq", "add"]),
    Spec("isclose", lambda m, a, b: (m.isclose(a, b), m.isclose(a, b, rtol=0, atol=0.5),
                                     m.isclose(a, b, equal_nan=True), m.allclose(a, a),
                                     m.allclose(a, b, atol=10.0)),
         [(T(3, 4), T(4)), (SPECIALS, SPECIALS), (SPECIALS, SPECIALS[::-1]),
          (I(4, low=0, high=3), I(4, low=0, high=3)),
          (I(4, dtype="uint8", low=0, high=3), I(4, dtype="uint8", low=0, high=3))],
         ops=["isclose"], grad=False),
    Spec("isclose_near", lambda m, a: (m.isclose(a, a + 1e-6), m.isclose(a, a * (1 + 2e-5)),
                                       m.allclose(a, a + 1e-3)),
         [(T(3, 4),), (T(5, dtype="float64"),)], ops=["isclose"], grad=False),

    # ---------------------------------------------------------------- logical and bitwise
    Spec("logical", lambda m, a, b: (m.logical_and(a, b), m.logical_or(a, b),
                                     m.logical_xor(a, b), m.logical_not(a), a.logical_not()),
         [(B(3, 4), B(4)), (T(3), I(3, low=0, high=2)), (SPECIALS, SPECIALS[::-1]),
          (I(0, 3), B(3)), (B(), T(2, 2, t=True))],
         ops=["logical_and", "logical_or", "logical_xor", "logical_not"]),
    Spec("bitwise", lambda m, a, b: (a & b, a | b, a ^ b, ~a, m.bitwise_and(a, b),
                                     m.bitwise_or(a, b), m.bitwise_xor(a, b),
                                     m.bitwise_not(a)),
         [(I(3, 4, low=-9, high=9), I(4, low=-9, high=9)), (B(3), B(3)),
          (I(4, dtype="uint8", low=0, high=255), I(4, dtype="int16", low=-99, high=99)),
          (I(4, dtype="int8", low=-9, high=9), 5), (B(3), True), (I(0, 2), I(2))],
         ops=["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]),
    Spec("rbitwise", lambda m, a: (6 & a, 6 | a, 6 ^ a, True & a), [(I(3),), (B(3),)],
         ops=["bitwise_and", "bitwise_or", "bitwise_xor"]),
    Spec("shifts", lambda m, a, b: (a << b, a >> b, m.bitwise_left_shift(a, b),
                                    m.bitwise_right_shift(a, b)),
         [(I(3, 4, low=-99, high=99), I(4, low=0, high=8)),
          (np.array([1, 2, -2, -128, 64, 5], dtype=np.int8),
           np.array([7, 8, -1, 9, 8, 3], dtype=np.int8)),
          (np.array([255, 2, 7], dtype=np.uint8), np.array([9, 7, 1], dtype=np.uint8)),
          (np.array([1, -5, 3]), np.array([63, 64, 65])), (I(3, low=-9, high=9), 2),
          (B(3), I(3, low=0, high=3))],
         ops=["bitwise_left_shift", "bitwise_right_shift"]),
    Spec("rshifts", lambda m, a: (2 << a, 1024 >> a), [(I(3, low=0, high=9),)],
         ops=["bitwise_left_shift", "bitwise_right_shift"]),

    # ------------------------------------------------------------------- classification
    Spec("classify", lambda m, a: (m.isnan(a), m.isinf(a), m.isfinite(a), m.isposinf(a),
                                   m.isneginf(a), m.isreal(a), m.signbit(a), a.isnan()),
         [(SPECIALS,), (SPECIALS.astype(np.float16),), (SPECIALS.astype(np.float64),),
          (I(4, low=-3, high=3),), (I(3, dtype="uint8"),), (B(3),), (T(0, 2),), (T(),)],
         ops=["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit"]),
]

# Ops behind the fast paths: alpha variants, scalar operands, fused activation backwards
SPECS += [
    Spec("add_alpha", lambda m, a, b: (m.add(a, b, alpha=2), a.sub(b, alpha=0.5)),
         [(T(3, 4), T(4)), (T(2), 3.0)], ops=["add_alpha", "sub_alpha"]),
    Spec("scalar_operand", lambda m, a: (a * 2.5, 3 * a, a / 4, a.mul(2), m.div(a, 0.5)),
         [(T(3, 4),), (T(),), (I(3),)], ops=["mul_scalar", "div_scalar"]),
    Spec("activation_double_backward", lambda m, x: _second_derivatives(m, x),
         [(T(5),), (T(2, 3, dtype="float64"),)],
         ops=["tanh_backward", "sigmoid_backward", "threshold_backward"]),
]


def _second_derivatives(m, x):
    """First derivatives with create_graph run the fused backward ops as forward ops."""
    outs = []
    for f in (m.tanh, m.sigmoid, m.relu):
        y = f(x * 1.5)
        (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
        outs.append(g)
    return outs

SPECS += [
    Spec("gcd", lambda m, a, b: (m.gcd(a, b), a.gcd(b), m.gcd(a - 2, b.int())),
         [(I(3, 4, low=-9, high=9), I(4, low=-9, high=9)), (I(), I(2, 3)), (I(0, 3), I(3)),
          (I(3, dtype="uint8", high=20), I(3, dtype="uint8", high=20)),
          (I(4, dtype="int8", low=-20, high=20), I(4, dtype="int16", low=-20, high=20))],
         grad=False),
    Spec("lcm", lambda m, a, b: (m.lcm(a, b), a.lcm(b)),
         [(I(3, 4, low=-9, high=9), I(4, low=-9, high=9)), (I(5, dtype="int8", high=30),
                                                              I(5, dtype="int8", high=30))],
         grad=False),
    Spec("ldexp", lambda m, a, e: (m.ldexp(a, e), a.ldexp(e), m.ldexp(e, e)),
         [(T(3, 4), I(4, low=-3, high=4)), (T(2, 3, dtype="float64"), I(2, 3, dtype="int32")),
          (T(3, dtype="float16"), I(3)), (T(), I(2))]),
    Spec("ldexp_float_exponent", lambda m, a, e: m.ldexp(a, e), [(T(3, 4), T(4))],
         ops=["ldexp"]),
    Spec("frexp", lambda m, a: tuple(m.frexp(a)) + tuple((a * 1000).frexp()),
         [(T(3, 4),), (T(5, dtype="float64"),), (T(4, dtype="float16"),),
          (T(4, dtype="bfloat16"),), (T(0, 2),), (T(),)]),
    Spec("renorm", lambda m, a: (m.renorm(a, 2, 0, 1.0), a.renorm(1, 1, 2.0),
                                 m.renorm(a, float("inf"), -1, 0.5), m.renorm(a, 3.5, 0, 100.0)),
         [(T(3, 4),), (T(2, 3, 4, dtype="float64"),), (T(4, 3, t=True),)]),
]

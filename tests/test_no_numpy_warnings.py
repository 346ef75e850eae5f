"""No NumPy RuntimeWarning reaches the user where torch is silent: a sweep of ops over special
values (0, -0, inf, -inf, nan, huge, tiny) with warnings as errors, in both libraries, forward
and backward; the same values with the default warning filters print nothing either.

The few warnings torch itself gives (std/var with no degrees of freedom) are expected from
both libraries alike. The user's own NumPy code keeps warning as NumPy does.
"""
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

SPECIALS = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e38, -1e38, 1e-45, 89.0,
            -89.0, 1000.0]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
UNARY = """abs acos acosh asin asinh atan atanh ceil cos cosh deg2rad erf erfc erfinv exp exp2
expm1 floor frac log log10 log1p log2 neg rad2deg reciprocal round rsqrt sigmoid sign sgn sin
sinh sqrt square tan tanh trunc logit nan_to_num isnan isinf isfinite signbit relu""".split()
BINARY = """add sub mul div true_divide floor_divide remainder fmod pow atan2 hypot maximum
minimum fmax fmin logaddexp logaddexp2 xlogy copysign nextafter float_power eq lt""".split()
REDUCTIONS = """sum mean prod logsumexp softmax log_softmax cumsum cumprod amax amin nansum
nanmean""".split()
ACTIVATIONS = "softplus gelu silu elu selu celu mish logsigmoid hardswish tanhshrink".split()


def _calls(m, dtype):
    """(label, thunk) for every op call of the sweep in library `m`."""
    x = m.tensor(SPECIALS, dtype=getattr(m, dtype))
    y = x.flip(0)
    F = m.nn.functional
    calls = [(n, lambda n=n: getattr(m, n)(x)) for n in UNARY]
    calls += [(n, lambda n=n: getattr(m, n)(x, y)) for n in BINARY]
    calls += [(n, lambda n=n: getattr(m, n)(x, 0)) for n in REDUCTIONS]
    calls += [(f"F.{n}", lambda n=n: getattr(F, n)(x)) for n in ACTIVATIONS]
    calls += [
        ("0 * inf", lambda: m.tensor(0.0, dtype=x.dtype) * math.inf),
        ("inf - inf", lambda: m.tensor(math.inf, dtype=x.dtype) - math.inf),
        ("x / 0", lambda: x / 0), ("1 / x", lambda: 1 / x), ("x * 0", lambda: x * 0.0),
        ("div floor", lambda: m.div(x, y, rounding_mode="floor")),
        ("div trunc", lambda: m.div(x, y, rounding_mode="trunc")),
        ("matmul", lambda: x[None] @ y[:, None]), ("norm", lambda: x.norm()),
        ("std dim", lambda: x.reshape(1, -1).std(1)),
        ("bce with logits", lambda: F.binary_cross_entropy_with_logits(x, m.ones_like(x))),
        ("mse", lambda: F.mse_loss(x, y)), ("normalize", lambda: F.normalize(x[None], dim=1)),
        ("layer_norm", lambda: F.layer_norm(x[None], (x.shape[0],))),
        ("cosine_similarity", lambda: F.cosine_similarity(x[None], y[None])),
        ("cross_entropy", lambda: F.cross_entropy(x[None], m.tensor([0]))),
        ("in place", lambda: x.clone().mul_(0.0).add_(math.inf).sub_(math.inf)),
        ("print", lambda: repr(x)), ("tolist", lambda: x.tolist()),
    ]
    calls += [(f"to {t}", lambda t=t: x.to(getattr(m, t)))
              for t in ("int64", "int32", "int16", "int8", "uint8", "bool")]
    calls += [(f"{n} backward", lambda n=n: _backward(m, x, n))
              for n in ("exp", "log", "sqrt", "rsqrt", "reciprocal", "sigmoid", "tanh", "pow")]
    return calls


def _backward(m, x, name):
    t = x.detach().clone().requires_grad_()
    out = t ** 2 if name == "pow" else getattr(t, name)()
    (out * 2).sum().backward()
    return t.grad


def _warns(fn):
    """The warning fn raises with warnings as errors, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            fn()
        except Warning as w:
            return w
        except Exception:  # an error torch or ember raise for the op itself is not the subject
            return None
    return None


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values_warn_as_torch(dtype):
    seen = {}
    for (label, e_fn), (_, t_fn) in zip(_calls(ember, dtype), _calls(torch, dtype)):
        e_warning, t_warning = _warns(e_fn), _warns(t_fn)
        if type(e_warning) is not type(t_warning):
            seen[label] = (repr(e_warning), repr(t_warning))
    assert not seen, f"ember vs torch warnings: {seen}"


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_integer_ops_warn_as_torch(dtype):
    def calls(m):
        a = m.tensor([0, 1, 2, 5, 100], dtype=getattr(m, dtype))
        z = m.zeros(5, dtype=a.dtype)
        return [lambda: a / z, lambda: a.float() / 0, lambda: a * 100, lambda: (a * 100).sum(),
                lambda: a.sqrt(), lambda: a.log(), lambda: a.reciprocal(), lambda: a ** 2,
                lambda: m.tensor([math.nan, math.inf, -math.inf]).to(a.dtype)]
    for k, (e_fn, t_fn) in enumerate(zip(calls(ember), calls(torch))):
        assert type(_warns(e_fn)) is type(_warns(t_fn)), k


def test_nothing_is_printed_with_the_default_filters():
    """A fresh interpreter with Python's default warning filters: the sweep prints nothing
    (the std/var degrees-of-freedom warnings excepted, which torch prints too)."""
    script = ("import tests.test_no_numpy_warnings as t, ember\n"
              "for dtype in t.FLOATS:\n"
              "    for label, fn in t._calls(ember, dtype):\n"
              "        try:\n"
              "            fn()\n"
              "        except Exception:\n"
              "            pass\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    printed = [line for line in done.stderr.splitlines() if "Warning" in line and
               "degrees of freedom" not in line]
    assert printed == []


@pytest.mark.parametrize("action", ["always", "default"])
def test_recorded_warnings_see_nothing(action):
    """The idiom of torch's own tests: record with "always" (or "default"), expect nothing."""
    for dtype in ("float32", "float16"):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter(action)
            for label, fn in _calls(ember, dtype):
                try:
                    fn()
                except Exception:
                    pass
        assert [str(w.message) for w in seen if "degrees of freedom" not in str(w.message)] \
            == []


def test_the_users_own_numpy_code_still_warns():
    with pytest.warns(RuntimeWarning, match="divide by zero encountered") as seen:
        np.array([1.0]) / 0
    assert seen[0].filename == __file__
    with pytest.warns(RuntimeWarning, match="invalid value encountered"):
        np.sum(np.array([np.inf, -np.inf]))

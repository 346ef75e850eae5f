"""repr/str of tensors against torch's actual strings ('torch.' read as 'ember.').

Each case builds the same values in both libraries from one NumPy array; print options are
set identically in both and restored afterwards.
"""
import ml_dtypes
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1234)


def _pair(a, dtype=None):
    """The same values as (ember tensor, torch tensor)."""
    a = np.asarray(a)
    if dtype == "bfloat16":
        e = ember.from_numpy(a.astype(ml_dtypes.bfloat16))
        t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
        return e, t
    if dtype is not None:
        a = np.asarray(a.astype(dtype))
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _same(e, t):
    expected = repr(t).replace("torch.", "ember.")
    assert repr(e) == expected
    assert str(e) == str(t).replace("torch.", "ember.")


@pytest.fixture
def options():
    """Set print options in both libraries; restore the defaults afterwards."""
    def both(**kwargs):
        torch.set_printoptions(**kwargs)
        ember.set_printoptions(**kwargs)
    yield both
    torch.set_printoptions(profile="default")
    ember.set_printoptions(profile="default")


FLOAT_CASES = {
    "scale-1e-6": RNG.standard_normal((3, 4)) * 1e-6,
    "scale-1e-3": RNG.standard_normal((3, 4)) * 1e-3,
    "scale-0.1": RNG.standard_normal((3, 4)) * 0.1,
    "scale-1": RNG.standard_normal((3, 4)),
    "scale-1e3": RNG.standard_normal((3, 4)) * 1e3,
    "scale-1e5": RNG.standard_normal((2, 5)) * 1e5,
    "scale-1e9": RNG.standard_normal((3, 4)) * 1e9,
    "integers": np.arange(12.0).reshape(3, 4) - 5,
    "big-integers": np.array([1e10, 1.0, 3.0]),
    "ratio-over-1000": np.array([1.0, 1001.0]),
    "ratio-1000": np.array([1.0, 1000.0]),
    "below-1e-4": np.array([5e-5, 1.0]),
    "negative-zero": np.array([1.0, -0.0, 0.0]),
    "negative-zero-frac": np.array([1.5, -0.0]),
    "nan-inf": np.array([np.nan, 1.5, -np.inf, np.inf]),
    "nan-inf-int": np.array([np.nan, 2.0, -np.inf]),
    "only-zeros": np.zeros(4),
    "only-nan": np.array([np.nan, np.nan]),
    "scalar": np.array(3.0),
    "scalar-frac": np.array(-2.5),
    "scalar-tiny": np.array(1e-9),
    "scalar-nan": np.array(np.nan),
    "3d": RNG.standard_normal((2, 3, 4)),
    "4d": RNG.standard_normal((2, 2, 1, 2)),
    "size-one-dims": RNG.standard_normal((3, 1, 2)),
    "wrap": RNG.standard_normal(30),
    "wrap-2d": RNG.standard_normal((3, 25)) * 100,
    "summary-1d": RNG.standard_normal(2000),
    "summary-2d": RNG.standard_normal((40, 50)),
    "summary-3d": RNG.standard_normal((11, 11, 11)),
    "summary-arange": np.arange(1001.0),
    "summary-one-long-dim": RNG.standard_normal((2, 600)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(FLOAT_CASES))
def test_floats(name, dtype):
    with np.errstate(over="ignore"):
        _same(*_pair(FLOAT_CASES[name], dtype))


INT_CASES = {
    "small": RNG.integers(-100, 100, (5, 6)),
    "wide": RNG.integers(0, 10**12, 40),
    "scalar": np.array(5),
    "negative-scalar": np.array(-7),
    "summary": RNG.integers(-9, 9, (30, 40)),
    "3d": RNG.integers(0, 10, (2, 2, 3)),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("name", list(INT_CASES))
def test_integers(name, dtype):
    a = INT_CASES[name]
    if dtype != "int64":
        info = np.iinfo(dtype)
        a = np.clip(a, info.min, info.max)
    _same(*_pair(a, dtype))


@pytest.mark.parametrize("a", [np.array([True, False]), np.array(True), np.array(False),
                               RNG.random((3, 3)) < 0.5, RNG.random(1500) < 0.5],
                         ids=["vector", "true", "false", "matrix", "summary"])
def test_bools(a):
    _same(*_pair(a))


@pytest.mark.parametrize("shape,dtype", [((0,), "float32"), ((0, 3), "float32"),
                                         ((2, 0, 4), "float64"), ((0,), "int64"),
                                         ((0, 2), "bool"), ((0,), "float16")])
def test_empty(shape, dtype):
    _same(*_pair(np.zeros(shape, dtype=dtype)))


def test_requires_grad_and_grad_fn():
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    e = ember.from_numpy(a.copy()).requires_grad_()
    t = torch.from_numpy(a.copy()).requires_grad_()
    _same(e, t)
    _same(e * 2, t * 2)
    _same(e * e, t * t)
    e64 = ember.from_numpy(a.astype(np.float64)).requires_grad_()
    t64 = torch.from_numpy(a.astype(np.float64)).requires_grad_()
    _same(e64, t64)
    _same(e64 * 2, t64 * 2)


def test_suffix_wraps_to_a_new_line():
    a = RNG.standard_normal(7) * 1e-5  # a long last line: the suffixes must wrap
    e = ember.from_numpy(a.copy()).requires_grad_()
    t = torch.from_numpy(a.copy()).requires_grad_()
    _same(e, t)
    e, t = _pair(RNG.standard_normal((2, 6)) * 1e4, "float16")
    _same(e, t)


def test_default_dtype_changes_the_suffix():
    a = np.array([1.5, 2.0])
    old_t, old_e = torch.get_default_dtype(), ember.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        for dtype in ("float32", "float64"):
            _same(*_pair(a, dtype))
        _same(*_pair(np.zeros(0), "float64"))
        _same(*_pair(np.zeros(0), "float32"))
    finally:
        torch.set_default_dtype(old_t)
        ember.set_default_dtype(old_e)


@pytest.mark.parametrize("kwargs", [
    dict(precision=2), dict(precision=8), dict(precision=0), dict(sci_mode=True),
    dict(sci_mode=False), dict(linewidth=40), dict(linewidth=200), dict(threshold=10),
    dict(threshold=10, edgeitems=1), dict(threshold=10, edgeitems=0), dict(profile="short"),
    dict(profile="full"), dict(profile="short", precision=5),
], ids=str)
@pytest.mark.parametrize("name", ["scale-1", "scale-1e-6", "integers", "nan-inf", "wrap",
                                  "summary-2d", "only-zeros", "scalar-frac", "summary-1d"])
def test_print_options(options, kwargs, name):
    options(**kwargs)
    _same(*_pair(FLOAT_CASES[name], "float32"))


def test_print_options_on_integers(options):
    options(threshold=5, edgeitems=2, linewidth=30)
    _same(*_pair(INT_CASES["summary"]))
    _same(*_pair(RNG.random((4, 5)) < 0.5))


def test_get_printoptions_and_context(options):
    import torch._tensor_str as torch_str

    from ember import _tensor_str as ember_str

    assert ember_str.get_printoptions() == torch_str.get_printoptions()
    options(precision=3, threshold=20, edgeitems=2, linewidth=60, sci_mode=True)
    assert ember_str.get_printoptions() == torch_str.get_printoptions()
    with ember_str.printoptions(precision=1), torch_str.printoptions(precision=1):
        assert ember_str.get_printoptions() == torch_str.get_printoptions()
        _same(*_pair(FLOAT_CASES["scale-1"]))
    assert ember_str.PRINT_OPTS.precision == 3


def test_profile_short_then_default(options):
    options(profile="short")
    options(profile="default")
    _same(*_pair(FLOAT_CASES["scale-1"], "float32"))


def test_unknown_profile_raises():
    with pytest.raises(ValueError):
        ember.set_printoptions(profile="tiny")


def test_views_and_non_contiguous():
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    e, t = _pair(a)
    _same(e.t(), t.t())
    _same(e[:, 1], t[:, 1])
    _same(e[1:3], t[1:3])


def test_format_uses_print_width_not_repr():
    e, t = _pair(np.array(2.5, dtype=np.float32))
    assert f"{e}" == f"{t}".replace("torch.", "ember.")
    assert f"{e:.3f}" == f"{t:.3f}"


def test_device_suffix_comes_first():
    """A non-CPU tensor gets torch's `device='cuda:0'` suffix before dtype and requires_grad.
    (Built on a host array: printing only reads values, so no GPU is needed.)"""
    for dtype, requires_grad in (("float32", True), ("float64", False)):  # no line wrap
        a = np.array([1.5, -2.0], dtype=dtype)
        e = ember.Tensor._make(a.copy(), requires_grad, device=ember.device("cuda", 0))
        t = torch.from_numpy(a.copy()).requires_grad_(requires_grad)
        cpu_text = repr(t).replace("torch.", "ember.")
        end = cpu_text.rindex("]") + 1  # torch puts the device before the other suffixes
        expected = cpu_text[:end] + ", device='cuda:0'" + cpu_text[end:]
        assert repr(e) == expected

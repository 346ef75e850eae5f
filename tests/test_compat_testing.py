"""ember.testing.assert_close and make_tensor against torch.testing: the same verdicts, the
same messages (with ember's names where torch prints its own), the same defaults."""
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _verdict(lib, actual, expected, **kwargs):
    try:
        lib.testing.assert_close(actual(lib), expected(lib), **kwargs)
    except Exception as e:  # noqa: BLE001 -- the type and message are what is compared
        return type(e).__name__, str(e).replace("torch.", "LIB.").replace("ember.", "LIB.")
    return "ok"


T = lambda values, **kw: lambda lib: lib.tensor(values, **kw)  # noqa: E731
V = lambda value: lambda lib: value  # noqa: E731
CASES = {
    "close_floats": (T([1.0, 2.0, 3.0]), T([1.0, 2.0 + 1e-6, 3.0]), {}),
    "one_differs": (T([1.0, 2.0, 3.0]), T([1.0, 2.5, 3.0]), {}),
    "2d": (T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.0], [3.0, 5.0]]), {}),
    "ints": (T([1, 2]), T([1, 3]), {}),
    "bools": (T([True, False]), T([True, True]), {}),
    "python_floats": (V(1.0), V(1.5), {}),
    "python_ints": (V(1), V(2), {}),
    "python_bools": (V(True), V(False), {}),
    "shape": (lambda lib: lib.ones(2), lambda lib: lib.ones(3), {}),
    "dtype": (lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.float64), {}),
    "dtype_unchecked": (lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.float64),
                        {"check_dtype": False}),
    "nested_list": (lambda lib: [lib.ones(2), lib.ones(2)],
                    lambda lib: [lib.ones(2), lib.zeros(2)], {}),
    "lengths": (V([1, 2]), V([1, 2, 3]), {}),
    "mapping": (V({"a": 1.0}), V({"a": 2.0}), {}),
    "keys": (V({"a": 1}), V({"b": 1}), {}),
    "tensor_vs_float": (lambda lib: lib.ones(2), V(1.0), {}),
    "only_rtol": (lambda lib: lib.ones(2), lambda lib: lib.ones(2), {"rtol": 1e-3}),
    "nan": (T([math.nan]), T([math.nan]), {}),
    "nan_equal": (T([math.nan]), T([math.nan]), {"equal_nan": True}),
    "custom_msg": (lambda lib: lib.ones(2), lambda lib: lib.zeros(2), {"msg": "custom"}),
    "callable_msg": (lambda lib: lib.ones(2), lambda lib: lib.zeros(2),
                     {"msg": lambda m: "X" + m[:10]}),
    "numpy": (V(np.ones(2)), V(np.zeros(2)), {}),
    "tensor_vs_numpy": (lambda lib: lib.ones(2), V(np.ones(2)), {}),
    "stride": (lambda lib: lib.ones(4, 4).t(), lambda lib: lib.ones(4, 4),
               {"check_stride": True}),
    "zero_dim": (lambda lib: lib.ones(()), lambda lib: lib.zeros(()), {}),
    "inf": (T([1.0, math.inf]), T([1.0, 2.0]), {}),
    "equal_infs": (T([1.0, math.inf]), T([1.0, math.inf]), {}),
    "relative_inf": (T([0.0, 0.0]), T([0.0, 1.0]), {}),
    "loose_tolerance": (T([1.0]), T([1.1]), {"rtol": 0.2, "atol": 0.0}),
    "bfloat16": (lambda lib: lib.ones(3, dtype=lib.bfloat16),
                 lambda lib: lib.full((3,), 1.01, dtype=lib.bfloat16), {}),
    "parameter_vs_tensor": (lambda lib: lib.nn.Parameter(lib.ones(2)), lambda lib: lib.ones(2),
                            {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_assert_close_agrees_with_torch(case):
    actual, expected, kwargs = CASES[case]
    assert _verdict(ember, actual, expected, **kwargs) == _verdict(torch, actual, expected,
                                                                    **kwargs)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int32", "uint8",
                                   "bool"])
def test_make_tensor_ranges_and_dtypes(dtype):
    t = ember.testing.make_tensor((50, 40), dtype=getattr(ember, dtype), device="cpu")
    ref = torch.testing.make_tensor((50, 40), dtype=getattr(torch, dtype), device="cpu")
    assert t.shape == (50, 40) and str(t.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    values = t.float() if dtype != "bool" else t.long()
    if dtype == "bool":
        assert set(values.unique().tolist()) == {0, 1}
    elif dtype == "uint8":
        assert 0 <= values.min().item() and values.max().item() <= 9
    else:
        assert -9 <= values.min().item() and values.max().item() <= 9
    low_high = ember.testing.make_tensor(100, dtype=getattr(ember, dtype), device="cpu",
                                         low=1, high=3) if dtype != "bool" else None
    if low_high is not None:
        assert 1 <= low_high.float().min().item() and low_high.float().max().item() <= 3


def test_make_tensor_options():
    t = ember.testing.make_tensor(4, 6, dtype=ember.float32, device="cpu", noncontiguous=True,
                                  exclude_zero=True, requires_grad=True)
    assert not t.is_contiguous() and t.requires_grad and bool((t != 0).all())
    ints = ember.testing.make_tensor(200, dtype=ember.int64, device="cpu", low=-1, high=2,
                                     exclude_zero=True)
    assert 0 not in ints.tolist()
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 1"):
            lib.testing.make_tensor(2, dtype=lib.float32, device="cpu", low=3, high=1)

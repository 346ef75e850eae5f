"""Pooling vs torch beyond the op table (tests/specs/nn_spatial.py): max/avg/adaptive/lp pools
and max_unpool in 1-3 dims with ceil_mode, padding, dilation, non-square kernels, odd sizes,
unbatched and empty inputs; indices (ties, NaN, -inf windows); dtypes; torch's errors; the
layers' repr and attributes; gradcheck and double backward in float64.
"""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
NAN, INF = float("nan"), float("inf")


def R(*shape):
    return rng.standard_normal(shape)


def both_precisions(fn, inputs, **tol):
    """float32 forward (values only) and float64 forward + gradients."""
    check(fn, [a.astype(np.float32) for a in inputs], grad=False, **tol)
    check(fn, [a.astype(np.float64) for a in inputs])


F = lambda m: m.nn.functional  # noqa: E731

MAX_CASES = [
    ("1d", lambda m, x: F(m).max_pool1d(x, 3, 2, 1, return_indices=True), (2, 3, 9)),
    ("1d_ceil_dilation", lambda m, x: F(m).max_pool1d(x, 2, 3, 1, dilation=2, ceil_mode=True,
                                                      return_indices=True), (2, 3, 10)),
    ("1d_unbatched", lambda m, x: F(m).max_pool1d(x, 2, return_indices=True), (3, 7)),
    ("2d", lambda m, x: F(m).max_pool2d(x, 2), (2, 3, 6, 8)),
    ("2d_odd_ceil_pad", lambda m, x: F(m).max_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                     return_indices=True), (2, 3, 7, 9)),
    ("2d_ceil_drops_window", lambda m, x: F(m).max_pool2d(x, 2, 2, 1, ceil_mode=True,
                                                          return_indices=True), (1, 2, 4, 6)),
    ("2d_nonsquare", lambda m, x: F(m).max_pool2d(x, (2, 3), (1, 2), (1, 1), dilation=(2, 1),
                                                  return_indices=True), (2, 1, 6, 7)),
    ("2d_unbatched", lambda m, x: F(m).max_pool2d(x, 2, 1, return_indices=True), (3, 4, 5)),
    ("2d_one_pixel_out", lambda m, x: F(m).max_pool2d(x, (5, 4), return_indices=True),
     (2, 2, 5, 4)),
    ("3d", lambda m, x: F(m).max_pool3d(x, 2, 1, 1, return_indices=True), (1, 2, 3, 4, 3)),
    ("3d_ceil_dilation", lambda m, x: F(m).max_pool3d(x, (2, 2, 3), 2, 1, dilation=(1, 2, 1),
                                                      ceil_mode=True, return_indices=True),
     (2, 1, 5, 6, 7)),
    ("3d_unbatched", lambda m, x: F(m).max_pool3d(x, 2), (2, 4, 4, 4)),
    ("empty_batch", lambda m, x: F(m).max_pool2d(x, 2, return_indices=True), (0, 3, 4, 4)),
    ("with_indices_fn", lambda m, x: F(m).max_pool2d_with_indices(x, 2), (1, 2, 4, 5)),
]


@pytest.mark.parametrize("fn,shape", [pytest.param(f, s, id=n) for n, f, s in MAX_CASES])
def test_max_pool(fn, shape):
    both_precisions(fn, [R(*shape)])


AVG_CASES = [
    ("1d", lambda m, x: F(m).avg_pool1d(x, 3, 2, 1), (2, 3, 9)),
    ("1d_ceil", lambda m, x: F(m).avg_pool1d(x, 3, 2, 1, ceil_mode=True), (2, 3, 8)),
    ("1d_exclude_pad", lambda m, x: F(m).avg_pool1d(x, 4, 3, 2, ceil_mode=True,
                                                    count_include_pad=False), (2, 3, 8)),
    ("2d", lambda m, x: F(m).avg_pool2d(x, 2), (2, 3, 6, 8)),
    ("2d_ceil_pad", lambda m, x: F(m).avg_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 7, 8)),
    ("2d_ceil_pad_exclude", lambda m, x: F(m).avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                         count_include_pad=False),
     (2, 3, 7, 8)),
    ("2d_divisor", lambda m, x: F(m).avg_pool2d(x, (2, 3), (1, 2), (1, 1), divisor_override=4),
     (2, 1, 5, 7)),
    ("2d_unbatched", lambda m, x: F(m).avg_pool2d(x, 2, 1), (3, 4, 5)),
    ("3d", lambda m, x: F(m).avg_pool3d(x, 2, 2, 1, ceil_mode=True, count_include_pad=False),
     (1, 2, 3, 4, 5)),
    ("3d_divisor", lambda m, x: F(m).avg_pool3d(x, (1, 2, 3), divisor_override=3),
     (1, 2, 3, 4, 6)),
    ("empty_batch", lambda m, x: F(m).avg_pool2d(x, 2), (0, 3, 4, 4)),
]


@pytest.mark.parametrize("fn,shape", [pytest.param(f, s, id=n) for n, f, s in AVG_CASES])
def test_avg_pool(fn, shape):
    both_precisions(fn, [R(*shape)])


ADAPTIVE_CASES = [
    ("avg1d", lambda m, x: F(m).adaptive_avg_pool1d(x, 4), (2, 3, 7)),
    ("avg1d_unbatched", lambda m, x: F(m).adaptive_avg_pool1d(x, 3), (3, 7)),
    ("avg2d", lambda m, x: F(m).adaptive_avg_pool2d(x, (3, 4)), (2, 3, 7, 6)),
    ("avg2d_global", lambda m, x: F(m).adaptive_avg_pool2d(x, 1), (2, 3, 5, 6)),
    ("avg2d_even", lambda m, x: F(m).adaptive_avg_pool2d(x, (3, 2)), (2, 3, 6, 8)),
    ("avg2d_none", lambda m, x: F(m).adaptive_avg_pool2d(x, (None, 2)), (2, 3, 5, 7)),
    ("avg2d_upsample", lambda m, x: F(m).adaptive_avg_pool2d(x, (7, 9)), (1, 2, 5, 4)),
    ("avg3d", lambda m, x: F(m).adaptive_avg_pool3d(x, (2, 3, 1)), (1, 2, 5, 4, 3)),
    ("avg_empty_batch", lambda m, x: F(m).adaptive_avg_pool2d(x, 2), (0, 2, 4, 3)),
    ("max1d", lambda m, x: F(m).adaptive_max_pool1d(x, 4, return_indices=True), (2, 3, 7)),
    ("max2d", lambda m, x: F(m).adaptive_max_pool2d(x, (3, 4), return_indices=True),
     (2, 3, 7, 6)),
    ("max2d_unbatched", lambda m, x: F(m).adaptive_max_pool2d(x, 2, True), (3, 5, 5)),
    ("max2d_upsample", lambda m, x: F(m).adaptive_max_pool2d(x, (8, 9), return_indices=True),
     (2, 3, 5, 6)),
    ("max2d_none", lambda m, x: F(m).adaptive_max_pool2d(x, (None, 3)), (1, 2, 4, 7)),
    ("max3d", lambda m, x: F(m).adaptive_max_pool3d(x, (2, 3, 2), return_indices=True),
     (1, 2, 5, 4, 3)),
    ("max_empty_batch", lambda m, x: F(m).adaptive_max_pool2d(x, 2, True), (0, 2, 4, 3)),
]


@pytest.mark.parametrize("fn,shape", [pytest.param(f, s, id=n) for n, f, s in ADAPTIVE_CASES])
def test_adaptive_pool(fn, shape):
    both_precisions(fn, [R(*shape)])


@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).lp_pool2d(x, 2, 3, 2, ceil_mode=True),
    lambda m, x: F(m).lp_pool2d(x, 3, (2, 3)),
    lambda m, x: F(m).lp_pool1d(x[0], 1.5, 2),
    lambda m, x: F(m).lp_pool3d(x.unsqueeze(2), 2, (1, 2, 2)),
])
def test_lp_pool(fn):
    x = np.abs(R(2, 3, 6, 7)) + 0.1  # positive: fractional powers of negatives are NaN
    both_precisions(fn, [x], rtol=1e-5, atol=1e-5)


def test_max_pool_ties_pick_first_in_window_order():
    x = np.array([[[[1, 3, 3, 0], [3, 2, 3, 3], [0, 0, 1, 1], [1, 1, 0, 0]]]], np.float64)
    check(lambda m, x: F(m).max_pool2d(x, 2, 1, return_indices=True), [x])
    check(lambda m, x: F(m).adaptive_max_pool2d(x, 3, return_indices=True), [x])


def test_max_pool_nan_and_minus_inf_like_torch():
    # a NaN wins its window; with several, torch reports the last one
    x = np.array([[[1.0, NAN, 3.0, NAN, 2.0, -1.0]]], np.float32)
    check(lambda m, x: F(m).max_pool1d(x, 4, 2, 1, return_indices=True), [x], grad=False)
    check(lambda m, x: F(m).adaptive_max_pool1d(x, 2, return_indices=True), [x], grad=False)
    # a window of -inf only: the index of its first tap inside the input, not the padding
    y = np.array([[[-INF, -INF, 3.0, -INF, -INF]]], np.float32)
    check(lambda m, x: F(m).max_pool1d(x, 2, 2, 1, return_indices=True), [y], grad=False)
    check(lambda m, x: F(m).max_pool1d(x, 3, 2, 1, dilation=2, ceil_mode=True,
                                       return_indices=True), [y], grad=False)
    z = np.full((1, 1, 3, 3), -INF, np.float32)
    check(lambda m, x: F(m).max_pool2d(x, 2, 2, 1, return_indices=True), [z], grad=False)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_max_pool_integers(dtype):
    x = rng.integers(0, 50, (2, 3, 5, 6)).astype(dtype)
    check(lambda m, x: F(m).max_pool2d(x, 3, 2, 1, return_indices=True), [x])


def test_avg_pool_int64_truncates_like_torch():
    x = rng.integers(-20, 20, (2, 3, 9)).astype(np.int64)
    check(lambda m, x: F(m).avg_pool1d(x, 2, padding=1), [x])
    check(lambda m, x: F(m).avg_pool2d(x.unsqueeze(0), (1, 3), 2, divisor_override=2), [x])


def test_half_precision_pools():
    x = R(2, 3, 6, 6).astype(np.float16)
    check(lambda m, x: F(m).max_pool2d(x, 2), [x], grad=False)
    check(lambda m, x: F(m).avg_pool2d(x, 3, 1, 1), [x], grad=False, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).max_unpool2d(*F(m).max_pool2d(x, 2, return_indices=True), 2),
    lambda m, x: F(m).max_unpool2d(*F(m).max_pool2d(x, 3, 2, 1, return_indices=True), 3, 2, 1,
                                   output_size=(7, 8)),
    lambda m, x: F(m).max_unpool2d(*F(m).max_pool2d(x[0], 2, return_indices=True), 2),
    lambda m, x: F(m).max_unpool1d(*F(m).max_pool1d(x[:, :, 0], 2, return_indices=True), 2,
                                   output_size=[2, 3, 9]),
    # a volume the windows tile exactly: otherwise a maximum in the cropped border gives an
    # index max_unpool rejects (torch raises too)
    lambda m, x: F(m).max_unpool3d(*F(m).max_pool3d(x[:1, :2, :6], 2, return_indices=True),
                                   2),
])
def test_max_unpool(fn):
    both_precisions(fn, [R(2, 3, 7, 8)])


def test_max_unpool_module_matches_torch():
    x = R(2, 3, 6, 7)
    check(lambda m, x: m.nn.MaxUnpool2d(2)(*m.nn.MaxPool2d(2, return_indices=True)(x),
                                           output_size=x.shape), [x])


# ----------------------------------------------------------------------------------------------
# gradcheck and double backward (float64, finite differences)

GRADCHECK = [
    (lambda x: ember.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True), (1, 2, 5, 6)),
    (lambda x: ember.nn.functional.max_pool1d(x, 2, 1, dilation=2), (2, 2, 6)),
    (lambda x: ember.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                              count_include_pad=False), (1, 2, 5, 6)),
    (lambda x: ember.nn.functional.avg_pool3d(x, 2, 1, 1), (1, 1, 3, 3, 3)),
    (lambda x: ember.nn.functional.adaptive_avg_pool2d(x, (3, 2)), (1, 2, 5, 5)),
    (lambda x: ember.nn.functional.adaptive_max_pool2d(x, (3, 2)), (1, 2, 5, 5)),
    (lambda x: ember.nn.functional.lp_pool2d(x.abs() + 0.5, 2, 2), (1, 2, 4, 4)),
    (lambda x: ember.nn.functional.max_unpool2d(x, ember.tensor(
        [[[[0, 3], [9, 14]]]]).expand(1, 2, 2, 2), 2, output_size=(4, 4)), (1, 2, 2, 2)),
]


@pytest.mark.parametrize("fn,shape", GRADCHECK)
def test_gradcheck_and_gradgradcheck(fn, shape):
    x = ember.from_numpy(R(*shape)).requires_grad_()
    assert ember.autograd.gradcheck(fn, [x])
    assert ember.autograd.gradgradcheck(fn, [x])


def test_max_pool_double_backward_matches_torch():
    def grad_of_grad(m, x):
        y = F(m).max_pool2d(x, 2, 1)
        (gx,) = m.autograd.grad((y ** 2).sum(), x, create_graph=True)
        return gx

    check(grad_of_grad, [R(1, 2, 4, 5)])


# ----------------------------------------------------------------------------------------------
# errors

ERRORS = [
    lambda m, x: F(m).max_pool2d(x, 2, padding=2),                # pad > half the kernel
    lambda m, x: F(m).max_pool2d(x, 7),                           # output would be empty
    lambda m, x: F(m).max_pool2d(x, 0),                           # zero kernel (and stride)
    lambda m, x: F(m).max_pool2d(x, 2, stride=-1),
    lambda m, x: F(m).max_pool2d(x, 3, dilation=0),
    lambda m, x: F(m).max_pool2d(x, 2, padding=-1),
    lambda m, x: F(m).max_pool2d(x, (2, 3, 4)),
    lambda m, x: F(m).max_pool2d(x, 2, stride=(1, 1, 1)),
    lambda m, x: F(m).max_pool2d(x[0, 0], 2),                     # 2-d input
    lambda m, x: F(m).max_pool2d(x[:, :0], 2),                    # no channels
    lambda m, x: F(m).max_pool2d(x > 0, 2),                       # bool
    lambda m, x: F(m).max_pool3d(x, 5),
    lambda m, x: F(m).avg_pool2d(x, 2, padding=2),
    lambda m, x: F(m).avg_pool2d(x, 2, divisor_override=0),
    lambda m, x: F(m).avg_pool2d(x > 0, 2),
    lambda m, x: F(m).avg_pool2d(x.int(), 2),
    lambda m, x: F(m).avg_pool3d(x, 5),
    lambda m, x: F(m).adaptive_avg_pool2d(x, (2, 3, 4)),
    lambda m, x: F(m).adaptive_avg_pool2d(x[0, 0], 2),
    lambda m, x: F(m).adaptive_avg_pool2d(x[:, :, :0], 2),
    lambda m, x: F(m).adaptive_avg_pool2d(x, -1),
    lambda m, x: F(m).adaptive_avg_pool2d(x.long(), 2),
    lambda m, x: F(m).adaptive_max_pool2d(x.long(), 2),
    lambda m, x: F(m).adaptive_max_pool1d(x[0], (2, 2)),
    lambda m, x: F(m).lp_pool2d(x, 2, 7),
    lambda m, x: F(m).max_unpool2d(x, x.long() * 0 + 200, 2),     # index out of range
    lambda m, x: F(m).max_unpool2d(x, x.int() * 0, 2),            # int32 indices
    lambda m, x: F(m).max_unpool2d(x, x.long() * 0, 2, output_size=(3, 3)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_like_torch(fn):
    check_raises(fn, [R(1, 2, 5, 6).astype(np.float32)])


def test_error_messages_name_the_problem():
    x = ember.randn(1, 2, 5, 6)
    with pytest.raises(RuntimeError, match=r"Given input size: \(2x5x6\). Calculated output "
                                           r"size: \(2x0x0\)"):
        ember.nn.functional.max_pool2d(x, 7)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        ember.nn.functional.avg_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="invalid max index: 200"):
        ember.nn.functional.max_unpool2d(x, ember.full((1, 2, 5, 6), 200), 2)


# ----------------------------------------------------------------------------------------------
# layers

MODULES = [
    "MaxPool1d(3)", "MaxPool2d(2)", "MaxPool2d((2, 3), 1, 1, return_indices=True)",
    "MaxPool3d(2, ceil_mode=True)", "MaxPool2d(3, 2, 1, dilation=2)", "AvgPool1d(3)",
    "AvgPool2d(2)", "AvgPool2d(3, 1, 1, divisor_override=3)",
    "AvgPool3d(2, count_include_pad=False)", "AdaptiveAvgPool1d(3)", "AdaptiveAvgPool2d((3, None))",
    "AdaptiveAvgPool3d(2)", "AdaptiveMaxPool1d(3, True)", "AdaptiveMaxPool2d(3)",
    "AdaptiveMaxPool3d((1, 2, 2))", "LPPool1d(1.5, 3, 2, True)", "LPPool2d(2, 3)", "LPPool3d(2, 2)",
    "MaxUnpool1d(3, 2, 1)", "MaxUnpool2d(2)", "MaxUnpool3d(2)",
]


@pytest.mark.parametrize("spec", MODULES)
def test_module_repr_and_attributes_match_torch(spec):
    t = eval("torch.nn." + spec)
    e = eval("ember.nn." + spec)
    assert repr(e) == repr(t)
    public = {k: v for k, v in vars(t).items() if not k.startswith("_") and k != "training"}
    assert {k: getattr(e, k) for k in public} == public
    assert list(e.state_dict()) == list(t.state_dict()) == []


MODULE_FORWARD = [
    ("MaxPool1d(3, 2, 1, return_indices=True)", (2, 3, 8)),
    ("MaxPool2d(3, 2, 1, ceil_mode=True)", (2, 3, 7, 6)),
    ("MaxPool3d(2)", (1, 2, 4, 4, 4)),
    ("AvgPool1d(3, ceil_mode=True)", (2, 3, 8)),
    ("AvgPool2d(3, 2, 1, count_include_pad=False)", (2, 3, 7, 6)),
    ("AvgPool3d(2, divisor_override=3)", (1, 2, 4, 4, 4)),
    ("AdaptiveAvgPool2d((3, None))", (2, 3, 7, 6)),
    ("AdaptiveMaxPool2d(3, return_indices=True)", (3, 7, 6)),
    ("LPPool2d(2, 2)", (2, 3, 6, 6)),
]


@pytest.mark.parametrize("spec,shape", MODULE_FORWARD)
def test_module_forward_matches_torch(spec, shape):
    x = np.abs(R(*shape)) + 0.1
    check(lambda m, x: eval("m.nn." + spec)(x), [x])


@pytest.mark.parametrize("kernel", [2, 3, (3, 2), (1, 4)])
def test_tiling_max_pool_ties_route_gradients_like_torch(kernel):
    """The fast path for tiling windows must pick torch's element among equal maxima."""
    x = np.random.default_rng(1).integers(0, 3, (2, 3, 9, 8)).astype(np.float64)
    check(lambda m, x: F(m).max_pool2d(x, kernel), [x])
    check(lambda m, x: F(m).max_pool3d(x.unsqueeze(0), (1,) + (kernel if isinstance(
        kernel, tuple) else (kernel, kernel))), [x])

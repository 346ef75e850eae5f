"""Dropout family: statistics (fraction dropped, scaling, preserved moments), reproducibility
under a seed, gradient masked like the forward, channel variants, eval/p=0/p=1 behaviour,
in-place forms, torch's warnings and errors. Random streams differ from torch's by design, so
values are checked against their distribution, not against torch's samples."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

from .oracle import as_numpy, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(2)
_ALPHA = 1.7580993408473766  # SELU's negative saturation, -alpha * scale


def X(*shape, requires_grad=False):
    x = ember.from_numpy(rng.uniform(1.0, 2.0, shape).astype(np.float32))  # never zero
    return x.requires_grad_() if requires_grad else x


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics_and_gradient_mask(p):
    x = X(200, 100, requires_grad=True)
    y = EF.dropout(x, p)
    ys, xs = as_numpy(y), as_numpy(x)
    dropped = ys == 0
    assert abs(dropped.mean() - p) < 0.015
    np.testing.assert_allclose(ys[~dropped], xs[~dropped] / (1 - p), rtol=1e-6)
    assert abs(ys.mean() / xs.mean() - 1) < 0.03  # the expectation is preserved
    y.backward(ember.ones_like(y))
    grad = as_numpy(x.grad)
    np.testing.assert_array_equal(grad == 0, dropped)  # same elements dropped both ways
    np.testing.assert_allclose(grad[~dropped], 1 / (1 - p), rtol=1e-6)
    assert y.grad_fn.name() == "MulBackward0"


def test_same_seed_reproduces_and_calls_differ():
    x = X(50, 20)
    ember.manual_seed(7)
    first = as_numpy(EF.dropout(x, 0.5))
    second = as_numpy(EF.dropout(x, 0.5))
    ember.manual_seed(7)
    np.testing.assert_array_equal(as_numpy(EF.dropout(x, 0.5)), first)
    assert not np.array_equal(first, second)
    generator_state = ember.get_rng_state()
    module = ember.nn.Dropout2d(0.5)
    a = as_numpy(module(X(4, 8, 3, 3) * 0 + 1))
    ember.set_rng_state(generator_state)
    np.testing.assert_array_equal(as_numpy(module(X(4, 8, 3, 3) * 0 + 1)), a)


def test_eval_p0_and_p1():
    x = X(4, 5, requires_grad=True)
    images = X(2, 3, 4, 4)
    for layer in (ember.nn.Dropout(0.3), ember.nn.AlphaDropout(0.3),
                  ember.nn.FeatureAlphaDropout(0.3)):
        layer.eval()
        assert layer(x) is x
    assert ember.nn.Dropout2d(0.3).eval()(images) is images
    np.testing.assert_array_equal(as_numpy(ember.nn.Dropout1d(0.3).eval()(x)), as_numpy(x))
    assert EF.dropout(x, 0.0) is x
    assert EF.dropout(x, 0.5, training=False) is x
    assert EF.alpha_dropout(x, 0.5) is x  # alpha_dropout defaults to training=False, as torch
    zeros = EF.dropout(x, 1.0)
    assert np.all(as_numpy(zeros) == 0)
    zeros.sum().backward()
    assert np.all(as_numpy(x.grad) == 0)
    t = torch.nn.functional.dropout(torch.ones(3, requires_grad=True), 1.0)
    assert type(t.grad_fn).__name__ == zeros.grad_fn.name()
    assert np.all(as_numpy(EF.alpha_dropout(x, 1.0, True)) == 0)


def test_inplace_dropout_writes_the_input():
    leaf = X(30, 40, requires_grad=True)
    base = leaf * 1
    view = base[:, 5:25]
    out = EF.dropout(view, 0.4, inplace=True)
    assert out is view
    before = as_numpy(leaf)[:, 5:25]
    dropped = as_numpy(base)[:, 5:25] == 0
    assert 0.3 < dropped.mean() < 0.5
    np.testing.assert_allclose(as_numpy(base)[:, 5:25][~dropped], before[~dropped] / 0.6,
                               rtol=1e-6)
    np.testing.assert_array_equal(as_numpy(base)[:, :5], as_numpy(leaf)[:, :5])
    base.sum().backward()
    grad = as_numpy(leaf.grad)
    np.testing.assert_array_equal(grad[:, 5:25] == 0, dropped)
    assert np.all(grad[:, :5] == 1)
    m = ember.nn.Dropout(0.5, inplace=True)
    y = X(10)
    assert m(y) is y


@pytest.mark.parametrize("fn,shape,channels", [
    (EF.dropout1d, (20, 30, 7), (0, 1)), (EF.dropout1d, (30, 7), (0,)),
    (EF.dropout2d, (20, 30, 3, 3), (0, 1)), (EF.dropout3d, (20, 30, 2, 2, 2), (0, 1)),
    (EF.dropout3d, (30, 2, 3, 2), (0,)), (EF.feature_alpha_dropout, (20, 30, 4), (0, 1))])
def test_channel_dropout_zeroes_whole_channels(fn, shape, channels):
    x = X(*shape, requires_grad=True)
    y = fn(x, 0.5, True)
    ys = as_numpy(y)
    flat = ys.reshape(shape[:len(channels)] + (-1,))
    per_channel = flat.std(-1) == 0 if fn is EF.feature_alpha_dropout else np.all(flat == 0, -1)
    partial = np.any(flat == 0, -1) & ~np.all(flat == 0, -1)
    assert 0.35 < per_channel.mean() < 0.65
    if fn is not EF.feature_alpha_dropout:
        assert not partial.any()  # a channel is dropped entirely or not at all
    y.sum().backward()
    g = as_numpy(x.grad).reshape(flat.shape)
    assert np.all(np.ptp(g, axis=-1) == 0)  # one factor per channel in the gradient too


def test_alpha_dropout_keeps_mean_and_variance():
    x = ember.randn(400, 500)
    for fn in (EF.alpha_dropout, EF.feature_alpha_dropout):
        y = as_numpy(fn(x, 0.3, True))
        assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02, fn.__name__
    p = 0.3
    y = as_numpy(EF.alpha_dropout(x, p, True))
    a = 1 / np.sqrt((_ALPHA ** 2 * p + 1) * (1 - p))
    saturated = np.isclose(y, -_ALPHA * a + _ALPHA * a * p)
    assert abs(saturated.mean() - p) < 0.01
    kept = ~saturated
    np.testing.assert_allclose(y[kept], as_numpy(x)[kept] * a + _ALPHA * a * p, rtol=1e-5,
                               atol=1e-6)


def test_modules_repr_and_p_validation():
    for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                 "FeatureAlphaDropout"):
        assert repr(getattr(ember.nn, name)(0.25, True)) == repr(getattr(torch.nn, name)(0.25,
                                                                                          True))
        assert repr(getattr(ember.nn, name)()) == repr(getattr(torch.nn, name)())
        check_raises(lambda m: getattr(m.nn, name)(1.5))
        check_raises(lambda m: getattr(m.nn, name)(-0.1))


def test_functional_errors_and_warnings():
    x = np.ones((2, 3), np.float32)
    for fn in [lambda m, a: m.nn.functional.dropout(a, 1.5),
               lambda m, a: m.nn.functional.alpha_dropout(a, -1.0),
               lambda m, a: m.nn.functional.dropout1d(a[0]),
               lambda m, a: m.nn.functional.dropout2d(a, 2.0),
               lambda m, a: m.dropout(a, 2.0, True),
               lambda m, a: m.feature_dropout(a[0], 0.5, True)]:
        check_raises(fn, [x])
    for fn, a, pattern in [(EF.dropout2d, X(2, 3), "Received a 2-D input to dropout2d"),
                           (EF.dropout2d, X(2, 3, 4), "Received a 3D input to dropout2d"),
                           (EF.dropout3d, X(2, 3, 4), "Received a 3-D input to dropout3d")]:
        with pytest.warns(UserWarning, match=pattern):
            fn(a)
        with pytest.warns(UserWarning, match=pattern):
            getattr(torch.nn.functional, fn.__name__)(torch.ones(a.shape))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EF.dropout2d(X(2, 3, 4, 4))
        EF.dropout1d(X(3, 4))


def test_torch_level_functions():
    x = X(50, 40)
    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        fn = getattr(ember, name)
        assert fn(x, 0.5, False) is x
        y = fn(x, 0.5, True)
        assert y.shape == x.shape and not np.array_equal(as_numpy(y), as_numpy(x))
        z = x.clone()
        assert getattr(ember, name + "_")(z, 0.5, True) is z
        assert not np.array_equal(as_numpy(z), as_numpy(x))
        assert hasattr(torch, name) and hasattr(torch, name + "_")

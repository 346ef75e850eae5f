"""AdaptiveLogSoftmaxWithLoss, LinearCrossEntropyLoss (+ options), FractionalMaxPool2d/3d,
CrossMapLRN2d, Container, nn.grad and nn.factory_kwargs against torch."""
import warnings

import numpy as np
import pytest

import ember

from .oracle import assert_close, check, check_raises

torch = pytest.importorskip("torch")


def _pair(make):
    """The same module in both libraries, ember's weights copied from torch's."""
    t = make(torch.nn)
    e = make(ember.nn)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return e, t


def _both(e, t, fn, *arrays):
    e_in = [ember.tensor(a) for a in arrays]
    t_in = [torch.tensor(a) for a in arrays]
    return fn(e, *e_in), fn(t, *t_in), e_in, t_in


X = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
TARGET = np.array([0, 4, 5, 11, 12, 19])


@pytest.mark.parametrize("kwargs", [dict(cutoffs=[5, 12], div_value=2.0),
                                    dict(cutoffs=[3], head_bias=True),
                                    dict(cutoffs=[2, 6, 15], div_value=1.5)])
def test_adaptive_log_softmax_matches_torch(kwargs):
    e, t = _pair(lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 20, **kwargs))
    assert repr(e) == repr(t)
    x_e = ember.tensor(X, requires_grad=True)
    x_t = torch.tensor(X, requires_grad=True)
    out_e, out_t = e(x_e, ember.tensor(TARGET)), t(x_t, torch.tensor(TARGET))
    assert type(out_e).__name__ == "_ASMoutput" and out_e._fields == ("output", "loss")
    assert_close(tuple(out_e), tuple(out_t), rtol=1e-5, atol=1e-6)
    out_e.loss.backward()
    out_t.loss.backward()
    assert_close(x_e.grad, x_t.grad, rtol=1e-4, atol=1e-6)
    for (name, p_e), (_, p_t) in zip(e.named_parameters(), t.named_parameters()):
        assert_close(p_e.grad, p_t.grad, rtol=1e-4, atol=1e-6, what=name)
    assert_close(e.log_prob(ember.tensor(X)), t.log_prob(torch.tensor(X)), atol=1e-5)
    assert_close(e.predict(ember.tensor(X)), t.predict(torch.tensor(X)))
    assert_close(tuple(e(ember.tensor(X[0]), ember.tensor(TARGET[1]))),
                 tuple(t(torch.tensor(X[0]), torch.tensor(TARGET[1]))), atol=1e-5)


@pytest.mark.parametrize("fn, match", [
    (lambda m, x, t: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5])(x, t[:3]), "same size"),
    (lambda m, x, t: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5])(x, t + 10),
     "Target values should be in [0, 19]"),
    (lambda m, x, t: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [12, 5]), "cutoffs should be"),
    (lambda m, x, t: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5, 20]), "cutoffs should be"),
    (lambda m, x, t: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5])(x[None], t), "same size"),
    (lambda m, x, t: m.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [5])(x, t[None]),
     "0D or 1D target tensor expected"),
])
def test_adaptive_log_softmax_errors(fn, match):
    check_raises(fn, [X, TARGET], match=match)


@pytest.mark.parametrize("kwargs, target", [
    ({}, np.array([0, 1, 2, 3, 4, 0])),
    (dict(bias=True, reduction="sum", label_smoothing=0.1, ignore_index=2),
     np.array([0, 1, 2, 3, 4, 2])),
    (dict(out_features=(3,), bias=True), np.random.default_rng(1).integers(0, 5, (6, 3))),
    (dict(reduction="none"), np.array([0, 1, 2, 3, 4, 0])),
])
def test_linear_cross_entropy_loss_matches_torch(kwargs, target):
    e, t = _pair(lambda nn: nn.LinearCrossEntropyLoss(8, 5, **kwargs))
    assert repr(e) == repr(t)
    check(lambda m, x: (e if m is ember else t)(x, m.tensor(target)), [X])


def test_linear_cross_entropy_functional():
    w = np.random.default_rng(2).standard_normal((5, 8)).astype(np.float32)
    b = np.random.default_rng(3).standard_normal(5).astype(np.float32)
    check(lambda m, x, w, b: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 1, 2, 3, 4, 0]), linear_bias=b), [X, w, b])
    check(lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x[0], w, m.tensor(3), reduction="none"), [X, w])
    check(lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.tensor([0, 1, 2, 3, 4, 0]), options=m.nn.LinearCrossEntropyOptions(
            batch_chunk_size=2)), [X, w])
    check(lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x, w, m.softmax(m.ones(6, 5), 1)), [X, w])
    check_raises(lambda m, x, w: m.nn.functional.linear_cross_entropy(
        x[None], w, m.tensor([0])), [X, w], match="dimensionality 1 or 2, got 3")


@pytest.mark.parametrize("kwargs, match", [
    (dict(acc_policy="bad"), "invalid acc_policy: 'bad'"),
    (dict(chunking_method="bad"), "invalid chunking_method: 'bad'"),
    (dict(chunking_method="aspect_ratio:0"), "invalid chunking_method"),
    (dict(batch_chunk_size=0), "batch_chunk_size must be positive int or None"),
])
def test_linear_cross_entropy_options_validate(kwargs, match):
    for m in (ember, torch):
        with pytest.raises(ValueError, match=match):
            m.nn.LinearCrossEntropyOptions(**kwargs)
    assert repr(ember.nn.LinearCrossEntropyOptions(batch_chunk_size=4)) == \
        repr(torch.nn.LinearCrossEntropyOptions(batch_chunk_size=4))


def test_fractional_max_pool_modules():
    samples = np.random.default_rng(4).random((2, 3, 2)).astype(np.float32)
    x = np.random.default_rng(5).standard_normal((2, 3, 9, 8)).astype(np.float32)
    for kwargs in (dict(output_size=4), dict(output_ratio=(0.5, 0.6)),
                   dict(output_size=(3, 5), return_indices=True)):
        check(lambda m, x, s: m.nn.FractionalMaxPool2d(3, _random_samples=s, **kwargs)(x),
              [x, samples], grad=False)
    samples3 = np.random.default_rng(6).random((1, 2, 3)).astype(np.float32)
    x3 = np.random.default_rng(7).standard_normal((1, 2, 5, 6, 7)).astype(np.float32)
    check(lambda m, x: m.nn.FractionalMaxPool3d(2, output_size=(3, 2, 4),
                                                _random_samples=m.tensor(samples3))(x), [x3])
    assert repr(ember.nn.FractionalMaxPool2d(3, output_size=2)) == "FractionalMaxPool2d()"


def test_fractional_max_pool_draws_its_own_samples():
    ember.manual_seed(0)
    x = ember.randn(2, 3, 9, 9)
    out, indices = ember.nn.functional.fractional_max_pool2d(x, 2, output_size=4,
                                                             return_indices=True)
    assert out.shape == (2, 3, 4, 4)
    assert np.array_equal(out.numpy(), x.flatten(2).gather(2, indices.flatten(2)).reshape(
        2, 3, 4, 4).numpy())


@pytest.mark.parametrize("fn, match", [
    (lambda m, x: m.nn.FractionalMaxPool2d(3), "requires specifying either an output size"),
    (lambda m, x: m.nn.FractionalMaxPool2d(3, output_ratio=1.5), "output_ratio must be"),
    (lambda m, x: m.nn.functional.fractional_max_pool2d(x, 3), "requires specifying either"),
    (lambda m, x: m.nn.functional.fractional_max_pool2d(x, 3, output_size=6),
     "pool height 3 too large relative to input height 7"),
    (lambda m, x: m.nn.functional.fractional_max_pool2d(x.long(), 3, output_size=2),
     "not implemented for 'Long'"),
    (lambda m, x: m.nn.functional.fractional_max_pool2d(
        x, 2, output_size=2, _random_samples=m.ones(1, 3, 2, dtype=m.float64)), "same dtype"),
])
def test_fractional_max_pool_errors(fn, match):
    check_raises(fn, [np.ones((1, 3, 7, 7), np.float32)], match=match)


def test_cross_map_lrn2d_module():
    assert repr(ember.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    check_raises(lambda m, x: m.nn.CrossMapLRN2d(3)(x), [np.ones((2, 3, 4), np.float32)],
                 match="Expected input to be 4D, got 3D instead.")


def test_container_is_deprecated():
    for m in (ember, torch):
        with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
            c = m.nn.Container(a=m.nn.Linear(2, 3))
        assert list(dict(c.named_children())) == ["a"]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_nn_grad_matches_torch(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, 3) + (5,) * n).astype(np.float32)
    w = rng.standard_normal((4, 3) + (2,) * n).astype(np.float32)
    out_shape = (2, 4) + (3,) * n
    g = rng.standard_normal(out_shape).astype(np.float32)
    check(lambda m, w, g: getattr(m.nn.grad, f"conv{n}d_input")(x.shape, w, g, stride=2,
                                                                 padding=1), [w, g])
    check(lambda m, x, g: getattr(m.nn.grad, f"conv{n}d_weight")(x, w.shape, g, stride=2,
                                                                  padding=1), [x, g])
    assert ember.nn.functional.grad is ember.nn.grad


def test_factory_kwargs():
    for m in (ember, torch):
        assert m.nn.factory_kwargs({"device": "cpu", "dtype": m.float64}) == \
            {"device": "cpu", "dtype": m.float64}
        assert m.nn.factory_kwargs({"factory_kwargs": {"device": "cpu"}}) == {"device": "cpu"}
        assert m.nn.factory_kwargs(None) == {}
        with pytest.raises(TypeError, match="unexpected kwargs"):
            m.nn.factory_kwargs({"foo": 1})
        with pytest.raises(TypeError, match="device specified twice"):
            m.nn.factory_kwargs({"factory_kwargs": {"device": "cpu"}, "device": "cpu"})


def test_conv_tbc_errors():
    with warnings.catch_warnings():
        check_raises(lambda m, x: m.conv_tbc(x, x, x[0, 0]), [np.ones((5, 2, 3), np.float32)],
                     match="Input dim 2 (input channels) is not == dim 1 in the weight tensor")

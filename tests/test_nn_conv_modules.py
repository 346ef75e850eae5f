"""The Conv1d/2d/3d and ConvTranspose1d/2d/3d layers vs torch: parameter names, shapes and
order, repr and attributes, default initialisation bounds, forward and gradients (of the input
and the parameters) with torch's weights loaded through state_dict, every padding_mode
(reflect / replicate / circular pad with F.pad), padding='same' / 'valid', transposed
output_size, unbatched input, and torch's errors.
"""
import math

import numpy as np
import pytest

import ember

from .oracle import assert_close, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(17)


def twins(spec):
    """The same layer in both libraries (float64), ember's loaded from torch's state_dict."""
    t = eval("torch.nn." + spec).double()
    e = eval("ember.nn." + spec).double()
    e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                       for k, v in t.state_dict().items()})
    return t, e


def compare(spec, shape, call=lambda layer, x: layer(x), rtol=1e-9, atol=1e-9):
    """Forward, then gradients of the input and every parameter for one upstream gradient."""
    t, e = twins(spec)
    x = rng.standard_normal(shape)
    tx = torch.from_numpy(x.copy()).requires_grad_()
    ex = ember.from_numpy(x.copy()).requires_grad_()
    ty, ey = call(t, tx), call(e, ex)
    assert_close(ey, ty, rtol, atol, "forward")
    seed = rng.standard_normal(tuple(ty.shape))
    ty.backward(torch.from_numpy(seed.copy()))
    ey.backward(ember.from_numpy(seed.copy()))
    assert_close(ex.grad, tx.grad, rtol, atol, "input grad")
    for (name, tp), (ename, ep) in zip(t.named_parameters(), e.named_parameters()):
        assert name == ename
        assert_close(ep.grad, tp.grad, rtol, atol, f"{name} grad")


LAYERS = [
    ("Conv1d(4, 6, 3)", (2, 4, 9)),
    ("Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, bias=False)", (2, 4, 11)),
    ("Conv1d(3, 5, 4, padding='same')", (2, 3, 8)),
    ("Conv2d(3, 4, 3)", (2, 3, 7, 6)),
    ("Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)",
     (2, 4, 7, 8)),
    ("Conv2d(3, 4, (4, 3), padding='same', dilation=(1, 2))", (2, 3, 7, 8)),
    ("Conv2d(3, 4, 3, padding='valid')", (2, 3, 5, 5)),
    ("Conv2d(4, 4, 3, groups=4, padding=1)", (2, 4, 5, 5)),          # depthwise
    ("Conv2d(1, 2, 3)", (1, 1, 4, 4)),                                 # one channel
    ("Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1)", (1, 2, 4, 5, 4)),
    ("ConvTranspose1d(4, 6, 3, stride=3, padding=1, groups=2, dilation=2)", (2, 4, 5)),
    ("ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)", (2, 3, 4, 5)),
    ("ConvTranspose2d(4, 2, (2, 3), stride=(2, 1), groups=2, bias=False)", (2, 4, 3, 3)),
    ("ConvTranspose3d(2, 3, 2, stride=2)", (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("spec,shape", LAYERS)
def test_forward_and_gradients_match_torch(spec, shape):
    compare(spec, shape)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("spec,shape", [
    ("Conv1d(3, 4, 3, padding=2, padding_mode='{}')", (2, 3, 6)),
    ("Conv2d(3, 4, (3, 2), padding=(1, 2), stride=2, padding_mode='{}')", (2, 3, 6, 5)),
    ("Conv2d(2, 4, 4, padding='same', padding_mode='{}')", (2, 2, 6, 7)),
    ("Conv3d(2, 3, 3, padding=1, padding_mode='{}')", (1, 2, 4, 3, 4)),
])
def test_padding_modes_match_torch(mode, spec, shape):
    compare(spec.format(mode), shape)


def test_unbatched_input():
    compare("Conv2d(3, 4, 3, padding=1, padding_mode='reflect')", (3, 5, 6))
    compare("ConvTranspose1d(3, 2, 3, stride=2)", (3, 4))


@pytest.mark.parametrize("spec,shape,size", [
    ("ConvTranspose2d(3, 4, 3, stride=2, padding=1)", (2, 3, 4, 5), (8, 10)),
    ("ConvTranspose2d(3, 4, 3, stride=2, padding=1)", (2, 3, 4, 5), (2, 4, 7, 9)),
    ("ConvTranspose1d(2, 3, 2, stride=3)", (1, 2, 4), [13]),
])
def test_transposed_output_size(spec, shape, size):
    compare(spec, shape, call=lambda layer, x: layer(x, output_size=size))


def test_float32_layers_match_torch():
    for spec, shape in [("Conv2d(3, 8, 3, padding=1, padding_mode='circular')", (2, 3, 8, 8)),
                        ("ConvTranspose2d(8, 3, 4, stride=2, padding=1)", (2, 8, 4, 4))]:
        t = eval("torch.nn." + spec)
        e = eval("ember.nn." + spec)
        e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                           for k, v in t.state_dict().items()})
        x = rng.standard_normal(shape).astype(np.float32)
        assert_close(e(ember.from_numpy(x)), t(torch.from_numpy(x)), 1e-4, 1e-5)


ALL_SPECS = [s for s, _ in LAYERS] + [
    "Conv2d(3, 4, 3, padding=1, padding_mode='reflect')",
    "Conv3d(2, 3, 3, padding=1, padding_mode='circular', bias=False)",
    "Conv1d(2, 2, 3, padding_mode='replicate')",
]


@pytest.mark.parametrize("spec", ALL_SPECS)
def test_parameters_repr_and_attributes_match_torch(spec):
    t = eval("torch.nn." + spec)
    e = eval("ember.nn." + spec)
    assert repr(e) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                 "transposed", "output_padding", "groups", "padding_mode"):
        assert getattr(e, name) == getattr(t, name), name
    # what F.pad gets for the padding modes (torch keeps a list for 'same'/'valid')
    assert tuple(e._reversed_padding_repeated_twice) == \
        tuple(t._reversed_padding_repeated_twice)


@pytest.mark.parametrize("spec", ["Conv2d(6, 4, (3, 2), groups=2)", "ConvTranspose1d(4, 6, 3)",
                                  "Conv3d(2, 3, 2)"])
def test_default_init_is_within_torch_bounds(spec):
    """kaiming_uniform_(a=sqrt(5)) gives |w| <= 1/sqrt(fan_in); the bias shares that bound."""
    e = eval("ember.nn." + spec)
    w = e.weight.detach().numpy()
    fan_in = w.shape[1] * math.prod(w.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.5 * bound
    assert np.abs(e.bias.detach().numpy()).max() <= bound
    assert w.std() > 0.2 * bound  # not constant


ERRORS = [
    lambda m: m.nn.Conv2d(3, 4, 3, padding_mode="bogus"),
    lambda m: m.nn.Conv2d(3, 4, 3, groups=2),
    lambda m: m.nn.Conv2d(4, 3, 3, groups=2),
    lambda m: m.nn.Conv2d(4, 4, 3, groups=0),
    lambda m: m.nn.Conv2d(3, 4, 3, padding="same", stride=2),
    lambda m: m.nn.Conv2d(3, 4, 3, padding="full"),
    lambda m: m.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
    lambda m: m.nn.Conv2d(3, 4, 3)(m.zeros(1, 2, 5, 5)),
    lambda m: m.nn.Conv2d(3, 4, 3)(m.zeros(5, 5)),
    lambda m: m.nn.Conv2d(3, 4, 3, padding=3, padding_mode="reflect")(m.zeros(1, 3, 3, 3)),
    lambda m: m.nn.ConvTranspose2d(3, 4, 3, stride=2)(m.zeros(1, 3, 4, 4), output_size=(20, 20)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_like_torch(fn):
    check_raises(lambda m: fn(m))

"""ember.nn.utils vs torch: gradient clipping, parameters <-> vector, weight_norm and
spectral_norm (classic hooks and parametrizations), parametrize, BatchNorm fusion and
functional_call. Weights and power-iteration vectors are set identically in both libraries,
so values, gradients and state_dict keys are compared directly."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember

from .test_nn_module import cases_of, outcome, register, same

rng = np.random.default_rng(0)
G = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,), (2, 2, 2)]]
W = rng.standard_normal((4, 3))
CW = rng.standard_normal((3, 2, 3, 3))
X = rng.standard_normal((5, 3))
U0, V0 = np.array([0.5, -0.5, 0.5, 0.5]), np.array([0.6, 0.0, 0.8])

CLIP = {}
clip = register(CLIP)


def _params(m, scale=1.0):
    ps = [m.nn.Parameter(m.zeros(*g.shape)) for g in G]
    for p, g in zip(ps, G):
        p.grad = m.tensor(g * scale)
    return ps


def _clip_norm_case(norm_type):
    def run(m):
        ps = _params(m)
        total = m.nn.utils.clip_grad_norm_(ps, 1.5, norm_type=norm_type)
        return total, [p.grad for p in ps]
    return run


for _nt in [2, 1, 0, 3, 0.5, "inf", float("inf"), -float("inf")]:
    CLIP[f"clip_grad_norm_{_nt}"] = _clip_norm_case(_nt)


@clip
def clip_below_max_norm_is_a_no_op(m):
    ps = _params(m, 0.01)
    return m.nn.utils.clip_grad_norm_(ps, 10.0), [p.grad for p in ps]


@clip
def clip_single_tensor_and_foreach(m):
    ps = _params(m)
    a = m.nn.utils.clip_grad_norm_(ps[0], 0.5, foreach=True)
    b = m.nn.utils.clip_grad_norm_(ps[1:], 0.5, foreach=False)
    return a, b, [p.grad for p in ps]


@clip
def clip_skips_missing_grads_and_takes_generators(m):
    ps = _params(m)
    ps[1].grad = None
    total = m.nn.utils.clip_grad_norm_(iter(ps), 0.5)
    return total, [p.grad for p in ps]


@clip
def clip_nothing(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = m.nn.utils.clip_grad_norm_([], 1.0)
        m.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    return total, [str(w.message) for w in caught]


@clip
def clip_non_finite(m):
    ps = _params(m)
    ps[0].grad[0, 0] = float("nan")
    raised = outcome(m, lambda m: m.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True))
    qs = _params(m)
    qs[0].grad[0, 0] = float("inf")
    with np.errstate(invalid="ignore"):
        total = m.nn.utils.clip_grad_norm_(qs, 1.0)
    return raised, total, qs[1].grad


@clip
def clip_half_precision_grads(m):
    ps = _params(m)
    ps[0].data = ps[0].data.half()
    ps[0].grad = ps[0].grad.half()
    total = m.nn.utils.clip_grad_norm_(ps, 1.0)
    return total, ps[0].grad.dtype, ps[0].grad


@clip
def clip_grad_value(m):
    ps = _params(m)
    return m.nn.utils.clip_grad_value_(ps, 0.5), [p.grad for p in ps]


@clip
def total_norm_then_clip(m):
    ps = _params(m)
    total = m.nn.utils.get_total_norm([p.grad for p in ps], 3.0)
    m.nn.utils.clip_grads_with_norm_(ps, 2.0, total)
    return total, [p.grad for p in ps], m.nn.utils.get_total_norm(m.ones(4), "inf")


@clip
def clip_grad_norm_deprecated_alias(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = m.nn.utils.clip_grad_norm(_params(m), 1.0)
    return total, [(w.category.__name__, str(w.message)) for w in caught]


@clip
def parameters_to_vector(m):
    ps = _params(m)
    v = m.nn.utils.parameters_to_vector(ps)
    return v.shape, v.requires_grad, v.grad_fn is not None


@clip
def vector_to_parameters(m):
    ps = _params(m)
    v = m.arange(4 * 3 + 5 + 8, dtype=m.float32)
    m.nn.utils.vector_to_parameters(v, ps)
    v[0] = 100  # the parameters now share the vector's memory
    return ps, [type(p).__name__ for p in ps], \
        outcome(m, lambda m: m.nn.utils.vector_to_parameters([1.0], []))


@cases_of(CLIP)
def test_clipping_and_vectors_like_torch(fn):
    same(fn)


def test_clip_grad_norm_backprops_like_torch_in_a_training_step():
    torch = pytest.importorskip("torch")

    def step(m):
        model = m.nn.Linear(3, 2).double()
        with m.no_grad():
            model.weight.copy_(m.tensor(W[:2]))
            model.bias.fill_(0.3)
        (model(m.tensor(X)) ** 2).sum().backward()
        total = m.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        return float(total), model.weight.grad.numpy().copy(), model.bias.grad.numpy().copy()
    e, t = step(ember), step(torch)
    assert abs(e[0] - t[0]) < 1e-12
    np.testing.assert_allclose(e[1], t[1], rtol=1e-12)
    np.testing.assert_allclose(e[2], t[2], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# weight norm

NORM = {}
norm = register(NORM)


def _linear(m):
    layer = m.nn.Linear(3, 4).double()
    with m.no_grad():
        layer.weight.copy_(m.tensor(W))
        layer.bias.fill_(0.1)
    return layer


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _weight_norm_case(dim):
    def run(m):
        layer = _linear(m)
        _quiet(lambda: m.nn.utils.weight_norm(layer, dim=dim))
        y = layer(m.tensor(X))
        (y ** 2).sum().backward()
        return ([k for k, _ in layer.named_parameters()], layer.weight_g, y, layer.weight_g.grad,
                layer.weight_v.grad, list(layer.state_dict()), type(layer.weight).__name__)
    return run


def _param_weight_norm_case(dim):
    def run(m):
        layer = _linear(m)
        m.nn.utils.parametrizations.weight_norm(layer, dim=dim)
        y = layer(m.tensor(X))
        (y ** 2).sum().backward()
        p = layer.parametrizations.weight
        return ([k for k, _ in layer.named_parameters()], p.original0, y, p.original0.grad,
                p.original1.grad, list(layer.state_dict()), type(layer).__name__)
    return run


for _dim in [0, 1, None, -1, -2]:
    NORM[f"weight_norm_dim_{_dim}"] = _weight_norm_case(_dim)
    NORM[f"parametrized_weight_norm_dim_{_dim}"] = _param_weight_norm_case(_dim)


@norm
def weight_norm_conv_and_bias(m):
    c = m.nn.Conv2d(2, 3, 3).double()
    with m.no_grad():
        c.weight.copy_(m.tensor(CW))
    _quiet(lambda: m.nn.utils.weight_norm(c))
    layer = _linear(m)
    _quiet(lambda: m.nn.utils.weight_norm(layer, name="bias"))
    return c.weight_g, layer.bias_g, list(layer.state_dict())


@norm
def weight_norm_errors_and_warning(m):
    layer = _linear(m)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m.nn.utils.weight_norm(layer)
        twice = outcome(m, lambda m: m.nn.utils.weight_norm(layer))
    return ([(w.category.__name__, str(w.message)) for w in caught[:1]], twice,
            outcome(m, lambda m: m.nn.utils.remove_weight_norm(_linear(m))),
            outcome(m, lambda m: copy.deepcopy(layer)))


@norm
def remove_weight_norm(m):
    layer = _linear(m)
    _quiet(lambda: m.nn.utils.weight_norm(layer))
    with m.no_grad():
        layer.weight_g.mul_(2)
    returned = m.nn.utils.remove_weight_norm(layer) is layer
    return (returned, [k for k, _ in layer.named_parameters()], layer.weight,
            type(layer.weight).__name__, len(layer._forward_pre_hooks))


@norm
def parametrized_weight_norm_loads_classic_checkpoint(m):
    layer = _linear(m)
    _quiet(lambda: m.nn.utils.weight_norm(layer))
    d = layer.state_dict()
    with m.no_grad():
        d["weight_g"].mul_(3)
    new = m.nn.Linear(3, 4).double()
    m.nn.utils.parametrizations.weight_norm(new)
    return str(new.load_state_dict(d)), new.weight


@norm
def parametrized_weight_norm_lifecycle(m):
    layer = _linear(m)
    m.nn.utils.parametrizations.weight_norm(layer)
    text = repr(layer)
    layer.weight = m.tensor(W * 2)  # assignment goes through right_inverse
    stored = layer.parametrizations.weight.original0
    clone = copy.deepcopy(layer)
    pickled = outcome(m, lambda m: pickle.dumps(layer))
    keep = outcome(m, lambda m: m.nn.utils.parametrize.remove_parametrizations(
        _param_wn(m), "weight", leave_parametrized=False))
    m.nn.utils.parametrize.remove_parametrizations(layer, "weight")
    return (text, stored, type(clone).__name__, clone.weight, pickled, keep, type(layer).__name__,
            [k for k, _ in layer.named_parameters()], layer.weight, layer.weight.requires_grad,
            hasattr(layer, "parametrizations"))


def _param_wn(m):
    layer = _linear(m)
    m.nn.utils.parametrizations.weight_norm(layer)
    return layer


# ----------------------------------------------------------------------------------------------
# spectral norm (u and v set to the same vectors in both libraries)


def _spectral_case(iterations):
    def run(m):
        layer = _linear(m)
        m.nn.utils.spectral_norm(layer, n_power_iterations=iterations)
        with m.no_grad():
            layer.weight_u.copy_(m.tensor(U0))
            layer.weight_v.copy_(m.tensor(V0))
        x = m.tensor(X)
        y1, y2 = layer(x), layer(x)
        (y1 + y2).sum().backward()
        layer.eval()
        y3 = layer(x)
        return ([k for k, _ in layer.named_parameters()], [k for k, _ in layer.named_buffers()],
                list(layer.state_dict()), dict(layer.state_dict()._metadata), layer.weight_u,
                layer.weight_v, y1, y2, y3, layer.weight_orig.grad)
    return run


def _param_spectral_case(iterations):
    def run(m):
        layer = _linear(m)
        m.nn.utils.parametrizations.spectral_norm(layer, n_power_iterations=iterations)
        sn = layer.parametrizations.weight[0]
        with m.no_grad():
            sn._u.copy_(m.tensor(U0))
            sn._v.copy_(m.tensor(V0))
        x = m.tensor(X)
        y1, y2 = layer(x), layer(x)
        (y1 + y2).sum().backward()
        layer.eval()
        y3 = layer(x)
        return ([k for k, _ in layer.named_parameters()], [k for k, _ in layer.named_buffers()],
                list(layer.state_dict()), sn._u, sn._v, y1, y2, y3,
                layer.parametrizations.weight.original.grad)
    return run


for _it in [1, 3]:
    NORM[f"spectral_norm_{_it}_iterations"] = _spectral_case(_it)
    NORM[f"parametrized_spectral_norm_{_it}_iterations"] = _param_spectral_case(_it)


@norm
def spectral_norm_conv_dim_and_eps(m):
    c = m.nn.Conv2d(2, 3, 3).double()
    with m.no_grad():
        c.weight.copy_(m.tensor(CW))
    m.nn.utils.spectral_norm(c, dim=1, eps=1e-3)
    with m.no_grad():
        c.weight_u.copy_(m.tensor(np.ones(2) / np.sqrt(2)))
        c.weight_v.copy_(m.tensor(np.ones(27) / np.sqrt(27)))
    c(m.ones(1, 2, 4, 4, dtype=m.float64))
    return c.weight_u, c.weight


@norm
def spectral_norm_default_dims(m):
    classic = m.nn.ConvTranspose2d(2, 3, 3)
    m.nn.utils.spectral_norm(classic)
    param = m.nn.ConvTranspose2d(2, 3, 3)
    m.nn.utils.parametrizations.spectral_norm(param)
    return (classic.weight_u.shape, classic.weight_v.shape,
            param.parametrizations.weight[0]._u.shape, param.parametrizations.weight[0].dim)


@norm
def spectral_norm_errors(m):
    return [outcome(m, f) for f in [
        lambda m: [m.nn.utils.spectral_norm(layer) for layer in [_linear(m)] * 2],
        lambda m: m.nn.utils.spectral_norm(_linear(m), n_power_iterations=0),
        lambda m: m.nn.utils.spectral_norm(m.nn.Linear(2, 2, bias=False), name="bias"),
        lambda m: m.nn.utils.remove_spectral_norm(_linear(m)),
        lambda m: m.nn.utils.parametrizations.spectral_norm(_linear(m), n_power_iterations=0),
        lambda m: m.nn.utils.parametrizations.spectral_norm(_linear(m), dim=2),
        lambda m: m.nn.utils.parametrizations.spectral_norm(_linear(m), name="foo")]]


@norm
def parametrized_spectral_norm_of_a_vector(m):
    layer = _linear(m)
    m.nn.utils.parametrizations.spectral_norm(layer, name="bias")
    return layer.bias, list(layer.state_dict())


@norm
def remove_spectral_norm(m):
    layer = _linear(m)
    m.nn.utils.spectral_norm(layer)
    with m.no_grad():
        layer.weight_u.copy_(m.tensor(U0))
        layer.weight_v.copy_(m.tensor(V0))
    m.nn.utils.remove_spectral_norm(layer)
    return ([k for k, _ in layer.named_parameters()], layer.weight, list(layer.state_dict()),
            len(layer._state_dict_hooks), len(layer._forward_pre_hooks))


@norm
def spectral_norm_loads_version_0_checkpoint(m):
    layer = _linear(m)
    m.nn.utils.spectral_norm(layer)
    old = OrderedDict([("weight_orig", m.tensor(W)), ("weight", m.tensor(W / 3.0)),
                       ("weight_u", m.tensor(U0)), ("bias", m.zeros(4, dtype=m.float64))])
    old._metadata = {"": {"version": 1}}  # no "spectral_norm" entry: version 0
    result = layer.load_state_dict(old)
    current = _linear(m)
    m.nn.utils.spectral_norm(current)
    roundtrip = current.load_state_dict(layer.state_dict())
    return str(result), layer.weight_v, str(roundtrip), current.weight_u


@cases_of(NORM)
def test_weight_and_spectral_norm_like_torch(fn):
    same(fn)


def test_parametrized_spectral_norm_with_torch_initial_vectors():
    """Torch's own random start (after its 15 warm-up iterations) copied into ember: the
    normalised weight and its gradient then agree."""
    torch = pytest.importorskip("torch")
    t_layer = torch.nn.utils.parametrizations.spectral_norm(
        torch.nn.Conv2d(3, 5, 3).double(), n_power_iterations=2)
    e_layer = ember.nn.utils.parametrizations.spectral_norm(
        ember.nn.Conv2d(3, 5, 3).double(), n_power_iterations=2)
    e_layer.load_state_dict(OrderedDict((k, ember.from_numpy(v.numpy().copy()))
                                        for k, v in t_layer.state_dict().items()))
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 6))
    t_out = t_layer(torch.from_numpy(x))
    e_out = e_layer(ember.from_numpy(x))
    t_out.sum().backward()
    e_out.sum().backward()
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(e_layer.parametrizations.weight.original.grad.numpy(),
                               t_layer.parametrizations.weight.original.grad.numpy(), rtol=1e-9)
    for name in ["_u", "_v"]:
        np.testing.assert_allclose(getattr(e_layer.parametrizations.weight[0], name).numpy(),
                                   getattr(t_layer.parametrizations.weight[0], name).numpy(),
                                   rtol=1e-10, atol=1e-12)


def test_spectral_norm_estimates_the_largest_singular_value():
    layer = ember.nn.Linear(6, 8).double()
    ember.nn.utils.parametrizations.spectral_norm(layer, n_power_iterations=50)
    normalised = layer.weight.detach().numpy()
    assert abs(np.linalg.svd(normalised, compute_uv=False)[0] - 1) < 1e-8


# ----------------------------------------------------------------------------------------------
# parametrize

PARAM = {}
param = register(PARAM)


def _P(m):
    return m.nn.utils.parametrize


def _square(m):
    layer = m.nn.Linear(3, 3).double()
    with m.no_grad():
        layer.weight.copy_(m.tensor(W[:3]))
        layer.bias.fill_(0.1)
    return layer


def _symmetric(m):
    class Symmetric(m.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)
    return Symmetric()


def _scale(m, k=2.0, inverse=True):
    class Scale(m.nn.Module):
        def forward(self, X):
            return X * k
    if inverse:
        Scale.right_inverse = lambda self, X: X / k
    return Scale()


def _module(m, forward, right_inverse=None):
    """A parametrization class made from functions."""
    attrs = {"forward": lambda self, *xs: forward(*xs)}
    if right_inverse is not None:
        attrs["right_inverse"] = lambda self, X: right_inverse(X)
    return type("Custom", (m.nn.Module,), attrs)()


@param
def register_and_use(m):
    layer = _square(m)
    returned = _P(m).register_parametrization(layer, "weight", _symmetric(m)) is layer
    y = layer(m.tensor(W[:3]))
    y.sum().backward()
    return (returned, type(layer).__name__, layer.weight, [k for k, _ in layer.named_parameters()],
            list(layer.state_dict()), layer.parametrizations.weight.original.grad,
            _P(m).is_parametrized(layer), _P(m).is_parametrized(layer, "bias"),
            _P(m).is_parametrized(layer, "weight"), _P(m).is_parametrized(_square(m)),
            _P(m).type_before_parametrizations(layer).__name__, repr(layer))


@param
def original_keeps_its_identity(m):
    layer = _square(m)
    w = layer.weight
    _P(m).register_parametrization(layer, "weight", _scale(m))
    return layer.parametrizations.weight.original is w, layer.weight, \
        layer.parametrizations.weight.original


@param
def chained_and_assigned(m):
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _symmetric(m))
    _P(m).register_parametrization(layer, "weight", _scale(m, 3.0))
    chained = (layer.weight, len(layer.parametrizations.weight), repr(layer))
    scaled = _square(m)
    _P(m).register_parametrization(scaled, "weight", _scale(m))
    scaled.weight = m.tensor(W[:3] * 4)
    no_inverse = _square(m)
    _P(m).register_parametrization(no_inverse, "weight", _scale(m, inverse=False))
    return chained, scaled.parametrizations.weight.original, scaled.weight, \
        outcome(m, lambda m: setattr(no_inverse, "weight", m.tensor(W[:3])))


@param
def buffer_parametrized(m):
    layer = _square(m)
    layer.register_buffer("buf", m.tensor(W[:3]))
    _P(m).register_parametrization(layer, "buf", _symmetric(m))
    return layer.buf, list(layer.state_dict()), [k for k, _ in layer.named_buffers()]


@param
def registration_errors(m):
    def attempt(fn, rinv=None, unsafe=False, chain=False):
        def run(m):
            layer = _square(m)
            if chain:
                _P(m).register_parametrization(layer, "weight", _symmetric(m))
            _P(m).register_parametrization(layer, "weight", _module(m, fn, rinv), unsafe=unsafe)
            return layer.weight.shape
        return outcome(m, run)
    return [outcome(m, lambda m: _P(m).register_parametrization(_square(m), "foo",
                                                                _symmetric(m))),
            attempt(lambda X: X[0]), attempt(lambda X: X.float()), attempt(lambda X: 3),
            attempt(lambda X: X[0], unsafe=True), attempt(lambda X: X[0], chain=True),
            attempt(lambda X: X.float(), chain=True), attempt(lambda X: 3, chain=True),
            attempt(lambda X: X, lambda X: 3), attempt(lambda X: X.double(), lambda X: X.float()),
            attempt(lambda X: X, lambda X: X[0], chain=True),
            attempt(lambda X: X, lambda X: 3, chain=True)]


@param
def right_inverse_not_implemented(m):
    def refuse(X):
        raise NotImplementedError
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _module(m, lambda X: X * 2, refuse))
    return layer.weight


@param
def several_originals(m):
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _module(m, lambda A, B: A + B,
                                                            lambda X: (X / 2, X / 2)))
    wrong = _square(m)
    _P(m).register_parametrization(wrong, "weight", _module(m, lambda A, B: A + B,
                                                            lambda X: (X, X, X)), unsafe=True)
    p = layer.parametrizations.weight
    return (list(layer.state_dict()), layer.weight, p.is_tensor, p.ntensors,
            outcome(m, lambda m: setattr(wrong, "weight", m.tensor(W[:3]))),
            [type(t).__name__ for t in (p.original0, p.original1)])


@param
def cached(m):
    calls = []
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _module(
        m, lambda X: calls.append(1) or X * 2))
    before = len(calls)
    with _P(m).cached():
        a = layer.weight
        b = layer.weight
        with _P(m).cached():
            c = layer.weight
    d = layer.weight
    return len(calls) - before, a is b, a is c, a is d


@param
def remove_parametrizations(m):
    kept = _square(m)
    w = kept.weight
    _P(m).register_parametrization(kept, "weight", _symmetric(m))
    _P(m).remove_parametrizations(kept, "weight")
    dropped = _square(m)
    _P(m).register_parametrization(dropped, "weight", _scale(m))
    _P(m).remove_parametrizations(dropped, "weight", leave_parametrized=False)
    partial = _square(m)
    _P(m).register_parametrization(partial, "weight", _symmetric(m))
    _P(m).register_parametrization(partial, "bias", _scale(m))
    _P(m).remove_parametrizations(partial, "bias")
    return (kept.weight, kept.weight is w, type(kept).__name__,
            [k for k, _ in kept.named_parameters()], dropped.weight, type(dropped).__name__,
            type(partial).__name__, list(partial.state_dict()), partial.bias,
            outcome(m, lambda m: _P(m).remove_parametrizations(_square(m), "weight")))


@param
def parametrization_follows_training_mode(m):
    layer = _square(m)
    layer.eval()
    sym = _symmetric(m)
    _P(m).register_parametrization(layer, "weight", sym)
    return sym.training


@param
def transfer_parametrizations(m):
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _symmetric(m))
    target = m.nn.Linear(3, 3).double()
    _P(m).transfer_parametrizations_and_params(layer, target)
    return (target.weight, target.parametrizations.weight.original is
            layer.parametrizations.weight.original, type(target).__name__)


@param
def optimizer_updates_the_original(m):
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _symmetric(m))
    opt = m.optim.SGD(layer.parameters(), lr=0.1)
    layer(m.tensor(W[:3])).sum().backward()
    opt.step()
    return layer.weight


@param
def state_dict_round_trip(m):
    layer = _square(m)
    _P(m).register_parametrization(layer, "weight", _symmetric(m))
    other = m.nn.Linear(3, 3).double()
    _P(m).register_parametrization(other, "weight", _symmetric(m))
    return str(other.load_state_dict(layer.state_dict())), other.weight


@cases_of(PARAM)
def test_parametrize_like_torch(fn):
    same(fn)


# ----------------------------------------------------------------------------------------------
# fusion and functional_call

MISC = {}
misc = register(MISC)


def _conv_bn(m, transpose=False):
    conv = (m.nn.ConvTranspose2d(3, 4, 3) if transpose else m.nn.Conv2d(3, 4, 3)).double()
    bn = m.nn.BatchNorm2d(4).double()
    weight = np.linspace(-1, 1, int(np.prod(tuple(conv.weight.shape))))
    with m.no_grad():
        conv.weight.copy_(m.tensor(weight.reshape(tuple(conv.weight.shape))))
        conv.bias.fill_(0.2)
        bn.running_mean.copy_(m.tensor([0.1, 0.2, -0.3, 0.4]))
        bn.running_var.copy_(m.tensor([1.0, 2.0, 0.5, 3.0]))
        bn.weight.copy_(m.tensor([1.0, -1.0, 2.0, 0.5]))
        bn.bias.copy_(m.tensor([0.0, 0.1, 0.2, 0.3]))
    return conv.eval(), bn.eval()


@misc
def fuse_conv_bn(m):
    x = m.tensor(np.linspace(-2, 2, 2 * 3 * 5 * 5).reshape(2, 3, 5, 5))
    conv, bn = _conv_bn(m)
    fused = m.nn.utils.fuse_conv_bn_eval(conv, bn)
    tconv, tbn = _conv_bn(m, transpose=True)
    tfused = m.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose=True)
    return (fused(x), (fused(x) - bn(conv(x))).abs().max() < 1e-10, fused is not conv,
            type(fused.weight).__name__, fused.weight.requires_grad,
            (tfused(x) - tbn(tconv(x))).abs().max() < 1e-10, tfused.bias)


@misc
def fuse_linear_bn(m):
    layer = _linear(m).eval()
    bn = m.nn.BatchNorm1d(4).double()
    _, bn2 = _conv_bn(m)
    bn.load_state_dict(bn2.state_dict())
    bn.eval()
    fused = m.nn.utils.fuse_linear_bn_eval(layer, bn)
    x = m.tensor(X)
    return fused(x), (fused(x) - bn(layer(x))).abs().max() < 1e-10


@misc
def fuse_errors(m):
    def training(m):
        conv, bn = _conv_bn(m)
        m.nn.utils.fuse_conv_bn_eval(conv.train(), bn)

    def mismatch(m):
        m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(3, 5).eval(), m.nn.BatchNorm1d(4).eval())
    return outcome(m, training), outcome(m, mismatch)


@misc
def fuse_weights_without_bias(m):
    conv, bn = _conv_bn(m)
    w, b = m.nn.utils.fuse_conv_bn_weights(conv.weight, None, bn.running_mean, bn.running_var,
                                           1e-5, None, None)
    lw, lb = m.nn.utils.fuse_linear_bn_weights(_linear(m).weight, None, bn.running_mean,
                                               bn.running_var, 1e-5, bn.weight, bn.bias)
    return w, b, lw, lb, type(b).__name__


def _functional_call(m, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return m.nn.utils.stateless.functional_call(*args, **kwargs)


@misc
def functional_call(m):
    layer = _linear(m)
    w = m.ones(4, 3, dtype=m.float64, requires_grad=True)
    y = _functional_call(m, layer, {"weight": w}, (m.ones(1, 3, dtype=m.float64),))
    y.sum().backward()
    return y, w.grad, layer.weight, type(layer.weight).__name__, layer.weight.grad


@misc
def functional_call_tied_weights(m):
    seq = m.nn.Sequential(m.nn.Linear(2, 2, bias=False), m.nn.Linear(2, 2, bias=False)).double()
    seq[1].weight = seq[0].weight
    y = _functional_call(m, seq, {"0.weight": m.eye(2, dtype=m.float64) * 2},
                         m.ones(1, 2, dtype=m.float64))
    untied = _functional_call(m, seq, {"0.weight": m.eye(2, dtype=m.float64) * 2},
                              m.ones(1, 2, dtype=m.float64), tie_weights=False)
    conflict = outcome(m, lambda m: _functional_call(
        m, seq, {"0.weight": m.eye(2), "1.weight": m.ones(2, 2)}, m.ones(1, 2)))
    return y, untied.shape, conflict


@misc
def functional_call_strict_and_restore(m):
    layer = m.nn.Linear(2, 2)
    w = layer.weight
    strict = outcome(m, lambda m: _functional_call(m, layer, {"weight": m.eye(2),
                                                              "foo": m.ones(1)},
                                                   m.ones(1, 2), strict=True))
    failing = outcome(m, lambda m: _functional_call(m, layer, {"weight": m.eye(3)},
                                                    m.ones(1, 2)))
    return strict, failing[0], layer.weight is w


@misc
def functional_call_buffers_and_kwargs(m):
    bn = m.nn.BatchNorm1d(2).eval()
    y = _functional_call(m, bn, {"running_mean": m.ones(2)}, (m.zeros(3, 2),))
    two = _linear(m)
    z = _functional_call(m, two, {"bias": m.zeros(4, dtype=m.float64)},
                         kwargs={"input": m.tensor(X)})
    return y, bn.running_mean, z


@cases_of(MISC)
def test_fusion_and_functional_call_like_torch(fn):
    same(fn)


def test_utils_namespace_matches_torch():
    torch = pytest.importorskip("torch")
    wanted = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
              "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters",
              "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
              "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
              "fuse_linear_bn_weights", "parametrize", "parametrizations", "stateless"]
    for name in wanted:
        assert hasattr(torch.nn.utils, name) and hasattr(ember.nn.utils, name), name
    for name in torch.nn.utils.parametrize.__all__:
        assert hasattr(ember.nn.utils.parametrize, name), name


# ----------------------------------------------------------------------------------------------
# orthogonal

ORTH_SHAPES = {"square": (4, 4), "tall": (5, 3), "wide": (3, 5)}


@pytest.mark.parametrize("shape", list(ORTH_SHAPES))
@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_like_torch(shape, orthogonal_map, trivialization):
    """Registered on the same weight, then moved away from the start (torch's random base
    copied over where there is one): the same orthogonal weight, keys and gradient."""
    torch = pytest.importorskip("torch")
    out_f, in_f = ORTH_SHAPES[shape]
    w = np.random.default_rng(3).standard_normal((out_f, in_f))
    step = np.random.default_rng(4).standard_normal((out_f, in_f)) * 0.3
    # off the diagonal: householder keeps the signs of Q's columns there (as whole numbers)
    step *= 1 - np.eye(out_f, in_f)
    probe = np.random.default_rng(5).standard_normal((out_f, in_f))

    def build(m):
        layer = m.nn.Linear(in_f, out_f, bias=False).double()
        with m.no_grad():
            layer.weight.copy_(m.tensor(w))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.nn.utils.parametrizations.orthogonal(layer, orthogonal_map=orthogonal_map,
                                                   use_trivialization=trivialization)
        return layer
    t_layer, e_layer = build(torch), build(ember)
    assert list(e_layer.state_dict()) == list(t_layer.state_dict())
    e_layer.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                             for k, v in t_layer.state_dict().items()})
    results = []
    for m, layer in ((ember, e_layer), (torch, t_layer)):
        original = layer.parametrizations.weight.original
        with m.no_grad():
            original.add_(m.tensor(step))
        (layer.weight * m.tensor(probe)).sum().backward()
        results.append((layer.weight.detach().numpy(), original.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-8, atol=1e-11)
    q = results[0][0] if out_f >= in_f else results[0][0].T
    np.testing.assert_allclose(q.T @ q, np.eye(min(out_f, in_f)), atol=1e-12)


@norm
def orthogonal_initial_weight_and_errors(m):
    layer = m.nn.Linear(4, 4, bias=False).double()
    with m.no_grad():
        layer.weight.copy_(m.tensor(np.random.default_rng(6).standard_normal((4, 4))))
    m.nn.utils.parametrizations.orthogonal(layer)
    assigned = m.nn.Linear(4, 4, bias=False).double()
    m.nn.utils.parametrizations.orthogonal(assigned, use_trivialization=False,
                                           orthogonal_map="matrix_exp")
    base = layer.parametrizations.weight[0].base
    return (layer.weight, type(base).__name__, [outcome(m, f) for f in [
        lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), orthogonal_map="x"),
        lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), name="bias"),
        lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), name="foo"),
        lambda m: setattr(assigned, "weight", m.eye(4, dtype=m.float64)),
        lambda m: setattr(layer, "weight", m.eye(3, dtype=m.float64))]])


def test_matrix_exp_matches_torch():
    torch = pytest.importorskip("torch")
    from ember.nn.utils.parametrizations import _matrix_exp

    a = np.random.default_rng(7).standard_normal((2, 5, 5)) * 3
    np.testing.assert_allclose(_matrix_exp(ember.from_numpy(a)).numpy(),
                               torch.matrix_exp(torch.from_numpy(a)).numpy(), rtol=1e-11,
                               atol=1e-11)

"""Lazy modules and their placeholders against torch: shapes from the first input, the class
they become, state_dict round trips, conversions, errors."""
import copy
import pickle

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

LAZY = [
    (lambda nn: nn.LazyLinear(4), (2, 3)),
    (lambda nn: nn.LazyLinear(4, bias=False), (2, 5, 3)),
    (lambda nn: nn.LazyConv1d(4, 3), (2, 3, 9)),
    (lambda nn: nn.LazyConv1d(4, 3), (3, 9)),
    (lambda nn: nn.LazyConv2d(6, 3, stride=2, padding=1, groups=3), (1, 3, 7, 7)),
    (lambda nn: nn.LazyConv3d(2, 2, bias=False), (1, 2, 4, 4, 4)),
    (lambda nn: nn.LazyConvTranspose1d(4, 3), (2, 3, 5)),
    (lambda nn: nn.LazyConvTranspose2d(8, 3, groups=2), (1, 4, 5, 5)),
    (lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 3, 3, 3)),
    (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    (lambda nn: nn.LazyBatchNorm2d(momentum=None), (2, 3, 4, 4)),
    (lambda nn: nn.LazyBatchNorm3d(affine=False), (2, 3, 2, 2, 2)),
    (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    (lambda nn: nn.LazyInstanceNorm2d(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    (lambda nn: nn.LazyInstanceNorm3d(), (2, 3, 2, 2, 2)),
]


def _describe(lib, module):
    return (repr(module), type(module).__name__,
            [(k, type(v).__name__, tuple(v.shape) if not _lazy(v) else None)
             for k, v in module.state_dict().items()])


def _lazy(t):
    return type(t).__name__.startswith("Uninitialized")


@pytest.mark.filterwarnings("ignore:input's size at dim=1")  # affine=False: no placeholders
@pytest.mark.parametrize("make, shape", LAZY)
def test_lazy_modules_initialize_like_torch(make, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    modules = {lib: make(lib.nn) for lib in (ember, torch)}
    assert _describe(ember, modules[ember]) == _describe(torch, modules[torch])
    for lib, module in modules.items():
        module(lib.tensor(x))
    assert _describe(ember, modules[ember]) == _describe(torch, modules[torch])
    # the same values once torch's are copied in: the layer is the ordinary one now
    modules[ember].load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                                    modules[torch].state_dict().items()})
    out_e, out_t = modules[ember](ember.tensor(x)), modules[torch](torch.tensor(x))
    assert np.allclose(out_e.detach().numpy(), out_t.detach().numpy(), atol=1e-5)


def test_init_is_the_layers_default():
    ember.manual_seed(3)
    lazy = ember.nn.LazyLinear(4)
    lazy(ember.ones(1, 6))
    ember.manual_seed(3)
    plain = ember.nn.Linear(6, 4)
    assert np.array_equal(lazy.weight.detach().numpy(), plain.weight.detach().numpy())
    assert np.array_equal(lazy.bias.detach().numpy(), plain.bias.detach().numpy())


def test_load_state_dict_materializes_but_stays_lazy_until_called():
    trained = ember.nn.Linear(3, 4)
    lazy = ember.nn.LazyLinear(4)
    lazy.load_state_dict(trained.state_dict())
    assert type(lazy).__name__ == "LazyLinear" and lazy.weight.shape == (4, 3)
    lazy(ember.ones(2, 3))
    assert type(lazy) is ember.nn.Linear and lazy.in_features == 0  # torch's too
    assert np.array_equal(lazy.weight.detach().numpy(), trained.weight.detach().numpy())
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        ember.nn.LazyLinear(4).load_state_dict({"weight": ember.ones(4, 3)})


def test_optimizer_built_before_the_first_call_trains_the_materialized_parameters():
    model = ember.nn.Sequential(ember.nn.LazyLinear(5), ember.nn.ReLU(), ember.nn.LazyLinear(1))
    optimizer = ember.optim.SGD(model.parameters(), lr=0.1)
    x = ember.randn(8, 3)
    loss = model(x).pow(2).mean()
    loss.backward()
    before = model[0].weight.detach().clone()
    optimizer.step()
    assert not np.array_equal(before.numpy(), model[0].weight.detach().numpy())


def test_conversions_before_initialization():
    for lib in (ember, torch):
        m = lib.nn.LazyLinear(2).double()
        assert m.weight.dtype is lib.float64
        m(lib.ones(1, 5, dtype=lib.float64))
        assert m.weight.dtype is lib.float64 and m.weight.shape == (2, 5)
        assert lib.nn.LazyLinear(2, dtype=lib.float64).weight.dtype is lib.float64


def test_placeholders_refuse_use():
    for lib in (ember, torch):
        u = lib.nn.UninitializedParameter()
        assert repr(u) == "<UninitializedParameter>" and u.requires_grad
        assert isinstance(u, lib.nn.Parameter)
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
            u + 1
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            u.shape
        b = lib.nn.UninitializedBuffer()
        assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
        assert not isinstance(b, lib.nn.Parameter)


def test_materialize():
    for lib in (ember, torch):
        u = lib.nn.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        u.materialize((2, 3))
        assert type(u) is lib.nn.Parameter and u.shape == (2, 3)
        assert u.dtype is lib.float64 and not u.requires_grad
        b = lib.nn.UninitializedBuffer()
        b.materialize((4,), dtype=lib.float16)
        assert type(b) is lib.Tensor and b.shape == (4,) and b.dtype is lib.float16


def test_copies_and_pickles():
    m = ember.nn.LazyConv2d(3, 2)
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert repr(clone) == repr(m) and clone.has_uninitialized_params()
        clone(ember.ones(1, 4, 5, 5))
        assert type(clone) is ember.nn.Conv2d and clone.weight.shape == (3, 4, 2, 2)

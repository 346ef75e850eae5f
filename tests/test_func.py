"""torch.func (ember.func): grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,
hessian, functional_call, stack_module_state, replace_all_batch_norm_modules_ -- each run on
ember and on torch with the same inputs, results compared. vmap has its own file
(tests/test_vmap.py); the per-op forward rules are checked in tests/test_forward_ad.py.
"""
import numpy as np
import pytest

import ember

from .oracle import assert_close, check_raises

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal(4)


def both(fn):
    """fn(m) on ember and on torch, compared (tuples, dicts and tensors alike)."""
    ours = fn(ember)
    theirs = fn(torch)
    assert_close(_plain(ours), _plain(theirs))
    return ours


def _plain(x):
    if isinstance(x, dict):
        return [_plain(x[k]) for k in sorted(x)]
    if isinstance(x, (tuple, list)):
        return [_plain(y) for y in x]
    if hasattr(x, "detach"):
        return x.detach()
    return x


def _f(m, x, y):
    return (x.sin() * y).sum() + (x * x).mean()


def _t(m, a):
    return m.tensor(a)


def test_grad_argnums_and_has_aux():
    both(lambda m: m.func.grad(lambda x, y: _f(m, x, y))(_t(m, X), _t(m, Y)))
    both(lambda m: m.func.grad(lambda x, y: _f(m, x, y), argnums=(0, 1))(_t(m, X), _t(m, Y)))
    both(lambda m: m.func.grad(lambda x, y: (_f(m, x, y), x.cos()), argnums=1,
                               has_aux=True)(_t(m, X), _t(m, Y)))


def test_grad_and_value_and_nested_grad():
    both(lambda m: m.func.grad_and_value(lambda x, y: _f(m, x, y))(_t(m, X), _t(m, Y)))
    # second derivative of a scalar function: grad of grad
    both(lambda m: m.func.grad(m.func.grad(lambda s: s.sin() * s ** 3))(m.tensor(0.7)))


def test_grad_over_a_dict_of_parameters():
    def run(m):
        params = {"w": _t(m, X), "b": _t(m, Y)}
        return m.func.grad(lambda p, v: ((v @ p["w"] + p["b"]).tanh() ** 2).sum())(
            params, m.ones(3, dtype=m.float64))

    both(run)


def test_grad_refuses_a_non_scalar_output():
    check_raises(lambda m, x: m.func.grad(lambda v: v * 2)(x), [X])


def test_vjp_and_jvp():
    def run_vjp(m):
        out, fn = m.func.vjp(lambda x, y: (x * y).exp(), _t(m, X), _t(m, Y))
        return out, fn(m.ones(3, 4))

    def run_jvp(m):
        return m.func.jvp(lambda x, y: (x * y).exp().sum(1), (_t(m, X), _t(m, Y)),
                          (m.ones(3, 4), _t(m, Y)))

    both(run_vjp)
    both(run_jvp)


def test_jvp_has_aux_and_linearize():
    both(lambda m: m.func.jvp(lambda x: (x.sin(), x.cos()), (_t(m, X),), (_t(m, X),),
                              has_aux=True))

    def run_linearize(m):
        out, fn = m.func.linearize(lambda x: x.sin() * x, _t(m, X))
        return out, fn(m.ones(3, 4, dtype=m.float64)), fn(_t(m, X))

    both(run_linearize)
    for bad in (np.ones((3, 4), np.float32), np.ones((2, 4))):  # dtype, shape
        check_raises(lambda m, x, t: m.func.linearize(lambda v: v * 2, x)[1](t), [X, bad],
                     match="doesn't match the")


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobians(name):
    def run(m):
        jac = getattr(m.func, name)
        f = lambda x, y: (x * y).tanh() @ y  # noqa: E731
        return (jac(f)(_t(m, X), _t(m, Y)), jac(f, argnums=(0, 1))(_t(m, X), _t(m, Y)),
                jac(lambda x: (x.exp(), x.sum()), has_aux=True)(_t(m, Y)))

    both(run)


def test_hessian_matches_jacfwd_of_jacrev():
    both(lambda m: m.func.hessian(lambda x: (x.sin() * x.sum()).sum())(_t(m, Y)))
    both(lambda m: m.func.jacfwd(m.func.jacrev(lambda x: (x ** 3).prod()))(_t(m, Y)))


def test_jvp_refuses_mismatched_tangents():
    check_raises(lambda m, x: m.func.jvp(lambda v: v * 2, (x,), (x[:2],)), [X])


def _mlp(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(4, 5), m.nn.Tanh(), m.nn.Linear(5, 2))


_WEIGHTS = [a.detach().numpy() for a in _mlp(torch).parameters()]  # one set for both


def test_functional_call_and_grad_of_a_module():
    def run(m):
        model = _model(m)
        params = dict(model.named_parameters())
        x = _t(m, X)
        new = {k: v * 2 for k, v in params.items()}
        loss = lambda p: m.func.functional_call(model, p, (x,)).pow(2).sum()  # noqa: E731
        return m.func.functional_call(model, new, (x,)), m.func.grad(loss)(params)

    both(run)


def _model(m):
    model = _mlp(m).double()
    with m.no_grad():
        for p, w in zip(model.parameters(), _WEIGHTS):
            p.copy_(m.tensor(w.astype(np.float64)))
    return model


def test_functional_call_strict_and_several_dicts():
    def run(m):
        model = _model(m)
        params = dict(model.named_parameters())
        first = {k: v for k, v in params.items() if k.startswith("0.")}
        rest = {k: v for k, v in params.items() if not k.startswith("0.")}
        return m.func.functional_call(model, (first, rest), _t(m, X), strict=True)

    both(run)
    check_raises(lambda m: m.func.functional_call(_model(m), {"0.weight": m.zeros(5, 4)},
                                                  m.zeros(3, 4), strict=True))


def test_stack_module_state_and_ensembling():
    def run(m):
        models = [_model(m) for _ in range(3)]
        params, buffers = m.func.stack_module_state(models)
        base = models[0]

        def one(p, b, x):
            return m.func.functional_call(base, (p, b), (x,))

        return params, m.vmap(one, in_dims=(0, 0, None))(params, buffers, _t(m, X))

    both(run)


def test_replace_all_batch_norm_modules():
    def run(m):
        net = m.nn.Sequential(m.nn.Linear(4, 4), m.nn.BatchNorm1d(4))
        m.func.replace_all_batch_norm_modules_(net)
        bn = net[1]
        return bn.running_mean is None, bn.running_var is None, bn.track_running_stats

    assert run(ember) == run(torch) == (True, True, False)

"""ember.optim vs torch.optim: trajectories, state dicts in both directions, hooks, errors.

The trajectory tests feed both libraries the *same* gradient function (NumPy, float64, cast
to the parameters' dtype), so any difference comes from the optimizer arithmetic alone:
float64 must agree to ~1e-10, float32 to float32 precision. A second test drives training
through each library's own autograd on an nn.Linear with copied weights.
"""
import copy
import importlib
import pickle

import numpy as np
import pytest

import ember
from tests.oracle import check_raises

torch = pytest.importorskip("torch")

TOL = {"float64": (1e-10, 1e-12), "float32": (1e-5, 1e-6),
       "lbfgs": (1e-8, 1e-10)}  # float64 through ill-conditioned L-BFGS iterations

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.9), eps=1e-4, maximize=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True)),
    ("RMSprop", dict(lr=0.01, weight_decay=0.1, alpha=0.9, eps=1e-6)),
    ("RMSprop", dict(lr=0.01, maximize=True, centered=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-3)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True, eps=1e-4)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05)),  # 20 steps cross the rho_t > 5 switch (step 6)
    ("RAdam", dict(lr=0.05, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, t0=5, lambd=1e-3, alpha=0.5, weight_decay=0.1)),  # mu < 1 from t0
    ("ASGD", dict(lr=0.05, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.2))),
    ("Rprop", dict(lr=0.01, maximize=True)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CONFIGS)]

_rng = np.random.default_rng(0)
INIT = [_rng.standard_normal((3, 4)), _rng.standard_normal(4), _rng.standard_normal(2)]
A, T = _rng.standard_normal((3, 4)), _rng.standard_normal(4)


def grads(w, b, c):
    """The gradient of sum(tanh(w) A) + |b - T|^2 / 2 + 0.1 sum(w) . b + |c|^2
    + sin(c) . b[:2], in float64."""
    w, b, c = (np.asarray(x, dtype=np.float64) for x in (w, b, c))
    gw = A * (1 - np.tanh(w) ** 2) + 0.1 * b[None, :]
    gb = (b - T) + 0.1 * w.sum(0)
    gb[:2] += np.sin(c)
    gc = 2 * c + np.cos(c) * b[:2]
    return gw, gb, gc


def make_params(m, dtype):
    return [m.from_numpy(x.astype(dtype)).requires_grad_() for x in INIT]


def set_grads(m, params):
    for p, g in zip(params, grads(*[p.detach().numpy() for p in params])):
        p.grad = m.from_numpy(g.astype(str(p.dtype).split(".")[-1]))


def train(m, opt, params, steps):
    out = []
    for _ in range(steps):
        set_grads(m, params)
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out


def run(m, name, kwargs, dtype, steps=20):
    params = make_params(m, dtype)
    opt = getattr(m.optim, name)(params, **kwargs)
    return train(m, opt, params, steps), opt


def assert_trajectories(e, t, dtype):
    rtol, atol = TOL[dtype]
    for i, (pe, pt) in enumerate(zip(e, t)):
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"step {i + 1}")


def to_numpy(x):
    return x.detach().numpy()


def assert_same_state(se, st, dtype="float64"):
    """Two optimizer state_dicts agree: structure, keys, dtypes, values."""
    rtol, atol = TOL[dtype]
    assert list(se) == list(st) == ["state", "param_groups"]
    assert len(se["param_groups"]) == len(st["param_groups"])
    for ge, gt in zip(se["param_groups"], st["param_groups"]):
        assert ge == gt
    assert sorted(se["state"]) == sorted(st["state"])
    for k in st["state"]:
        _assert_same_value(se["state"][k], st["state"][k], rtol, atol)


def _assert_same_value(e, t, rtol, atol):
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{e!r} is not a tensor like {t!r}"
        assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(to_numpy(e), to_numpy(t), rtol=rtol, atol=atol)
    elif isinstance(t, dict):
        assert list(e) == list(t)
        for k in t:
            _assert_same_value(e[k], t[k], rtol, atol)
    elif isinstance(t, list):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            _assert_same_value(a, b, rtol, atol)
    elif isinstance(t, float):
        assert e == pytest.approx(t, rel=rtol, abs=atol)
    else:
        assert e == t


def convert(x, to):
    """A state_dict with every tensor moved to the other library (`to` is the module)."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        array = np.array(to_numpy(x))
        return to.from_numpy(array)
    if isinstance(x, dict):
        return {k: convert(v, to) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(convert(v, to) for v in x)
    return x


# ----------------------------------------------------------------------------------------------
# trajectories


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_trajectory_matches_torch(name, kwargs, dtype):
    e, e_opt = run(ember, name, kwargs, dtype)
    t, t_opt = run(torch, name, kwargs, dtype)
    assert_trajectories(e, t, dtype)
    assert_same_state(e_opt.state_dict(), t_opt.state_dict(), dtype)


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)), ("Adam", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True)), ("RMSprop", dict(lr=0.01, centered=True)),
    ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)), ("Adagrad", dict(lr=0.1)),
], ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_linear_model_through_autograd(name, kwargs, dtype):
    """Training a Linear through each library's autograd; weights copied from torch."""
    t_model = torch.nn.Linear(4, 3).to(getattr(torch, dtype))
    e_model = ember.nn.Linear(4, 3).to(getattr(ember, dtype))
    e_model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                             for k, v in t_model.state_dict().items()})
    x = np.linspace(-1, 1, 20, dtype=dtype).reshape(5, 4)
    y = np.cos(np.arange(15, dtype=dtype)).reshape(5, 3)
    out = []
    for m, model in ((ember, e_model), (torch, t_model)):
        opt = getattr(m.optim, name)(model.parameters(), **kwargs)
        traj = []
        for _ in range(20):
            opt.zero_grad()
            loss = ((model(m.from_numpy(x)) - m.from_numpy(y)) ** 2).mean()
            loss.backward()
            opt.step()
            traj.append([p.detach().numpy().copy() for p in model.parameters()])
        out.append(traj)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-4, 1e-5)
    for pe, pt in zip(*out):
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def test_per_group_options_and_add_param_group():
    out = []
    for m in (ember, torch):
        w, b, c = make_params(m, "float64")
        opt = m.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.2, "betas": (0.5, 0.6)}],
                           lr=0.05)
        traj = train(m, opt, [w, b, c], 5)  # c is not optimised yet
        opt.add_param_group({"params": c, "lr": 0.3, "amsgrad": True})
        traj += train(m, opt, [w, b, c], 5)
        out.append((traj, opt))
    for pe, pt in zip(out[0][0], out[1][0]):
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert_same_state(out[0][1].state_dict(), out[1][1].state_dict())
    assert repr(out[0][1]) == repr(out[1][1])


def test_tensor_lr():
    out = []
    for m in (ember, torch):
        params = make_params(m, "float64")
        opt = m.optim.SGD(params, lr=m.tensor(0.1), momentum=0.9)
        out.append(train(m, opt, params, 5))
    assert_trajectories(*out, "float64")


def test_parameters_without_grad_are_skipped():
    results = []
    for m in (ember, torch):
        w, b, c = make_params(m, "float64")
        opt = m.optim.Adam([w, b, c], lr=0.1)
        w.grad = m.ones(3, 4, dtype=m.float64)
        c.grad = m.ones(2, dtype=m.float64)
        opt.step()
        results.append((opt.state_dict(), b.detach().numpy().copy()))
    assert_same_state(results[0][0], results[1][0])
    assert sorted(results[0][0]["state"]) == [0, 2]
    np.testing.assert_array_equal(results[0][1], INIT[1])


def test_sgd_without_momentum_keeps_no_state():
    for m in (ember, torch):
        params = make_params(m, "float32")
        opt = m.optim.SGD(params, lr=0.1)
        train(m, opt, params, 2)
        assert opt.state_dict()["state"] == {}


def test_adagrad_creates_state_in_constructor():
    e = ember.optim.Adagrad(make_params(ember, "float64"), initial_accumulator_value=0.5)
    t = torch.optim.Adagrad(make_params(torch, "float64"), initial_accumulator_value=0.5)
    assert_same_state(e.state_dict(), t.state_dict())


# ----------------------------------------------------------------------------------------------
# step(closure), zero_grad, hooks


def test_step_closure_returns_loss_with_grad_enabled():
    for m in (ember, torch):
        w = m.ones(3, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.1)
        seen = []

        def closure():
            opt.zero_grad()
            seen.append(m.is_grad_enabled())
            loss = (w * w).sum()
            loss.backward()
            return loss

        with m.no_grad():
            loss = opt.step(closure)
        assert seen == [True]
        assert float(loss.detach()) == 3.0
        np.testing.assert_allclose(w.detach().numpy(), [0.8] * 3, rtol=1e-6)


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(set_to_none):
    results = []
    for m in (ember, torch):
        w = m.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        grad = w.grad
        opt = m.optim.SGD([w])
        opt.zero_grad(set_to_none=set_to_none)
        results.append(None if w.grad is None else (w.grad.numpy().tolist(), w.grad is grad))
    assert results[0] == results[1]


def test_step_hooks_order_args_and_removal():
    logs = []
    for m in (ember, torch):
        log = []
        w = m.ones(2, requires_grad=True)
        w.grad = m.ones(2)
        opt = m.optim.SGD([w], lr=0.5)
        pre = opt.register_step_pre_hook(
            lambda o, args, kwargs: log.append(("pre", o is opt, len(args), args[0] is opt,
                                                dict(kwargs), w.detach().numpy().tolist())))
        post = opt.register_step_post_hook(
            lambda o, args, kwargs: log.append(("post", w.detach().numpy().tolist())))
        module = importlib.import_module(m.__name__ + ".optim.optimizer")
        g_pre = module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
        g_post = module.register_optimizer_step_post_hook(
            lambda o, a, k: log.append("global post"))
        opt.step()
        pre.remove()
        post.remove()
        g_pre.remove()
        g_post.remove()
        opt.step()
        logs.append(log)
    assert logs[0] == logs[1]
    assert logs[0][0] == "global pre" and logs[0][-1] == "global post"


def test_step_pre_hook_can_replace_arguments():
    out = []
    for m in (ember, torch):
        w = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.5)

        def closure():
            opt.zero_grad()
            (w * 3).sum().backward()
            return "replaced"

        opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": closure}))
        out.append((opt.step(), w.detach().numpy().tolist()))
        opt.register_step_pre_hook(lambda o, args, kwargs: 5)
        with pytest.raises(RuntimeError):
            opt.step()
    assert out[0] == out[1]


def test_hooks_run_once_for_a_subclass_calling_super_step():
    calls = []

    class Scaled(ember.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    w = ember.ones(2, requires_grad=True)
    w.grad = ember.ones(2)
    opt = Scaled([w], lr=0.5)
    opt.register_step_pre_hook(lambda *a: calls.append("pre"))
    opt.step()
    assert calls == ["pre"]


def test_user_defined_optimizer():
    """The classic custom-optimizer recipe: subclass Optimizer, write step()."""
    out = []
    for m in (ember, torch):
        class PlainSGD(m.optim.Optimizer):
            def __init__(self, params, lr):
                super().__init__(params, dict(lr=lr))

            @m.no_grad()
            def step(self, closure=None):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.add_(p.grad, alpha=-group["lr"])
                            self.state[p]["seen"] = self.state[p].get("seen", 0) + 1

        params = make_params(m, "float64")
        opt = PlainSGD(params, lr=0.1)
        log = []
        opt.register_step_post_hook(lambda *a: log.append(1))
        traj = train(m, opt, params, 3)
        out.append((traj, opt.state_dict(), log))
    assert_trajectories(out[0][0], out[1][0], "float64")
    assert out[0][1] == out[1][1]
    assert out[0][2] == out[1][2] == [1, 1, 1]


def test_state_dict_hooks():
    for m in (ember, torch):
        w = m.ones(2, requires_grad=True)
        opt = m.optim.SGD([w], lr=0.5)
        log = []
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_state_dict_post_hook(lambda o, sd: log.append("first"), prepend=True)
        sd = opt.state_dict()
        assert sd["extra"] == 1 and log == ["pre", "first"]
        opt.register_load_state_dict_pre_hook(
            lambda o, sd: {k: v for k, v in sd.items() if k != "extra"})
        opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
        opt.load_state_dict(sd)
        assert log[-1] == "loaded"


# ----------------------------------------------------------------------------------------------
# state dicts


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_state_dict_from_torch_continues_like_torch(name, kwargs):
    """10 torch steps; its state_dict loaded into ember and into a fresh torch optimizer
    (loading casts the 0-d float32 state of NAdam/ASGD to the parameters' float64 in both);
    10 more steps in all three agree."""
    t_params = make_params(torch, "float64")
    t_opt = getattr(torch.optim, name)(t_params, **kwargs)
    train(torch, t_opt, t_params, 10)
    e_params = [ember.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in t_params]
    e_opt = getattr(ember.optim, name)(e_params, **kwargs)
    e_opt.load_state_dict(convert(t_opt.state_dict(), ember))
    t_params2 = [p.detach().clone().requires_grad_() for p in t_params]
    t_opt2 = getattr(torch.optim, name)(t_params2, **kwargs)
    t_opt2.load_state_dict(copy.deepcopy(t_opt.state_dict()))
    assert_same_state(e_opt.state_dict(), t_opt2.state_dict())
    e_traj = train(ember, e_opt, e_params, 10)
    assert_trajectories(e_traj, train(torch, t_opt2, t_params2, 10), "float64")
    assert_trajectories(e_traj, train(torch, t_opt, t_params, 10), "float32")


@pytest.mark.parametrize("name,kwargs", CONFIGS[::3], ids=IDS[::3])
def test_state_dict_from_ember_continues_in_torch(name, kwargs):
    e_params = make_params(ember, "float64")
    e_opt = getattr(ember.optim, name)(e_params, **kwargs)
    train(ember, e_opt, e_params, 10)
    t_params = [torch.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in e_params]
    t_opt = getattr(torch.optim, name)(t_params, **kwargs)
    t_opt.load_state_dict(convert(e_opt.state_dict(), torch))
    assert_trajectories(train(ember, e_opt, e_params, 10), train(torch, t_opt, t_params, 10),
                        "float64")


@pytest.mark.parametrize("name,kwargs", CONFIGS[1::4], ids=IDS[1::4])
def test_state_dict_round_trip_in_ember(name, kwargs):
    """Stopping, saving and resuming gives bit-identical training."""
    params = make_params(ember, "float32")
    opt = getattr(ember.optim, name)(params, **kwargs)
    train(ember, opt, params, 5)
    saved = copy.deepcopy(opt.state_dict())
    snapshot = [p.detach().clone() for p in params]
    uninterrupted = train(ember, opt, params, 5)
    params2 = [s.clone().requires_grad_() for s in snapshot]
    opt2 = getattr(ember.optim, name)(params2, **kwargs)
    opt2.load_state_dict(saved)
    resumed = train(ember, opt2, params2, 5)
    for sa, sb in zip(uninterrupted, resumed):
        for a, b in zip(sa, sb):
            np.testing.assert_array_equal(a, b)


def test_state_dict_through_files(tmp_path):
    """torch.save -> ember.load -> continue; ember.save -> torch.load -> continue."""
    if not hasattr(ember, "load") or not hasattr(ember, "save"):
        pytest.skip("ember.save/ember.load not available")
    t_params = make_params(torch, "float32")
    t_opt = torch.optim.Adam(t_params, lr=0.05, amsgrad=True)
    train(torch, t_opt, t_params, 5)
    torch.save(t_opt.state_dict(), tmp_path / "t.pt")
    e_params = [ember.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in t_params]
    e_opt = ember.optim.Adam(e_params, lr=0.05, amsgrad=True)
    e_opt.load_state_dict(ember.load(tmp_path / "t.pt"))
    assert_same_state(e_opt.state_dict(), t_opt.state_dict(), "float32")
    assert_trajectories(train(ember, e_opt, e_params, 5), train(torch, t_opt, t_params, 5),
                        "float32")
    ember.save(e_opt.state_dict(), tmp_path / "e.pt")
    t_opt2 = torch.optim.Adam([torch.from_numpy(p.detach().numpy().copy()).requires_grad_()
                               for p in e_params], lr=0.05, amsgrad=True)
    t_opt2.load_state_dict(torch.load(tmp_path / "e.pt"))
    assert_same_state(e_opt.state_dict(), t_opt2.state_dict(), "float32")


def test_load_state_dict_casts_like_torch():
    """A float32 state loaded for float64 parameters becomes float64, `step` stays float32;
    the loaded tensors are adopted, not copied, when no cast is needed."""
    out = []
    for m in (ember, torch):
        src = make_params(m, "float32")
        opt = m.optim.NAdam(src, lr=0.1)
        train(m, opt, src, 2)
        sd = opt.state_dict()
        dst = make_params(m, "float64")
        opt2 = m.optim.NAdam(dst, lr=0.1)
        opt2.load_state_dict(sd)
        state = opt2.state[dst[0]]
        out.append({k: str(v.dtype).split(".")[-1] for k, v in state.items()})
        opt3 = m.optim.NAdam(make_params(m, "float32"), lr=0.1)
        opt3.load_state_dict(sd)
        assert opt3.state_dict()["state"][0]["exp_avg"] is sd["state"][0]["exp_avg"]
    assert out[0] == out[1]
    assert out[0]["step"] == "float32" and out[0]["exp_avg"] == "float64"


def test_load_state_dict_errors():
    check_raises(lambda m: m.optim.SGD(make_params(m, "float32")).load_state_dict(
        {"state": {}, "param_groups": []}))
    check_raises(lambda m: m.optim.SGD(make_params(m, "float32")).load_state_dict(
        {"state": {}, "param_groups": [{"lr": 0.1, "params": [0]}]}))


def test_named_parameters_give_param_names():
    out = []
    for m in (ember, torch):
        model = m.nn.Linear(2, 3)
        opt = m.optim.SGD(model.named_parameters(), lr=0.1)
        out.append(opt.state_dict()["param_groups"])
        check_raises(lambda m_: m_.optim.SGD([("w", m_.ones(1, requires_grad=True)),
                                              m_.ones(1, requires_grad=True)]))
    assert out[0] == out[1]
    assert out[0][0]["param_names"] == ["weight", "bias"]


def test_pickle_and_deepcopy():
    params = make_params(ember, "float64")
    opt = ember.optim.Adam(params, lr=0.1)
    train(ember, opt, params, 2)
    for clone in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        assert repr(clone) == repr(opt)
        sd, sd2 = opt.state_dict(), clone.state_dict()
        assert sd["param_groups"] == sd2["param_groups"]
        for k in sd["state"]:
            for key, v in sd["state"][k].items():
                np.testing.assert_array_equal(v.numpy(), sd2["state"][k][key].numpy())
        clone.step()  # hooks dicts exist again


# ----------------------------------------------------------------------------------------------
# constructors: defaults (repr), errors


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "LBFGS"])
def test_defaults_and_repr_match_torch(name):
    e = getattr(ember.optim, name)(make_params(ember, "float32"))
    t = getattr(torch.optim, name)(make_params(torch, "float32"))
    assert repr(e) == repr(t)
    assert e.defaults == t.defaults


BAD_ARGS = [
    ("SGD", dict(lr=-1)), ("SGD", dict(momentum=-0.1)), ("SGD", dict(weight_decay=-1)),
    ("SGD", dict(nesterov=True)), ("SGD", dict(nesterov=True, momentum=0.9, dampening=0.1)),
    ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1)), ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(betas=(0.9, -0.1))), ("Adam", dict(weight_decay=-1)),
    ("Adam", dict(betas=(0, 0.99))), ("AdamW", dict(betas=(0.9, 1.5))),
    ("RMSprop", dict(lr=-1)), ("RMSprop", dict(eps=-1)), ("RMSprop", dict(momentum=-1)),
    ("RMSprop", dict(weight_decay=-1)), ("RMSprop", dict(alpha=-1)),
    ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adagrad", dict(eps=-1)), ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
    ("Adamax", dict(betas=(0.9, 1.0))), ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(weight_decay=-1)), ("ASGD", dict(weight_decay=-1)),
    ("Rprop", dict(etas=(1.5, 1.2))), ("Rprop", dict(etas=(0.5, 0.9))), ("LBFGS", dict(lr=-1)),
    ("Adam", dict(fused=True, foreach=True)), ("SGD", dict(fused=True, foreach=True)),
]


@pytest.mark.parametrize("name,kwargs", BAD_ARGS,
                         ids=[f"{n}-{'-'.join(k)}" for n, k in BAD_ARGS])
def test_constructor_errors_match_torch(name, kwargs):
    with pytest.raises(Exception) as t_info:
        getattr(torch.optim, name)(make_params(torch, "float32"), **kwargs)
    with pytest.raises(type(t_info.value)) as e_info:
        getattr(ember.optim, name)(make_params(ember, "float32"), **kwargs)
    assert str(e_info.value) == str(t_info.value)


def test_params_argument_errors():
    check_raises(lambda m: m.optim.SGD(m.ones(2, requires_grad=True)))
    check_raises(lambda m: m.optim.SGD([]))
    check_raises(lambda m: m.optim.SGD([{"params": {m.ones(2, requires_grad=True)}}]))
    check_raises(lambda m: m.optim.SGD([1.0]))
    check_raises(lambda m: m.optim.SGD([m.ones(2, requires_grad=True) * 2]))
    check_raises(lambda m: m.optim.SGD([{"params": [w := m.ones(2, requires_grad=True)]},
                                        {"params": [w]}]))
    check_raises(lambda m: m.optim.SGD([m.ones(2, requires_grad=True)]).add_param_group([]))
    with pytest.warns(UserWarning, match="duplicate parameters"):
        w = ember.ones(2, requires_grad=True)
        ember.optim.SGD([w, w])


def test_differentiable_is_not_supported():
    with pytest.raises(NotImplementedError):
        ember.optim.Adam(make_params(ember, "float32"), differentiable=True)


# ----------------------------------------------------------------------------------------------
# LBFGS

X0 = np.array([-1.2, 1.0, 0.5, -0.3])
W0 = _rng.standard_normal((2, 3))


def rosenbrock(m, x, w):
    r = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    return r + (w ** 2).sum() * 0.5 + (w.sum() - 1) ** 2


def quadratic(m, x, w):
    return ((x - 0.5) ** 2).sum() * 2 + ((w - 1) ** 2).sum() + (x[:2].sum() * w[0, 0]) * 0.1


def run_lbfgs(m, kwargs, dtype, loss_fn=rosenbrock, steps=4):
    x = m.from_numpy(X0.astype(dtype)).requires_grad_()
    w = m.from_numpy(W0.astype(dtype)).requires_grad_()
    opt = m.optim.LBFGS([x, w], **kwargs)

    def closure():
        opt.zero_grad()
        loss = loss_fn(m, x, w)
        loss.backward()
        return loss

    traj = []
    for _ in range(steps):
        loss = opt.step(closure)
        traj.append([np.array(float(loss.detach()))] + [p.detach().numpy().copy()
                                                        for p in (x, w)])
    return traj, opt, (x, w)


LBFGS_CONFIGS = [dict(), dict(line_search_fn="strong_wolfe"), dict(history_size=3, max_iter=5),
                 dict(lr=0.5, line_search_fn="strong_wolfe", history_size=2, max_iter=7),
                 dict(max_eval=3, line_search_fn="strong_wolfe"),
                 dict(tolerance_change=1e-3, tolerance_grad=1e-2, max_iter=50)]


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS, ids=[str(k) for k in LBFGS_CONFIGS])
def test_lbfgs_matches_torch(kwargs):
    e, e_opt, _ = run_lbfgs(ember, kwargs, "float64")
    t, t_opt, _ = run_lbfgs(torch, kwargs, "float64")
    assert_trajectories(e, t, "lbfgs")
    assert_same_state(e_opt.state_dict(), t_opt.state_dict(), "lbfgs")


@pytest.mark.parametrize("kwargs", LBFGS_CONFIGS[:3], ids=[str(k) for k in LBFGS_CONFIGS[:3]])
def test_lbfgs_float32(kwargs):
    e, _, _ = run_lbfgs(ember, kwargs, "float32", quadratic, steps=2)
    t, _, _ = run_lbfgs(torch, kwargs, "float32", quadratic, steps=2)
    for pe, pt in zip(e, t):
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_lbfgs_state_from_torch_continues():
    kwargs = dict(line_search_fn="strong_wolfe", max_iter=4, history_size=5)
    t, t_opt, (tx, tw) = run_lbfgs(torch, kwargs, "float64", steps=2)
    ex = ember.from_numpy(tx.detach().numpy().copy()).requires_grad_()
    ew = ember.from_numpy(tw.detach().numpy().copy()).requires_grad_()
    e_opt = ember.optim.LBFGS([ex, ew], **kwargs)
    e_opt.load_state_dict(convert(t_opt.state_dict(), ember))
    out = []
    for m, opt, params in ((ember, e_opt, (ex, ew)), (torch, t_opt, (tx, tw))):
        def closure():
            opt.zero_grad()
            loss = rosenbrock(m, *params)
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        out.append(([p.detach().numpy().copy() for p in params], opt.state_dict()))
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    assert_same_state(out[0][1], out[1][1], "lbfgs")


def test_lbfgs_errors():
    check_raises(lambda m: m.optim.LBFGS(make_params(m, "float32")).step())
    check_raises(lambda m: m.optim.LBFGS([{"params": [m.ones(1, requires_grad=True)]},
                                          {"params": [m.ones(1, requires_grad=True)]}]))
    def bad_line_search(m):
        w = m.ones(2, requires_grad=True)
        opt = m.optim.LBFGS([w], line_search_fn="armijo")
        opt.step(lambda: (w * w).sum().backward() or m.tensor(1.0))

    check_raises(bad_line_search)


def test_lbfgs_stops_at_tolerance_grad():
    """A zero gradient returns at once: one evaluation, nothing else in the state."""
    for m in (ember, torch):
        w = m.zeros(3, requires_grad=True)
        opt = m.optim.LBFGS([w])

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        opt.step(closure)
        assert opt.state_dict()["state"] == {0: {"func_evals": 1, "n_iter": 0}}


# ----------------------------------------------------------------------------------------------
# large parameters: updates shared out over the thread pool


LARGE = [(400, 500), (300, 400), (1000,), (7,)]  # 2 threads x SPLIT_ELEMENTS and more


def _large_trajectory(m, name, kwargs, steps=4):
    rng = np.random.default_rng(1)
    params = [m.from_numpy(rng.standard_normal(shape).astype(np.float32)).requires_grad_()
              for shape in LARGE]
    opt = getattr(m.optim, name)(params, **kwargs)
    out = []
    for _ in range(steps):
        for p in params:  # the same gradient in both libraries, from the current values
            v = p.detach().numpy()
            p.grad = m.from_numpy((np.sin(v) + 0.1 * v).astype(np.float32))
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out


@pytest.fixture
def two_threads():
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    yield
    ember.set_num_threads(before)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=IDS)
def test_large_parameters_updated_on_threads_match_torch(name, kwargs, two_threads):
    assert_trajectories(_large_trajectory(ember, name, kwargs),
                        _large_trajectory(torch, name, kwargs), "float32")


def test_updates_are_shared_by_size_and_only_when_worth_it(two_threads):
    from ember.optim.optimizer import _shares

    def work(*shapes):
        return [(ember.zeros(shape), {}, None) for shape in shapes]
    shares = _shares(work(*LARGE))
    assert len(shares) == 2
    sizes = [sum(p.numel() for p, _, _ in share) for share in shares]
    assert sorted(sizes) == [121007, 200000]  # the largest alone, the rest together
    assert len(_shares(work((100, 100), (100, 100)))) == 1  # too small to pay
    assert len(_shares(work((1000, 1000)))) == 1  # one parameter

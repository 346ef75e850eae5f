"""Adafactor, Muon and swap_in_optimizer_params_and_state against torch 2.13: trajectories
from the same gradients, state dicts, errors (the harness is tests/test_optim.py's)."""
import numpy as np
import pytest

import ember
from tests.oracle import check_raises
from tests.test_optim import assert_same_state, assert_trajectories, run

torch = pytest.importorskip("torch")

ADAFACTOR = [dict(), dict(lr=0.05, beta2_decay=-0.5, weight_decay=0.1),
             dict(lr=0.05, eps=(1e-3, 1e-2), d=2.0, maximize=True)]


@pytest.mark.parametrize("kwargs", ADAFACTOR)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_adafactor_trajectories(kwargs, dtype):
    (e, e_opt), (t, t_opt) = (run(m, "Adafactor", kwargs, dtype) for m in (ember, torch))
    assert_trajectories(e, t, dtype)
    assert_same_state(e_opt.state_dict(), t_opt.state_dict(), dtype)


def _muon_run(m, kwargs, steps=10):
    rng = np.random.default_rng(0)
    params = [m.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
              for shape in ((6, 4), (3, 7))]
    opt = m.optim.Muon(params, **kwargs)
    out = []
    for k in range(steps):
        for p in params:
            g = np.cos(p.detach().numpy() * (k + 1)) + 0.1 * k
            p.grad = m.tensor(g.astype(np.float32))
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out, opt


@pytest.mark.parametrize("kwargs", [dict(lr=0.02), dict(lr=0.05, nesterov=False, momentum=0.9),
                                    dict(lr=0.01, adjust_lr_fn="match_rms_adamw",
                                         weight_decay=0.0, ns_steps=3)])
def test_muon_trajectories(kwargs):
    (e, e_opt), (t, t_opt) = (_muon_run(m, kwargs) for m in (ember, torch))
    # Newton-Schulz runs in bfloat16 in both: the updates agree to bfloat16 precision
    for pe, pt in zip(e, t):
        for a, b in zip(pe, pt):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    assert list(e_opt.state_dict()["param_groups"][0]) == \
        list(t_opt.state_dict()["param_groups"][0])


@pytest.mark.parametrize("fn, match", [
    (lambda m: m.optim.Adafactor([m.ones(2, requires_grad=True)], lr=-1),
     "Learning rate should be >= 0"),
    (lambda m: m.optim.Adafactor([m.ones(2, requires_grad=True)], beta2_decay=0.5),
     "beta2_decay should be <= 0"),
    (lambda m: m.optim.Adafactor([m.ones(2, requires_grad=True)], d=0.5),
     "Clipping threshold d should be >= 1"),
    (lambda m: m.optim.Adafactor([m.ones(2, requires_grad=True)], eps=(-1, 1e-3)),
     "epsilon1 should be >= 0"),
    (lambda m: m.optim.Muon([m.ones(2, requires_grad=True)]), "Muon only supports 2D"),
    (lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], momentum=-1),
     "momentum should be >= 0"),
    (lambda m: m.optim.Muon([m.ones(2, 2, requires_grad=True)], adjust_lr_fn="x"),
     "Adjust learning rate function x is not supported"),
])
def test_errors_match_torch(fn, match):
    check_raises(fn, [], match=match)


def _trained(m):
    w = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    opt = m.optim.Adam([w], lr=0.1)
    w.grad = m.ones(2, 2)
    opt.step()
    return w, opt


def test_swap_in_optimizer_params_and_state():
    for m in (ember, torch):
        w, opt = _trained(m)
        other = m.zeros(2, 2, requires_grad=True)
        other.grad = m.ones(2, 2)
        swapped = {"state": {0: {"step": m.tensor(5.0), "exp_avg": m.zeros(2, 2),
                                 "exp_avg_sq": m.zeros(2, 2)}},
                   "param_groups": [dict(opt.state_dict()["param_groups"][0], lr=1.0)]}
        before = w.detach().clone()
        with m.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, swapped):
            assert opt.param_groups[0]["lr"] == 1.0
            opt.step()
        assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["params"][0] is w
        assert m.equal(w.detach(), before) and float(opt.state[w]["step"]) == 1.0
        assert float(swapped["state"][0]["step"]) == 6.0  # in-place edits propagate
        if m is ember:
            result_e = other.detach().numpy().copy()
        else:
            np.testing.assert_allclose(result_e, other.detach().numpy(), rtol=1e-6)


def test_swap_in_needs_state():
    for m in (ember, torch):
        opt = m.optim.Adam([m.ones(2, requires_grad=True)])
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with m.optim.swap_in_optimizer_params_and_state(opt, {}, {}):
                pass

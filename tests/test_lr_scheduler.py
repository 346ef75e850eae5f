"""ember.optim.lr_scheduler and swa_utils vs torch: lr sequences, warnings, state dicts.

Every schedule runs 50 steps in both libraries on a two-group optimizer (SGD with momentum,
and Adam for the momentum-cycling schedules) and must produce the same floats: the
recursive formulas are evaluated in the same order, so equality is exact (checked with
rtol 1e-12).
"""
import copy
import warnings

import numpy as np
import pytest

import ember
from tests.oracle import check_raises

torch = pytest.importorskip("torch")


def make_optimizer(m, kind="SGD", lr=0.1):
    params = [m.zeros(2, requires_grad=True), m.zeros(3, requires_grad=True)]
    groups = [{"params": [params[0]]}, {"params": [params[1]], "lr": lr * 2}]
    if kind == "SGD":
        return m.optim.SGD(groups, lr=lr, momentum=0.9)
    return getattr(m.optim, kind)(groups, lr=lr)


def _L(m):
    return m.optim.lr_scheduler


SCHEDULES = {
    "LambdaLR": lambda m, o: _L(m).LambdaLR(o, lambda e: 0.95 ** e),
    "LambdaLR-list": lambda m, o: _L(m).LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: _L(m).MultiplicativeLR(o, lambda e: 0.97),
    "StepLR": lambda m, o: _L(m).StepLR(o, 7, gamma=0.5),
    "MultiStepLR": lambda m, o: _L(m).MultiStepLR(o, [5, 12, 12, 30], gamma=0.3),
    "ConstantLR": lambda m, o: _L(m).ConstantLR(o, factor=0.3, total_iters=8),
    "LinearLR": lambda m, o: _L(m).LinearLR(o, start_factor=0.1, end_factor=0.9,
                                            total_iters=17),
    "ExponentialLR": lambda m, o: _L(m).ExponentialLR(o, 0.93),
    "PolynomialLR": lambda m, o: _L(m).PolynomialLR(o, total_iters=30, power=2.0),
    "CosineAnnealingLR": lambda m, o: _L(m).CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: _L(m).CosineAnnealingWarmRestarts(
        o, T_0=4, T_mult=2, eta_min=0.01),
    "CAWR-mult1": lambda m, o: _L(m).CosineAnnealingWarmRestarts(o, T_0=7),
    "CyclicLR": lambda m, o: _L(m).CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=6),
    "CyclicLR-triangular2": lambda m, o: _L(m).CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=5,
                                                        mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: _L(m).CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                      mode="exp_range", gamma=0.97),
    "CyclicLR-scale_fn": lambda m, o: _L(m).CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                     scale_fn=lambda x: 1 / (x + 1),
                                                     scale_mode="iterations"),
    "CyclicLR-no-momentum": lambda m, o: _L(m).CyclicLR(o, 0.01, 0.1, step_size_up=3,
                                                        cycle_momentum=False),
    "OneCycleLR": lambda m, o: _L(m).OneCycleLR(o, 0.5, total_steps=51),
    "OneCycleLR-three_phase": lambda m, o: _L(m).OneCycleLR(
        o, [0.5, 0.3], epochs=5, steps_per_epoch=11, anneal_strategy="linear",
        three_phase=True, div_factor=10.0, final_div_factor=100.0, base_momentum=0.8,
        max_momentum=[0.9, 0.95]),
    "SequentialLR": lambda m, o: _L(m).SequentialLR(
        o, [_L(m).LinearLR(o, 0.1, total_iters=5), _L(m).CosineAnnealingLR(o, 20),
            _L(m).ExponentialLR(o, 0.9)], milestones=[5, 30]),
    "ChainedScheduler": lambda m, o: _L(m).ChainedScheduler(
        [_L(m).ConstantLR(o, 0.5, 4), _L(m).ExponentialLR(o, 0.95)]),
    "SWALR": lambda m, o: m.optim.swa_utils.SWALR(o, swa_lr=0.05, anneal_epochs=5),
    "SWALR-linear": lambda m, o: m.optim.swa_utils.SWALR(o, swa_lr=[0.01, 0.02],
                                                         anneal_epochs=0,
                                                         anneal_strategy="linear"),
}


def momentum_of(group):
    return group.get("momentum", group.get("betas"))


def lr_sequence(m, name, kind, steps=50):
    opt = make_optimizer(m, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = SCHEDULES[name](m, opt)
    seq = [(scheduler.get_last_lr(), [momentum_of(g) for g in opt.param_groups])]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        seq.append((scheduler.get_last_lr(), [momentum_of(g) for g in opt.param_groups]))
    return seq, scheduler, opt


def assert_same_sequence(e, t):
    assert len(e) == len(t)
    for i, ((lr_e, mom_e), (lr_t, mom_t)) in enumerate(zip(e, t)):
        np.testing.assert_allclose(lr_e, lr_t, rtol=1e-12, atol=0, err_msg=f"lr at step {i}")
        np.testing.assert_allclose(mom_e, mom_t, rtol=1e-12, atol=0,
                                   err_msg=f"momentum at step {i}")


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence_matches_torch(name, kind):
    e, e_sched, _ = lr_sequence(ember, name, kind)
    t, t_sched, _ = lr_sequence(torch, name, kind)
    assert_same_sequence(e, t)
    assert_same_scheduler_state(e_sched.state_dict(), t_sched.state_dict())


def assert_same_scheduler_state(e, t):
    assert sorted(e) == sorted(t)
    for key in t:
        if key == "_schedulers":
            for a, b in zip(e[key], t[key]):
                assert_same_scheduler_state(a, b)
        elif key == "lr_lambdas":
            assert [x is None for x in e[key]] == [x is None for x in t[key]]
        else:
            assert e[key] == pytest.approx(t[key], rel=1e-12) if isinstance(t[key], float) \
                else e[key] == t[key], key


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                                  "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
                                  "LambdaLR", "CosineAnnealingWarmRestarts"])
def test_step_with_epoch_uses_the_closed_form(name):
    """step(epoch) jumps (closed form where torch has one) and warns like torch."""
    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = SCHEDULES[name](m, opt)
        lrs, caught = [], []
        for epoch in (3, 10, 7, 25, 2.5, 40):
            if name != "CosineAnnealingWarmRestarts" and isinstance(epoch, float):
                continue
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                opt.step()
                scheduler.step(epoch)
            caught.append(sorted(str(x.message)[:40] for x in w))
            lrs.append(scheduler.get_last_lr())
        out.append((lrs, caught))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    assert out[0][1] == out[1][1]


def test_tensor_lr_is_updated_in_place():
    out = []
    for m in (ember, torch):
        w = m.zeros(2, requires_grad=True)
        opt = m.optim.Adam([w], lr=m.tensor(0.1))
        lr_tensor = opt.param_groups[0]["lr"]
        scheduler = m.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        for _ in range(3):
            opt.step()
            scheduler.step()
        assert opt.param_groups[0]["lr"] is lr_tensor
        last = scheduler.get_last_lr()[0]
        assert last is not lr_tensor
        out.append(float(lr_tensor))
    assert out[0] == out[1] == pytest.approx(0.0125)


# ----------------------------------------------------------------------------------------------
# warnings


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_scheduler_step_before_optimizer_step_warns():
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.StepLR(opt, 3)
        messages = _warnings_of(scheduler.step)
        assert len(messages) == 1
        assert messages[0].startswith("Detected call of `lr_scheduler.step()` before "
                                      "`optimizer.step()`")


def test_right_order_does_not_warn():
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.StepLR(opt, 3)
        assert _warnings_of(lambda: (opt.step(), scheduler.step(), opt.step(),
                                     scheduler.step())) == []


def test_overridden_optimizer_step_warns():
    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.StepLR(opt, 3)
        opt.step = lambda: None
        out.append(_warnings_of(scheduler.step))
    assert out[0] == out[1] and len(out[0]) == 1
    assert "overridden" in out[0][0]


def test_get_lr_outside_step_warns():
    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.StepLR(opt, 3)
        out.append(_warnings_of(scheduler.get_lr))
    assert out[0] == out[1] == ["To get the last learning rate computed by the scheduler, "
                                "please use `get_last_lr()`."]


def test_epoch_argument_warns():
    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        opt.step()
        plateau = m.optim.lr_scheduler.ReduceLROnPlateau(opt)
        out.append(_warnings_of(lambda: (scheduler.step(4), plateau.step(1.0, 3))))
    assert out[0] == out[1] and len(out[0]) == 2
    assert out[0][0].startswith("The epoch parameter in `scheduler.step()` was not necessary")


# ----------------------------------------------------------------------------------------------
# state dicts and resuming


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_state_dict_round_trip_continues(name):
    """Save after 20 steps, load into a fresh optimizer + scheduler, continue: same lrs as
    the uninterrupted run."""
    e, _, _ = lr_sequence(ember, name, "SGD", steps=30)
    opt = make_optimizer(ember)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = SCHEDULES[name](ember, opt)
    for _ in range(20):
        opt.step()
        scheduler.step()
    opt_state, sched_state = opt.state_dict(), copy.deepcopy(scheduler.state_dict())
    opt2 = make_optimizer(ember)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler2 = SCHEDULES[name](ember, opt2)
    opt2.load_state_dict(opt_state)
    scheduler2.load_state_dict(sched_state)
    for step in range(21, 31):
        opt2.step()
        scheduler2.step()
        np.testing.assert_allclose(scheduler2.get_last_lr(), e[step][0], rtol=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "OneCycleLR", "CyclicLR",
                                  "SequentialLR", "LambdaLR", "CosineAnnealingWarmRestarts"])
def test_torch_state_dict_loads_into_ember(name):
    t, t_sched, t_opt = lr_sequence(torch, name, "SGD", steps=12)
    e_opt = make_optimizer(ember)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e_sched = SCHEDULES[name](ember, e_opt)
    e_opt.load_state_dict({"state": {}, "param_groups": copy.deepcopy(
        t_opt.state_dict()["param_groups"])})
    e_sched.load_state_dict(copy.deepcopy(t_sched.state_dict()))
    for _ in range(10):
        for opt, sched in ((e_opt, e_sched), (t_opt, t_sched)):
            opt.step()
            sched.step()
        np.testing.assert_allclose(e_sched.get_last_lr(), t_sched.get_last_lr(), rtol=1e-12)


def test_lambda_state_dict_saves_callable_objects():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.LambdaLR(opt, [Decay(0.5), lambda e: 1.0])
        state = scheduler.state_dict()
        out.append(state["lr_lambdas"])
        state["lr_lambdas"][0]["rate"] = 0.25
        scheduler.load_state_dict(state)
        assert scheduler.lr_lambdas[0].rate == 0.25
        assert "lr_lambdas" in state  # the caller's dict is left whole
    assert out[0] == out[1] == [{"rate": 0.25}, None]


def test_resume_with_last_epoch():
    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        check_raises(lambda m_: m_.optim.lr_scheduler.StepLR(make_optimizer(m_), 3,
                                                             last_epoch=5), ())
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = m.optim.lr_scheduler.CosineAnnealingLR(opt, 10, last_epoch=4)
        seq = [scheduler.get_last_lr()]
        for _ in range(5):
            opt.step()
            scheduler.step()
            seq.append(scheduler.get_last_lr())
        out.append(seq)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def test_resume_error_message():
    with pytest.raises(KeyError) as t_info:
        torch.optim.lr_scheduler.StepLR(make_optimizer(torch), 3, last_epoch=5)
    with pytest.raises(KeyError) as e_info:
        ember.optim.lr_scheduler.StepLR(make_optimizer(ember), 3, last_epoch=5)
    assert str(e_info.value) == str(t_info.value)


# ----------------------------------------------------------------------------------------------
# ReduceLROnPlateau


PLATEAU = [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.1,
                        threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.05]),
           dict(patience=0, factor=0.9, min_lr=0.09, eps=1e-3),
           dict(mode="max", threshold_mode="rel", patience=1, cooldown=1)]


@pytest.mark.parametrize("kwargs", PLATEAU, ids=[str(k) for k in PLATEAU])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    out = []
    for m in (ember, torch):
        opt = make_optimizer(m)
        scheduler = m.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        lrs = []
        for i in range(50):
            metric = np.sin(i / 3.0) + (i % 7) * 0.01
            scheduler.step(m.tensor(metric) if i % 2 else float(metric))
            lrs.append(scheduler.get_last_lr())
        out.append((lrs, scheduler.state_dict()))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    assert out[0][1] == out[1][1]


def test_reduce_lr_on_plateau_state_dict_round_trip():
    opt = make_optimizer(ember)
    scheduler = ember.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=1)
    for metric in (1.0, 0.5, 0.4):
        scheduler.step(metric)
    state = copy.deepcopy(scheduler.state_dict())
    other = ember.optim.lr_scheduler.ReduceLROnPlateau(make_optimizer(ember))
    other.load_state_dict(state)
    assert other.mode == "max" and other.best == 1.0 and other.mode_worse == -np.inf
    assert other._is_better(2.0, 1.0) and not other._is_better(0.5, 1.0)


# ----------------------------------------------------------------------------------------------
# constructor errors


BAD = {
    "ConstantLR-factor": lambda m, o: _L(m).ConstantLR(o, factor=1.5),
    "LinearLR-start": lambda m, o: _L(m).LinearLR(o, start_factor=0),
    "LinearLR-end": lambda m, o: _L(m).LinearLR(o, end_factor=1.5),
    "LambdaLR-count": lambda m, o: _L(m).LambdaLR(o, [lambda e: 1.0]),
    "MultiplicativeLR-callable": lambda m, o: _L(m).MultiplicativeLR(o, [1.0, 2.0]),
    "CAWR-T_0": lambda m, o: _L(m).CosineAnnealingWarmRestarts(o, T_0=0),
    "CAWR-T_mult": lambda m, o: _L(m).CosineAnnealingWarmRestarts(o, T_0=2, T_mult=1.5),
    "CAWR-eta_min": lambda m, o: _L(m).CosineAnnealingWarmRestarts(o, T_0=2, eta_min="x"),
    "CyclicLR-mode": lambda m, o: _L(m).CyclicLR(o, 0.1, 1.0, mode="sine"),
    "CyclicLR-lengths": lambda m, o: _L(m).CyclicLR(o, [0.1], 1.0),
    "CyclicLR-momentum": lambda m, o: _L(m).CyclicLR(m.optim.Adagrad([m.ones(
        1, requires_grad=True)]), 0.1, 1.0),
    "OneCycleLR-steps": lambda m, o: _L(m).OneCycleLR(o, 0.1),
    "OneCycleLR-total": lambda m, o: _L(m).OneCycleLR(o, 0.1, total_steps=0),
    "OneCycleLR-epochs": lambda m, o: _L(m).OneCycleLR(o, 0.1, epochs=0, steps_per_epoch=3),
    "OneCycleLR-pct": lambda m, o: _L(m).OneCycleLR(o, 0.1, total_steps=5, pct_start=1),
    "OneCycleLR-anneal": lambda m, o: _L(m).OneCycleLR(o, 0.1, total_steps=5,
                                                       anneal_strategy="exp"),
    "Sequential-empty": lambda m, o: _L(m).SequentialLR(o, [], []),
    "Sequential-milestones": lambda m, o: _L(m).SequentialLR(o, [_L(m).StepLR(o, 2)], [3]),
    "Sequential-plateau": lambda m, o: _L(m).SequentialLR(
        o, [_L(m).StepLR(o, 2), _L(m).ReduceLROnPlateau(o)], [3]),
    "Sequential-optimizer": lambda m, o: _L(m).SequentialLR(
        o, [_L(m).StepLR(make_optimizer(m), 2)], []),
    "Chained-empty": lambda m, o: _L(m).ChainedScheduler([]),
    "Plateau-factor": lambda m, o: _L(m).ReduceLROnPlateau(o, factor=1.0),
    "Plateau-mode": lambda m, o: _L(m).ReduceLROnPlateau(o, mode="best"),
    "Plateau-threshold_mode": lambda m, o: _L(m).ReduceLROnPlateau(o, threshold_mode="x"),
    "Plateau-min_lr": lambda m, o: _L(m).ReduceLROnPlateau(o, min_lr=[0.1]),
    "not-an-optimizer": lambda m, o: _L(m).StepLR(object(), 3),
    "SWALR-strategy": lambda m, o: m.optim.swa_utils.SWALR(o, 0.1, anneal_strategy="exp"),
    "SWALR-epochs": lambda m, o: m.optim.swa_utils.SWALR(o, 0.1, anneal_epochs=-1),
    "OneCycleLR-too-many-steps": lambda m, o: _step_n(_L(m).OneCycleLR(o, 0.1, total_steps=2),
                                                      3),
}


def _step_n(scheduler, n):
    for _ in range(n):
        scheduler.step()


@pytest.mark.parametrize("name", list(BAD))
def test_constructor_errors_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as t_info:
            BAD[name](torch, make_optimizer(torch))
        with pytest.raises(type(t_info.value)) as e_info:
            BAD[name](ember, make_optimizer(ember))
    assert str(e_info.value) == str(t_info.value)


# ----------------------------------------------------------------------------------------------
# swa_utils


def _models():
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)).double()
    e_model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Linear(4, 2)).double()
    e_model.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                             for k, v in t_model.state_dict().items()})
    return e_model, t_model


AVERAGES = {
    "swa": lambda su: {},
    "ema": lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
    "ema-avg_fn": lambda su: dict(avg_fn=su.get_ema_avg_fn(0.8)),
    "swa-multi": lambda su: dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
    "swa-avg_fn": lambda su: dict(avg_fn=su.get_swa_avg_fn()),
    "swa-buffers": lambda su: dict(use_buffers=True),
}


@pytest.mark.parametrize("kind", list(AVERAGES))
def test_averaged_model_matches_torch(kind):
    out = []
    for m, model in zip((ember, torch), _models()):
        su = m.optim.swa_utils
        averaged = su.AveragedModel(model, **AVERAGES[kind](su))
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        scheduler = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        x = m.from_numpy(np.linspace(-1, 1, 15).reshape(5, 3))
        for _ in range(6):
            opt.zero_grad()
            (model(x) ** 2).sum().backward()
            opt.step()
            averaged.update_parameters(model)
            scheduler.step()
        out.append(({k: v.detach().numpy() for k, v in averaged.state_dict().items()},
                    averaged(x).detach().numpy(), scheduler.get_last_lr()))
    (e_state, e_out, e_lr), (t_state, t_out, t_lr) = out
    assert list(e_state) == list(t_state)
    for key in t_state:
        np.testing.assert_allclose(e_state[key], t_state[key], rtol=1e-12, atol=1e-14)
    assert e_state["n_averaged"].dtype == np.int64 and int(e_state["n_averaged"]) == 6
    # an output near zero comes out of cancellation: its last bits depend on the BLAS kernel
    # and thread count, so the bound is relative to the outputs' scale
    np.testing.assert_allclose(e_out, t_out, rtol=1e-12, atol=1e-12 * np.abs(t_out).max())
    assert e_lr == pytest.approx(t_lr, rel=1e-12)


def test_averaged_model_errors_and_decay():
    su = ember.optim.swa_utils
    with pytest.raises(AssertionError):
        su.AveragedModel(ember.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                         multi_avg_fn=su.get_swa_multi_avg_fn())
    check_raises(lambda m: m.optim.swa_utils.get_ema_multi_avg_fn(1.5))
    check_raises(lambda m: m.optim.swa_utils.get_ema_avg_fn(-0.1))


def test_update_bn_without_batchnorm_is_a_no_op():
    model = ember.nn.Linear(3, 2)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    calls = []
    ember.optim.swa_utils.update_bn(iter([calls.append(1)]), model)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())


def test_update_bn_matches_torch():
    batchnorm = pytest.importorskip("ember.nn.modules.batchnorm")
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).double()
    e_model = ember.nn.Sequential(ember.nn.Linear(3, 4), batchnorm.BatchNorm1d(4)).double()
    with ember.no_grad():
        for e_param, t_param in zip(e_model.parameters(), t_model.parameters()):
            e_param.copy_(ember.from_numpy(t_param.detach().numpy().copy()))
    data = [np.random.default_rng(i).standard_normal((6, 3)) for i in range(4)]
    for m, model in ((ember, e_model), (torch, t_model)):
        model.eval()
        loader = [(m.from_numpy(x), m.zeros(6)) for x in data]
        m.optim.swa_utils.update_bn(loader, model)
        assert not model.training
        assert model[1].momentum == 0.1
    for key, value in t_model.state_dict().items():
        np.testing.assert_allclose(e_model.state_dict()[key].numpy(), value.numpy(),
                                   rtol=1e-10)

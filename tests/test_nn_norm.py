"""Normalization layers and functions vs torch: BatchNorm running statistics over train steps,
InstanceNorm, LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm; state_dict versions; errors;
float64 gradcheck and gradgradcheck of the fused ops."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

from .oracle import as_numpy, assert_close, check, check_raises
from .test_nn_activation import build, compare_modules

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)


def A(*shape, dtype="float32"):
    return (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)


BATCHNORMS = [
    ("BatchNorm1d", (3,), {}, (4, 3)), ("BatchNorm1d", (3,), {}, (4, 3, 5)),
    ("BatchNorm2d", (3,), {"momentum": 0.3}, (2, 3, 4, 2)),
    ("BatchNorm3d", (2,), {}, (2, 2, 3, 2, 2)),
    ("BatchNorm1d", (3,), {"momentum": None}, (5, 3)),
    ("BatchNorm2d", (3,), {"affine": False}, (2, 3, 2, 2)),
    ("BatchNorm2d", (3,), {"bias": False, "eps": 1e-3}, (2, 3, 2, 2)),
    ("BatchNorm2d", (3,), {"track_running_stats": False}, (2, 3, 2, 2)),
    ("SyncBatchNorm", (3,), {}, (2, 3, 4)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 5)), ("InstanceNorm1d", (3,), {}, (3, 5)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 3, 4, 2)),
    ("InstanceNorm2d", (3,), {"track_running_stats": True, "affine": True}, (2, 3, 4, 2)),
    ("InstanceNorm3d", (2,), {"track_running_stats": True}, (2, 2, 3, 2, 2)),
    ("InstanceNorm3d", (2,), {}, (2, 3, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", [pytest.param(*c, id=f"{c[0]}{c[2]}{c[3]}")
                                                    for c in BATCHNORMS])
def test_running_statistics_over_train_steps_then_eval(name, args, kwargs, shape):
    t, e = build(name, *args, **kwargs)
    if t.weight is not None:  # non-trivial affine parameters
        t.weight.data.uniform_(0.5, 1.5)
    if t.bias is not None:
        t.bias.data.uniform_(-0.5, 0.5)
    e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                       for k, v in t.state_dict().items()})
    for step in range(3):
        for p in list(t.parameters()) + list(e.parameters()):
            p.grad = None
        compare_modules(t, e, A(*shape))
        for key, tb in t.state_dict().items():
            assert_close(e.state_dict()[key], tb, 1e-5, 1e-6, f"step {step}: {key}")
    t.eval()
    e.eval()
    compare_modules(t, e, A(*shape))


def test_default_init_and_buffers():
    e = ember.nn.BatchNorm2d(4)
    assert list(e.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert np.all(as_numpy(e.weight) == 1) and np.all(as_numpy(e.bias) == 0)
    assert np.all(as_numpy(e.running_mean) == 0) and np.all(as_numpy(e.running_var) == 1)
    assert e.num_batches_tracked.dtype is ember.int64 and int(e.num_batches_tracked) == 0
    assert [n for n, _ in e.named_buffers()] == ["running_mean", "running_var",
                                                 "num_batches_tracked"]
    assert ember.nn.BatchNorm2d(4, track_running_stats=False).running_mean is None
    for layer in (ember.nn.LayerNorm((2, 3)), ember.nn.GroupNorm(2, 4), ember.nn.RMSNorm(5),
                  ember.nn.InstanceNorm1d(3, affine=True)):
        assert np.all(as_numpy(layer.weight) == 1)
        bias = getattr(layer, "bias", None)
        assert bias is None or np.all(as_numpy(bias) == 0)
    e.running_mean.fill_(3)
    e.num_batches_tracked.fill_(7)
    e.weight.data.fill_(2)
    e.reset_parameters()
    assert np.all(as_numpy(e.running_mean) == 0) and int(e.num_batches_tracked) == 0
    assert np.all(as_numpy(e.weight) == 1)


def test_batchnorm_state_dict_version_and_missing_counter():
    """A checkpoint without num_batches_tracked loads when its metadata says version < 2 (or
    has no version); with version 2 the key is reported missing -- in both libraries."""
    assert ember.nn.BatchNorm1d(3).state_dict()._metadata[""] == {"version": 2}
    assert torch.nn.BatchNorm1d(3).state_dict()._metadata[""] == {"version": 2}
    for version, loads in ((1, True), (None, True), (2, False)):
        for lib in (ember, torch):
            module = lib.nn.BatchNorm1d(3)
            module.num_batches_tracked.fill_(5)
            state = OrderedDict((k, v.clone()) for k, v in module.state_dict().items()
                                if k != "num_batches_tracked")
            if version is not None:
                state._metadata = OrderedDict({"": {"version": version}})
            if loads:
                assert module.load_state_dict(state).missing_keys == []
                assert int(module.num_batches_tracked) == 5  # the current value is kept
            else:
                with pytest.raises(RuntimeError, match="num_batches_tracked"):
                    module.load_state_dict(state)


def test_momentum_none_is_cumulative_average():
    e = ember.nn.BatchNorm1d(2, momentum=None)
    batches = [A(4, 2) for _ in range(3)]
    for b in batches:
        e(ember.from_numpy(b))
    means = np.mean([b.mean(0) for b in batches], axis=0)
    variances = np.mean([b.var(0, ddof=1) for b in batches], axis=0)
    np.testing.assert_allclose(as_numpy(e.running_mean), means, rtol=1e-5)
    np.testing.assert_allclose(as_numpy(e.running_var), variances, rtol=1e-5)


def test_running_var_uses_unbiased_variance():
    x = A(6, 3)
    rm, rv = ember.zeros(3), ember.ones(3)
    EF.batch_norm(ember.from_numpy(x), rm, rv, training=True, momentum=1.0)
    np.testing.assert_allclose(as_numpy(rv), x.var(0, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(as_numpy(rm), x.mean(0), rtol=1e-5, atol=1e-6)


NORM_MODULES = [
    ("LayerNorm", (4,), {}, (2, 3, 4)), ("LayerNorm", ((3, 4),), {}, (2, 3, 4)),
    ("LayerNorm", ([4],), {"elementwise_affine": False}, (3, 4)),
    ("LayerNorm", (4,), {"bias": False, "eps": 1e-3}, (3, 4)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)), ("GroupNorm", (3, 6), {"affine": False}, (2, 6, 2, 2)),
    ("GroupNorm", (1, 4), {"bias": False}, (2, 4)),
    ("RMSNorm", (4,), {}, (2, 3, 4)), ("RMSNorm", ([3, 4],), {"eps": 1e-3}, (2, 3, 4)),
    ("RMSNorm", (4,), {"elementwise_affine": False}, (3, 4)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4)), ("LocalResponseNorm", (2, 0.1, 0.5, 2.0), {},
                                                 (1, 4, 3, 3)),
    ("LocalResponseNorm", (4,), {"alpha": 0.2}, (1, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", [pytest.param(*c, id=f"{c[0]}{c[1]}{c[2]}")
                                                    for c in NORM_MODULES])
def test_norm_module_against_torch(name, args, kwargs, shape):
    t, e = build(name, *args, **kwargs)
    for p in t.parameters():
        p.data.uniform_(0.5, 1.5)
    e.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                       for k, v in t.state_dict().items()})
    compare_modules(t, e, A(*shape), rtol=1e-5, atol=1e-5)


def test_rms_norm_default_eps_is_the_dtypes_epsilon():
    x = np.zeros((2, 3), dtype=np.float32)  # mean(x^2) = 0: the output shows eps's effect
    x[0, 0] = 1e-4
    for dtype in ("float32", "float64"):
        check(lambda m, a: m.nn.functional.rms_norm(a, (3,)), [x.astype(dtype)])
    check(lambda m, a: m.nn.RMSNorm(3)(a), [x], grad=False)


def test_layer_norm_keeps_nothing_but_its_input():
    """An in-place op on the output does not invalidate the backward (torch behaves alike)."""
    for lib in (torch, ember):
        x = lib.from_numpy(A(3, 4)).requires_grad_()
        w = lib.from_numpy(A(4)).requires_grad_()
        y = lib.nn.functional.layer_norm(x, (4,), w)
        y.relu_()
        y.sum().backward()
        assert x.grad is not None and w.grad is not None


@pytest.mark.parametrize("features", [256, 1024, 1500])
def test_layer_norm_of_rows_far_from_zero(features):
    """Rows of up to 1024 features have their means summed by BLAS, longer ones by NumPy's
    pairwise sum: either way float32 data at 1e4 +- 1 standardizes about as accurately as
    torch's does, forward and backward, measured against the same computation in float64."""
    rng = np.random.default_rng(features)
    x = (1e4 + rng.standard_normal((64, features))).astype(np.float32)
    g = rng.standard_normal((64, features)).astype(np.float32)
    w = rng.standard_normal(features).astype(np.float32)
    results = {}
    for name, dtype in (("float32", np.float32), ("float64", np.float64)):
        a = ember.from_numpy(x.astype(dtype)).requires_grad_()
        weight = ember.from_numpy(w.astype(dtype)).requires_grad_()
        y = EF.layer_norm(a, (features,), weight)
        y.backward(ember.from_numpy(g.astype(dtype)))
        results[name] = [t.detach().numpy().astype(np.float64) for t in (y, a.grad, weight.grad)]
    tx = torch.from_numpy(x).requires_grad_()
    tw = torch.from_numpy(w).requires_grad_()
    ty = torch.nn.functional.layer_norm(tx, (features,), tw)
    ty.backward(torch.from_numpy(g))
    for ours, exact, theirs in zip(results["float32"], results["float64"],
                                   (ty.detach(), tx.grad, tw.grad)):
        scale = np.abs(exact).max()
        error = np.abs(ours - exact).max() / scale
        torch_error = np.abs(theirs.double().numpy() - exact).max() / scale
        # x - mean loses the digits of 1e4 that float32 keeps: ~5e-4 of the scale in both
        assert error < 3 * torch_error + 1e-5


def test_half_precision_forward():
    for fn in [lambda m, a: m.nn.functional.layer_norm(a, (5,)),
               lambda m, a: m.nn.functional.group_norm(a, 2),
               lambda m, a: m.nn.functional.rms_norm(a, (5,)),
               lambda m, a: m.nn.functional.batch_norm(a, None, None, training=True)]:
        check(fn, [A(3, 4, 5, dtype="float16")], grad=False, rtol=2e-3, atol=2e-3)
    check(lambda m, a, w: m.nn.functional.layer_norm(a, (5,), w),
          [A(3, 5, dtype="float16"), A(5)], grad=False, rtol=2e-3, atol=2e-3)


def test_instance_norm_function_running_stats_and_errors():
    x = A(2, 3, 5)
    rm, rv = np.zeros(3, np.float32), np.ones(3, np.float32)
    t_rm, t_rv = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    e_rm, e_rv = ember.from_numpy(rm.copy()), ember.from_numpy(rv.copy())
    t = torch.nn.functional.instance_norm(torch.from_numpy(x), t_rm, t_rv, momentum=0.2)
    e = EF.instance_norm(ember.from_numpy(x), e_rm, e_rv, momentum=0.2)
    assert_close(e, t)
    assert_close(e_rm, t_rm)
    assert_close(e_rv, t_rv)
    check(lambda m, a, mean, var: m.nn.functional.instance_norm(a, mean, var,
                                                                use_input_stats=False),
          [x, rm + 0.3, rv + 0.5], grad=False)
    check_raises(lambda m, a: m.nn.functional.instance_norm(a), [A(2, 3, 1)])
    check_raises(lambda m, a: m.nn.InstanceNorm1d(3, affine=True)(a), [A(2, 4, 5)])
    check_raises(lambda m, a: m.nn.InstanceNorm2d(3)(a), [A(2, 3)])
    with pytest.warns(UserWarning, match="does not match num_features"):
        ember.nn.InstanceNorm1d(3)(ember.from_numpy(A(2, 4, 5)))


def test_instance_norm_old_state_dict_with_running_stats_is_reported():
    e = ember.nn.InstanceNorm1d(3)
    state = {"running_mean": ember.zeros(3), "running_var": ember.ones(3)}
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        e.load_state_dict(state)
    t = torch.nn.InstanceNorm1d(3)
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        t.load_state_dict({"running_mean": torch.zeros(3), "running_var": torch.ones(3)})


def test_errors_match_torch():
    x = A(2, 3, 4)
    for fn in [lambda m, a: m.nn.functional.layer_norm(a, (3,)),
               lambda m, a: m.nn.functional.layer_norm(a, (4,), m.ones(3)),
               lambda m, a: m.nn.functional.layer_norm(a, (4,), None, m.ones(3)),
               lambda m, a: m.nn.functional.layer_norm(a, (4,), m.ones(4, dtype=m.float64)),
               lambda m, a: m.nn.functional.group_norm(a, 2),
               lambda m, a: m.nn.functional.group_norm(a[0, 0], 1),
               lambda m, a: m.nn.functional.group_norm(a, 3, m.ones(4)),
               lambda m, a: m.nn.functional.group_norm(a[:1, :, :1], 3),
               lambda m, a: m.nn.functional.batch_norm(a[:1, :, 0], None, None, training=True),
               lambda m, a: m.nn.functional.batch_norm(a, None, None),
               lambda m, a: m.nn.functional.batch_norm(a, m.zeros(4), m.ones(4)),
               lambda m, a: m.nn.functional.batch_norm(a, m.zeros(3), m.ones(3), m.ones(2)),
               lambda m, a: m.nn.functional.batch_norm(a, m.zeros(3), m.ones(3),
                                                       training=True, momentum=None),
               lambda m, a: m.nn.functional.batch_norm(a, m.zeros(3, dtype=m.float64),
                                                       m.ones(3, dtype=m.float64)),
               lambda m, a: m.nn.functional.rms_norm(a, (3,)),
               lambda m, a: m.nn.functional.local_response_norm(a[0], 2),
               lambda m, a: m.nn.BatchNorm1d(3)(a[0, 0]),
               lambda m, a: m.nn.BatchNorm2d(3)(a),
               lambda m, a: m.nn.BatchNorm3d(3)(a),
               lambda m, a: m.nn.GroupNorm(2, 3)]:
        check_raises(fn, [x])
    check_raises(lambda m, a: m.nn.functional.layer_norm(a, (2,)), [np.ones((3, 2), np.int64)])


def test_sync_batchnorm_conversion():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    converted = ember.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], ember.nn.SyncBatchNorm)
    assert converted[1].weight is model[1].weight
    assert converted[1].running_mean is model[1].running_mean
    assert repr(converted[1]) == repr(torch.nn.SyncBatchNorm(4))


FUSED = {
    "layer_norm": lambda x, w, b: EF.layer_norm(x, (4,), w, b),
    "layer_norm_plain": lambda x, w, b: EF.layer_norm(x, (3, 4)),
    "group_norm": lambda x, w, b: EF.group_norm(x.reshape(1, 4, 3), 2, w, b),
    "batch_norm_train": lambda x, w, b: EF.batch_norm(x.reshape(3, 4), None, None, w, b, True),
    "batch_norm_eval": lambda x, w, b: EF.batch_norm(
        x.reshape(3, 4), ember.arange(4.0, dtype=ember.float64) / 4,
        ember.arange(1.0, 5.0, dtype=ember.float64), w, b, False),
    "instance_norm": lambda x, w, b: EF.instance_norm(x.reshape(1, 4, 3), weight=w, bias=b),
    "rms_norm": lambda x, w, b: EF.rms_norm(x, (4,), w, 1e-5),
    "local_response_norm": lambda x, w, b: EF.local_response_norm(x.reshape(1, 4, 3), 3, 0.3),
}


@pytest.mark.parametrize("name", list(FUSED))
def test_gradcheck_and_gradgradcheck(name):
    x = ember.from_numpy(rng.standard_normal((3, 4))).requires_grad_()
    w = ember.from_numpy(rng.uniform(0.5, 1.5, 4)).requires_grad_()
    b = ember.from_numpy(rng.standard_normal(4)).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.autograd.gradcheck(FUSED[name], (x, w, b))
        assert ember.autograd.gradgradcheck(FUSED[name], (x, w, b), atol=1e-4)


def test_grad_fn_names_match_torch():
    x = A(3, 4)
    for fn in [lambda m, a: m.nn.functional.layer_norm(a, (4,)),
               lambda m, a: m.nn.functional.group_norm(a, 2),
               lambda m, a: m.nn.functional.batch_norm(a, None, None, training=True)]:
        e = fn(ember, ember.from_numpy(x).requires_grad_())
        t = fn(torch, torch.from_numpy(x).requires_grad_())
        assert e.grad_fn.name() == type(t.grad_fn).__name__


def test_large_eval_batch_norm_on_threads():
    """An eval-mode batch norm of a million elements or more runs in row blocks on two threads
    (_parallel.SPLIT_CHEAP_ELEMENTS); values and gradients stay torch's."""
    x = A(4, 16, 128, 128)
    mean, var = A(16), np.abs(A(16)) + 0.5
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(2)
        check(lambda m, x, w, b: m.nn.functional.batch_norm(
            x, m.tensor(mean), m.tensor(var), w, b), [x, A(16), A(16)],
            rtol=1e-5, atol=1e-5, grad_rtol=1e-4, grad_atol=1e-4)
    finally:
        ember.set_num_threads(before)

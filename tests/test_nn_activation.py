"""Activation layers and functions vs torch: modules (weights copied through state_dict),
in-place forms, the softmax family, torch-level names, errors, and float64 gradcheck /
gradgradcheck of the rules. `build` and `compare_modules` are shared with the other nn tests.
"""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

from .oracle import as_numpy, assert_close, check, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def A(*shape, dtype="float32", scale=2.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def build(name, *args, **kwargs):
    """The module `name` in torch (seeded) and in ember, ember's weights copied from torch."""
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(ember.nn, name)(*args, **kwargs)
    state = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in t.state_dict().items()}
    e.load_state_dict(state)
    return t, e


def compare_modules(t, e, *arrays, rtol=1e-5, atol=1e-6, grad_rtol=1e-4, grad_atol=1e-5):
    """Same repr, state_dict layout, output, and gradients of inputs and parameters."""
    assert repr(e) == repr(t)
    assert [(k, tuple(v.shape)) for k, v in e.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in t.state_dict().items()]
    t_in = [torch.from_numpy(a.copy()).requires_grad_(a.dtype.kind == "f") for a in arrays]
    e_in = [ember.from_numpy(a.copy()).requires_grad_(a.dtype.kind == "f") for a in arrays]
    t_out, e_out = t(*t_in), e(*e_in)
    assert_close(e_out, t_out, rtol, atol, "forward")
    if not t_out.requires_grad:
        return t_out, e_out
    seed = rng.standard_normal(tuple(t_out.shape)).astype(as_numpy(t_out).dtype)
    t_out.backward(torch.from_numpy(seed))
    e_out.backward(ember.from_numpy(seed.copy()))
    for k, (ti, ei) in enumerate(zip(t_in, e_in)):
        if ti.requires_grad:
            assert_close(ei.grad, ti.grad, grad_rtol, grad_atol, f"input grad {k}")
    t_params, e_params = dict(t.named_parameters()), dict(e.named_parameters())
    assert list(e_params) == list(t_params)
    for name, tp in t_params.items():
        if tp.grad is not None:
            assert_close(e_params[name].grad, tp.grad, grad_rtol, grad_atol, f"{name}.grad")
    return t_out, e_out


MODULES = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("LeakyReLU", (0.2,), {}), ("PReLU", (), {}),
    ("PReLU", (6, 0.1), {}), ("RReLU", (0.1, 0.3), {}), ("ELU", (1.5,), {}), ("SELU", (), {}),
    ("CELU", (0.7,), {}), ("GELU", (), {}), ("GELU", ("tanh",), {}), ("SiLU", (), {}),
    ("Mish", (), {}), ("Softplus", (2, 3), {}), ("Softsign", (), {}), ("Softshrink", (0.3,), {}),
    ("Hardshrink", (0.3,), {}), ("Tanhshrink", (), {}), ("Tanh", (), {}), ("Sigmoid", (), {}),
    ("Hardtanh", (-2, 3), {}), ("Hardtanh", (), {"min_val": -0.5}), ("Hardsigmoid", (), {}),
    ("Hardswish", (), {}), ("LogSigmoid", (), {}), ("GLU", (1,), {}), ("GLU", (), {}),
    ("Threshold", (0.1, 20), {}), ("Softmax", (1,), {}), ("LogSoftmax", (1,), {}),
    ("Softmin", (1,), {}), ("Softmax2d", (), {}), ("Flatten", (), {}), ("Flatten", (0, 1), {}),
    ("Unflatten", (1, (2, 3)), {}), ("Unflatten", (-1, [2, 2]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", [pytest.param(n, a, k, id=f"{n}{a}{k}")
                                              for n, a, k in MODULES])
def test_module_against_torch(name, args, kwargs):
    t, e = build(name, *args, **kwargs)
    t.eval()  # RReLU's eval slope is deterministic; the others do not care
    e.eval()
    x = A(2, 6, 4)  # dim 1 and the last dim even, for GLU and Unflatten
    compare_modules(t, e, x)


INPLACE = [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("ELU", (1.5,)), ("SELU", ()),
           ("CELU", (0.7,)), ("SiLU", ()), ("Mish", ()), ("Hardtanh", (-1, 1)),
           ("Hardsigmoid", ()), ("Hardswish", ()), ("Threshold", (0.1, 20.0)),
           ("RReLU", (0.1, 0.3))]


@pytest.mark.parametrize("name,args", [pytest.param(n, a, id=n) for n, a in INPLACE])
def test_inplace_module_on_a_view(name, args):
    """inplace=True writes through a view of an intermediate; gradients reach the leaf."""
    t, e = build(name, *args, inplace=True)
    t.eval()
    e.eval()
    assert repr(e) == repr(t)
    x = A(3, 5)
    g = A(3, 5)
    results = []
    for lib, mod in ((torch, t), (ember, e)):
        leaf = lib.from_numpy(x.copy()).requires_grad_()
        base = leaf * 1.5
        view = base[:, 1:4]
        out = mod(view)
        assert out is view
        base.backward(lib.from_numpy(g.copy()))
        results.append((base, leaf.grad))
    assert_close(results[1][0], results[0][0], what="base after the in-place write")
    assert_close(results[1][1], results[0][1], 1e-5, 1e-6, "leaf grad")


def test_inplace_function_returns_its_input_and_bumps_version():
    for fn in ("relu", "elu", "leaky_relu", "hardtanh", "selu", "celu", "silu", "mish",
               "hardsigmoid", "hardswish", "relu6"):
        values = A(4)
        x = ember.from_numpy(values.copy())
        version = x._version
        out = getattr(EF, fn)(x, inplace=True)
        assert out is x and x._version == version + 1, fn
        assert_close(x, getattr(torch.nn.functional, fn)(torch.from_numpy(values)), what=fn)
    for fn in ("relu_", "elu_", "leaky_relu_", "hardtanh_", "selu_", "celu_", "rrelu_"):
        x = A(6)
        e_out = getattr(EF, fn)(ember.from_numpy(x.copy()))
        t_out = getattr(torch.nn.functional, fn)(torch.from_numpy(x.copy()))
        assert_close(e_out, t_out)
    x = A(5)
    assert_close(EF.threshold_(ember.from_numpy(x.copy()), 0.2, -1.0),
                 torch.nn.functional.threshold_(torch.from_numpy(x.copy()), 0.2, -1.0))


def test_prelu_default_init_and_parameter():
    e = ember.nn.PReLU(4)
    assert [n for n, _ in e.named_parameters()] == ["weight"]
    assert e.weight.shape == (4,) and np.all(as_numpy(e.weight) == np.float32(0.25))
    assert np.all(as_numpy(ember.nn.PReLU(init=0.1).weight) == np.float32(0.1))
    e.weight.data.fill_(0.5)
    e.reset_parameters()
    assert np.all(as_numpy(e.weight) == np.float32(0.25))


def test_rrelu_training_draws_slopes_in_range_and_reproduces():
    x = ember.from_numpy(A(2000)).requires_grad_()
    ember.manual_seed(3)
    y = EF.rrelu(x, 0.1, 0.3, training=True)
    ember.manual_seed(3)
    again = EF.rrelu(x, 0.1, 0.3, training=True)
    assert np.array_equal(as_numpy(y), as_numpy(again))
    xs, ys = as_numpy(x), as_numpy(y)
    pos = xs > 0
    assert np.array_equal(ys[pos], xs[pos])
    slopes = ys[~pos] / xs[~pos]
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.3 + 1e-6
    assert abs(slopes.mean() - 0.2) < 0.01 and slopes.std() > 0.04  # spread over the interval
    y.sum().backward()
    grad = as_numpy(x.grad)
    assert np.allclose(grad[pos], 1) and np.allclose(grad[~pos], slopes, rtol=1e-5)
    # eval: the mean slope, as torch
    check(lambda m, a: m.nn.functional.rrelu(a, 0.1, 0.3, training=False), [A(3, 4)])
    m = ember.nn.RReLU(0.1, 0.3)
    assert m.training and not np.array_equal(as_numpy(m(x)), as_numpy(m(x)))


def test_softmax_implicit_dim_warns_and_follows_torch_rule():
    for shape in [(5,), (3, 4), (2, 3, 4), (2, 3, 4, 2)]:
        x = A(*shape)
        for fn in ("softmax", "log_softmax", "softmin"):
            with pytest.warns(UserWarning, match="Implicit dimension choice"):
                e = getattr(EF, fn)(ember.from_numpy(x.copy()))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = getattr(torch.nn.functional, fn)(torch.from_numpy(x.copy()))
            assert_close(e, t)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        ember.nn.Softmax()(ember.from_numpy(A(2, 3)))


def test_softmax_stability_and_dtype_argument():
    big = np.array([[1000.0, 1001.0, 999.0], [-1000.0, -1e4, -999.0]], dtype=np.float32)
    check(lambda m, a: m.nn.functional.softmax(a, 1), [big])
    check(lambda m, a: m.nn.functional.log_softmax(a, 1), [big])
    check(lambda m, a: m.softmax(a, 0, dtype=m.float64), [A(3, 2)])
    check(lambda m, a: a.softmax(-1), [A(3, 2)])
    check(lambda m, a: a.log_softmax(dim=0, dtype=m.float64), [A(3, 2)])
    check(lambda m, a: m.nn.functional.softmax(a, 0, dtype=m.float32), [A(4).astype("int64")],
          grad=False)
    inf_row = np.array([[-np.inf, 0.0, -np.inf]], dtype=np.float32)
    check(lambda m, a: m.softmax(a, 1), [inf_row], grad=False)


def test_grad_fn_names_match_torch():
    fns = {
        "relu": lambda m, x: m.nn.functional.relu(x),
        "gelu": lambda m, x: m.nn.functional.gelu(x),
        "silu": lambda m, x: m.nn.functional.silu(x),
        "elu": lambda m, x: m.nn.functional.elu(x),
        "selu": lambda m, x: m.nn.functional.selu(x),
        "celu": lambda m, x: m.nn.functional.celu(x),
        "relu6": lambda m, x: m.nn.functional.relu6(x),
        "leaky": lambda m, x: m.nn.functional.leaky_relu(x),
        "softplus": lambda m, x: m.nn.functional.softplus(x),
        "mish": lambda m, x: m.nn.functional.mish(x),
        "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
        "hardswish": lambda m, x: m.nn.functional.hardswish(x),
        "threshold": lambda m, x: m.nn.functional.threshold(x, 0.0, 1.0),
        "softmax": lambda m, x: m.nn.functional.softmax(x, 1),
        "log_softmax": lambda m, x: m.nn.functional.log_softmax(x, 1),
        "softsign": lambda m, x: m.nn.functional.softsign(x),
        "glu": lambda m, x: m.nn.functional.glu(x),
        "prelu": lambda m, x: m.nn.functional.prelu(x, x.new_ones(1)),
    }
    for name, fn in fns.items():
        e = fn(ember, ember.from_numpy(A(2, 4)).requires_grad_())
        t = fn(torch, torch.from_numpy(A(2, 4)).requires_grad_())
        assert e.grad_fn.name() == type(t.grad_fn).__name__, name


def test_torch_level_names():
    x = A(3, 4)
    for fn in [lambda m, a: m.selu(a), lambda m, a: m.celu(a, 0.5),
               lambda m, a: m.rrelu(a), lambda m, a: m.prelu(a, m.ones(4) * 0.3),
               lambda m, a: m.hardshrink(a, 0.3), lambda m, a: a.hardshrink(),
               lambda m, a: a.prelu(m.ones(1) * 0.2), lambda m, a: m.threshold(a, 0.5, 3.0),
               lambda m, a: m.softmax(a, 1), lambda m, a: m.log_softmax(a, 0),
               lambda m, a: m.nn.functional.tanh(a), lambda m, a: m.nn.functional.sigmoid(a)]:
        check(fn, [x])
    for fn in [lambda m, a: m.selu_(a * 1), lambda m, a: m.celu_(a * 1, 2.0),
               lambda m, a: m.relu_(a * 1),
               lambda m, a: m.threshold_(a * 1, 0.0, -1.0), lambda m, a: m.rrelu_(a * 1)]:
        check(fn, [x])


def test_errors_match_torch():
    x = A(2, 3, 4)
    for fn in [lambda m, a: m.nn.functional.glu(a, 1), lambda m, a: m.nn.functional.glu(a[0, 0, 0]),
               lambda m, a: m.nn.functional.glu(a, 5), lambda m, a: m.nn.functional.softmax(a, 3),
               lambda m, a: m.softmax(a, -4), lambda m, a: m.nn.functional.hardtanh(a, 2.0, 1.0),
               lambda m, a: m.nn.functional.prelu(a, m.ones(4)),
               lambda m, a: m.nn.functional.prelu(a, m.ones(3, 1)),
               lambda m, a: m.nn.functional.prelu(a[0, 0], m.ones(4)),
               lambda m, a: m.nn.functional.celu(a, 0.0),
               lambda m, a: m.nn.functional.softshrink(a, -1.0),
               lambda m, a: m.nn.functional.gelu(a, approximate="foo"),
               lambda m, a: m.nn.Softmax2d()(a[0, 0]),
               lambda m, a: m.nn.Hardtanh(1.0, 1.0)]:
        check_raises(fn, [x])
    ints = np.arange(6).reshape(2, 3) - 3
    for name in ("elu", "leaky_relu", "gelu", "silu", "mish", "softplus", "hardsigmoid",
                 "hardswish", "logsigmoid", "softshrink", "hardshrink", "selu"):
        check_raises(lambda m, a: getattr(m.nn.functional, name)(a), [ints])
    for fn in [lambda m, a: m.softmax(a, 0), lambda m, a: m.log_softmax(a, 0),
               lambda m, a: m.nn.functional.glu(a, 1),
               lambda m, a: m.nn.functional.threshold(a > 0, 0, 1)]:
        check_raises(fn, [ints[:, :2]])
    check_raises(lambda m, a: m.softmax(a), [x])  # torch.softmax needs dim


def test_integer_inputs_where_torch_accepts_them():
    ints = np.arange(-4, 4).astype(np.int64)
    for fn in [lambda m, a: m.nn.functional.relu(a), lambda m, a: m.nn.functional.relu6(a * 3),
               lambda m, a: m.nn.functional.hardtanh(a, -1.5, 2.5),
               lambda m, a: m.nn.functional.threshold(a, 0.5, 2.5),
               lambda m, a: m.nn.functional.softsign(a),
               lambda m, a: m.nn.functional.tanhshrink(a)]:
        check(fn, [ints], grad=False)


def test_gumbel_softmax():
    logits = ember.from_numpy(A(5, 4)).requires_grad_()
    soft = EF.gumbel_softmax(logits, tau=0.5)
    assert np.allclose(as_numpy(soft).sum(1), 1, atol=1e-6)
    hard = EF.gumbel_softmax(logits, hard=True)
    h = as_numpy(hard)
    assert np.array_equal(h.sum(1), np.ones(5)) and set(np.unique(h)) <= {0.0, 1.0}
    (hard * ember.arange(4.0)).sum().backward()  # straight-through: the soft sample's gradient
    assert logits.grad is not None and np.any(as_numpy(logits.grad) != 0)


FUSED = {
    "softmax": lambda x: EF.softmax(x, 1),
    "log_softmax": lambda x: EF.log_softmax(x, 0),
    "gelu": lambda x: EF.gelu(x),
    "gelu_tanh": lambda x: EF.gelu(x, approximate="tanh"),
    "silu": EF.silu,
    "mish": EF.mish,
    "elu": lambda x: EF.elu(x, 1.3),
    "celu": lambda x: EF.celu(x, 0.6),
    "selu": EF.selu,
    "softplus": lambda x: EF.softplus(x, 1.5, 2.0),
    "logsigmoid": EF.logsigmoid,
    "leaky_relu": lambda x: EF.leaky_relu(x, 0.3),
    "hardswish": EF.hardswish,
    "hardsigmoid": EF.hardsigmoid,
    "glu": lambda x: EF.glu(x, 1),
    "prelu": lambda x: EF.prelu(x, x.new_ones(4) * 0.2 + x[0].detach() * 0),
}


@pytest.mark.parametrize("name", list(FUSED))
def test_gradcheck_and_gradgradcheck(name):
    x = ember.from_numpy(rng.uniform(-2.5, 2.5, (3, 4))).requires_grad_()
    fn = FUSED[name]
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


def test_prelu_gradgradcheck_with_weight():
    x = ember.from_numpy(rng.uniform(-2, 2, (2, 3, 2))).requires_grad_()
    w = ember.from_numpy(rng.uniform(0, 1, 3)).requires_grad_()
    assert ember.autograd.gradcheck(EF.prelu, (x, w))
    assert ember.autograd.gradgradcheck(EF.prelu, (x, w))


def test_flatten_unflatten():
    check(lambda m, a: m.nn.Flatten(1, 2)(a), [A(2, 3, 4, 5)])
    check(lambda m, a: m.nn.Sequential(m.nn.Flatten(), m.nn.Unflatten(1, (4, 3)))(a),
          [A(2, 3, 4)])
    check(lambda m, a: m.nn.Unflatten(0, m.Size([2, 1]))(a), [A(2, 3)])
    check_raises(lambda m: m.nn.Unflatten(1, 6))
    check_raises(lambda m: m.nn.Unflatten(1, (2, 3.0)))
    assert repr(ember.nn.Unflatten(1, (2, 3))) == repr(torch.nn.Unflatten(1, (2, 3)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", [lambda m, x: m.relu(x),
                                lambda m, x: m.nn.functional.threshold(x, 0.5, 0.0)])
def test_relu_backward_zeroes_inf_and_nan_gradients_like_torch(dtype, fn):
    """Where the input was cut off the gradient is 0 even if the incoming one is inf or nan
    (torch uses where(); a plain dy * mask would give nan), a nan input keeps its gradient
    (torch drops it where x <= threshold, which nan is not), and no warning is printed."""
    values = [-1.0, 0.0, 0.5, 2.0, 3.0, float("nan"), -0.0]
    grads = [float("inf"), float("nan"), -float("inf"), 1.0, -float("inf"), 4.0, 2.0]
    results = []
    for m in (ember, torch):
        x = m.tensor(values, dtype=getattr(m, dtype), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fn(m, x).backward(m.tensor(grads, dtype=getattr(m, dtype)))
        results.append(as_numpy(x.grad.float()))
    np.testing.assert_array_equal(*results)


def test_large_relu_and_its_backward_on_threads():
    """Inputs of a million elements and more run relu and its backward in row blocks on two
    threads (_parallel.SPLIT_CHEAP_ELEMENTS): the values and gradients of one thread and of
    torch, infs and nans included."""
    x = np.random.default_rng(3).standard_normal((8, 4, 200, 200)).astype(np.float32)
    g = np.random.default_rng(4).standard_normal(x.shape).astype(np.float32)
    x.reshape(-1)[:5] = [np.nan, -0.0, 0.0, np.inf, -np.inf]
    g.reshape(-1)[5:8] = [np.inf, np.nan, -np.inf]
    results = {}
    before = ember.get_num_threads()
    try:
        for threads in (1, 2):
            ember.set_num_threads(threads)
            e = ember.tensor(x, requires_grad=True)
            y = ember.relu(e)
            y.backward(ember.tensor(g))
            results[threads] = (y.detach().numpy(), e.grad.numpy())
    finally:
        ember.set_num_threads(before)
    t = torch.tensor(x, requires_grad=True)
    ty = torch.relu(t)
    ty.backward(torch.tensor(g))
    for got in results.values():
        np.testing.assert_array_equal(got[0], ty.detach().numpy())
        np.testing.assert_array_equal(got[1], t.grad.numpy())

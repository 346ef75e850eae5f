"""The fast nn kernels against torch where the op table's small cases do not reach: special
values (inf, nan, signed zeros, overflow-prone magnitudes) through the branch-free selects,
half-precision gradients of the fused backward ops, large random inputs (long reductions,
erf's slices), statistics of inputs far from zero, and embedding gradients with heavily
repeated indices. bench/nn_kernels.py times the same kernels.
"""
import math

import numpy as np
import pytest

import ember

from .oracle import as_numpy, check, on_test_device

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def F(m):
    return m.nn.functional


# values where the selects and the overflow guards matter, all finite: every activation here
# is finite there in both libraries (non-finite inputs are checked separately below)
EDGES = np.array([-1e30, -200.0, -100.0, -90.0, -88.5, -50.0, -20.0, -3.0, -1.0, -1e-30, -0.0,
                  0.0, 1e-30, 1.0, 3.0, 20.0, 50.0, 88.5, 90.0, 100.0, 200.0], np.float32)

ACTIVATIONS = {
    "gelu": lambda m, x: F(m).gelu(x),
    "gelu_tanh": lambda m, x: F(m).gelu(x, approximate="tanh"),
    "silu": lambda m, x: F(m).silu(x),
    "mish": lambda m, x: F(m).mish(x),
    "softplus": lambda m, x: F(m).softplus(x),
    "softplus_small_threshold": lambda m, x: F(m).softplus(x, 0.5, 1.0),
    "elu": lambda m, x: F(m).elu(x, 0.7),
    "selu": lambda m, x: F(m).selu(x),
    "celu": lambda m, x: F(m).celu(x, 1.3),
    "leaky_relu": lambda m, x: F(m).leaky_relu(x, 0.1),
    "hardtanh": lambda m, x: F(m).hardtanh(x, -2.0, 3.0),
    "relu6": lambda m, x: F(m).relu6(x),
    "hardsigmoid": lambda m, x: F(m).hardsigmoid(x),
    "hardswish": lambda m, x: F(m).hardswish(x),
    "logsigmoid": lambda m, x: F(m).logsigmoid(x),
    "softshrink": lambda m, x: F(m).softshrink(x, 0.5),
    "hardshrink": lambda m, x: F(m).hardshrink(x, 0.5),
    "prelu": lambda m, x: F(m).prelu(x, m.tensor([0.25])),
    "threshold": lambda m, x: F(m).threshold(x, 0.5, -4.0),
}

# torch's float32 gelu cancels in 1 + erf(x / sqrt 2) for x < -3 (measured against float64's
# erf: absolute error up to 1.0e-6 near x = -3.5, on a result ~8e-4; ember's at most 2e-7), so
# the comparison is absolute, at twice torch's own error
TOLERANCES = {"gelu": dict(rtol=1e-5, atol=2e-6)}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_edges(name):
    """Forward and gradient at the edge values, in the middle of large random arrays (so the
    masks are unpredictable and the kernels run on whole arrays)."""
    x = rng.standard_normal((33, 70)).astype(np.float32) * 4
    x.flat[::37][:EDGES.size] = EDGES
    if name == "gelu_tanh":  # torch's tanh-form backward overflows x^3 beyond ~1e12
        x = np.clip(x, -1e4, 1e4)
    check(ACTIVATIONS[name], [x], **TOLERANCES.get(name, {}))


@pytest.mark.parametrize("name", ["gelu", "silu", "mish", "elu", "softplus", "leaky_relu",
                                  "hardswish", "hardsigmoid", "logsigmoid", "softshrink"])
def test_activation_non_finite_inputs_propagate(name):
    """nan stays nan; +-inf give what torch gives wherever torch's value is not nan."""
    x = ember.tensor([math.nan, math.inf, -math.inf], requires_grad=True)
    t = torch.tensor([math.nan, math.inf, -math.inf], requires_grad=True)
    e_out, t_out = ACTIVATIONS[name](ember, x), ACTIVATIONS[name](torch, t)
    e, tv = as_numpy(e_out), t_out.detach().numpy()
    assert math.isnan(e[0])
    known = ~np.isnan(tv)
    np.testing.assert_array_equal(e[known], tv[known])
    (e_grad,), (t_grad,) = ember.autograd.grad(e_out.sum(), x), torch.autograd.grad(t_out.sum(), t)
    eg, tg = as_numpy(e_grad), t_grad.numpy()
    known = ~np.isnan(tg)
    np.testing.assert_array_equal(eg[known], tg[known])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "mish", "elu", "softplus",
                                  "leaky_relu", "hardswish", "hardsigmoid", "logsigmoid",
                                  "softshrink", "hardtanh"])
def test_half_precision_gradients(name, dtype):
    """The fused backward kernels compute half types in float32 and round once, as torch."""
    x = (rng.standard_normal((6, 7)) * 3).astype(np.float32)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == "bfloat16" else dict(rtol=2e-3, atol=2e-3)
    x = x.astype(np.float16) if dtype == "float16" else x
    check(lambda m, a: ACTIVATIONS[name](m, a if dtype == "float16" else a.to(m.bfloat16)),
          [x], **tol)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_output_may_change_in_place_before_backward(approximate):
    """gelu keeps its slope's Phi(x) (or tanh) as a hidden workspace output, not its result:
    as in torch, changing the result in place leaves the backward valid."""
    x = rng.standard_normal((5, 7)).astype(np.float32)
    check(lambda m, a: F(m).gelu(a, approximate=approximate).mul_(2), [x])
    out = F(ember).gelu(ember.ones(3), approximate=approximate)
    assert isinstance(out, ember.Tensor) and out.shape == (3,)


def test_gelu_float32_erf_accuracy():
    """gelu's float32 erf: x Phi(x) within 0.5 |x| * 1.5e-7 (plus float32 rounding) of the
    exact value, over the range where Phi is neither 0 nor 1 in float32."""
    x = np.linspace(-9, 9, 200001).astype(np.float32)
    exact = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    got = as_numpy(F(ember).gelu(ember.from_numpy(x))).astype(np.float64)
    bound = 0.5 * np.abs(x) * 1.5e-7 + np.abs(exact) * 2 ** -23 + 1e-45
    assert np.all(np.abs(got - exact) <= bound)


def test_erf_float32_large_inputs_correctly_rounded_or_neighbour():
    """ember.erf on float32 (the tanh form, in slices of 65536): within one float32 step of
    the correctly rounded erf, non-contiguous input included."""
    x = rng.uniform(-5, 5, (300, 500)).astype(np.float32)
    got = as_numpy(ember.erf(ember.from_numpy(x).t()))
    exact = np.vectorize(math.erf)(x.T.astype(np.float64)).astype(np.float32)
    steps = np.abs(got.view(np.int32).astype(np.int64) - exact.view(np.int32).astype(np.int64))
    assert steps.max() <= 1


# ----------------------------------------------------------------------------------------------
# softmax family


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_softmax_family_dims_and_layouts(dim):
    x = (rng.standard_normal((5, 6, 7)) * 5).astype(np.float32)
    x_t = np.swapaxes(x, 0, 2)  # non-contiguous
    for a in (x, x_t):
        check(lambda m, t: (m.softmax(t, dim), m.log_softmax(t, dim)), [a])


def test_softmax_half_gradients_and_extremes():
    x = (rng.standard_normal((4, 9)) * 4).astype(np.float16)
    check(lambda m, t: (m.softmax(t, 1), m.log_softmax(t, 1)), [x], rtol=2e-3, atol=2e-3)
    big = np.array([[-1e4, 0.0, 1e4, 5.0], [88.0, 89.0, 90.0, -90.0]], np.float32)
    check(lambda m, t: (m.softmax(t, 1), m.log_softmax(t, 1)), [big])


# ----------------------------------------------------------------------------------------------
# normalization


def _far_from_zero(*shape):
    """Data with a mean far from zero: the variance must come from centered values (sum(x^2)
    - n mean^2 would be off by ~1e-3 here). float32's own spacing near 100 (8e-6) bounds how
    closely any two float32 implementations agree, hence FAR's tolerances."""
    return (rng.standard_normal(shape) + 100.0).astype(np.float32)


FAR = dict(rtol=1e-4, atol=1e-4, grad_rtol=1e-3, grad_atol=1e-3)


def test_layer_norm_long_rows_offset_and_layouts():
    x = _far_from_zero(6, 4000)
    w, b = rng.standard_normal(4000).astype(np.float32), rng.standard_normal(4000).astype(
        np.float32)
    check(lambda m, a, w, b: F(m).layer_norm(a, (4000,), w, b), [x, w, b], **FAR)
    y = np.swapaxes(_far_from_zero(5, 3, 4), 1, 2)  # (5, 4, 3), non-contiguous
    check(lambda m, a: F(m).layer_norm(a, (4, 3)), [y], **FAR)
    check(lambda m, a: F(m).layer_norm(a, (3,)), [y], **FAR)


def test_layer_norm_backward_in_row_blocks(monkeypatch):
    """Rows cut into blocks on three threads: each block's share of the weight and bias
    gradients adds up to torch's."""
    from ember import _parallel

    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 16)
    threads = ember.get_num_threads()
    ember.set_num_threads(3)
    try:
        x = _far_from_zero(7, 5, 12)
        w, b = rng.uniform(0.5, 1.5, 12).astype(np.float32), rng.standard_normal(12).astype(
            np.float32)
        check(lambda m, a, w, b: F(m).layer_norm(a, (12,), w, b), [x, w, b], **FAR)
        check(lambda m, a, w: F(m).layer_norm(a, (5, 12), w), [x, w[None].repeat(5, 0)],
              **FAR)
    finally:
        ember.set_num_threads(threads)


def test_layer_norm_only_weight_gradients_and_half():
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    w, b = np.ones(8, np.float32), np.zeros(8, np.float32)
    check(lambda m, a, w, b: F(m).layer_norm(a.detach(), (8,), w, b), [x, w, b])
    # float16: torch rounds the weight's gradient (a sum over 15 rows) to half precision as it
    # goes, so gradients agree only to about half's precision times the terms' magnitude
    check(lambda m, a, w, b: F(m).layer_norm(a, (8,), w, b),
          [x.astype(np.float16), w, b], rtol=2e-3, atol=2e-3, grad_rtol=1e-2, grad_atol=2e-2)


@pytest.mark.parametrize("groups", [1, 2, 6])
def test_group_norm_offset_and_groups(groups):
    x = _far_from_zero(3, 6, 5, 4)
    w, b = rng.uniform(0.5, 1.5, 6).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    check(lambda m, a, w, b: F(m).group_norm(a, groups, w, b), [x, w, b], **FAR)
    check(lambda m, a: F(m).group_norm(a, groups), [np.swapaxes(x, 2, 3)], **FAR)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_offset_running_stats_and_layouts(training):
    x = _far_from_zero(8, 3, 5, 2)
    w, b = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    stats = {}
    for m in (ember, torch):
        with on_test_device():  # the running statistics live where the input does
            mean, var = m.full((3,), 99.0), m.full((3,), 2.0)
        check_fn = lambda m, a, w, b, mean=mean, var=var: F(m).batch_norm(  # noqa: E731
            a, mean, var, w, b, training, 0.2, 1e-4)
        stats[m.__name__] = (check_fn, mean, var)
    check(lambda m, a, w, b: stats[m.__name__][0](m, a, w, b), [x, w, b], **FAR)
    for k in (1, 2):
        np.testing.assert_allclose(as_numpy(stats["ember"][k]), stats["torch"][k].numpy(),
                                   rtol=1e-5)
    check(lambda m, a: F(m).batch_norm(a, None, None, None, None, True),
          [np.swapaxes(rng.standard_normal((4, 6, 3)).astype(np.float32), 1, 2)])


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_long_channels_far_from_zero_in_channel_blocks(training, monkeypatch):
    """7,200 values a channel, mean 100: the corrected two-pass statistics, with the channels
    cut into blocks on three threads; the gradient also flows into weight and bias."""
    from ember import _parallel

    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 64)
    threads = ember.get_num_threads()
    ember.set_num_threads(3)
    try:
        x = _far_from_zero(8, 5, 30, 30)
        w = rng.uniform(0.5, 1.5, 5).astype(np.float32)
        b = rng.standard_normal(5).astype(np.float32)
        mean = (rng.standard_normal(5) + 100).astype(np.float32)
        var = rng.uniform(0.5, 2, 5).astype(np.float32)
        check(lambda m, a, w, b: F(m).batch_norm(a, m.tensor(mean), m.tensor(var), w, b,
                                                 training, 0.1, 1e-5), [x, w, b], **FAR)
    finally:
        ember.set_num_threads(threads)


def test_rms_norm_long_rows():
    x = rng.standard_normal((4, 3000)).astype(np.float32) * 10
    w = rng.uniform(0.5, 1.5, 3000).astype(np.float32)
    check(lambda m, a, w: F(m).rms_norm(a, (3000,), w, 1e-6), [x, w], grad_rtol=1e-3,
          grad_atol=1e-4)


# ----------------------------------------------------------------------------------------------
# embedding


@pytest.mark.parametrize("case", ["unique", "mixed", "one_index", "few_heavy", "int32"])
def test_embedding_gradient_repetition_patterns(case):
    vocab = 50
    if case == "unique":
        index = rng.permutation(vocab)[:40].reshape(5, 8)
    elif case == "one_index":
        index = np.full((7, 11), 3)              # one index, far beyond the rounds
    elif case == "few_heavy":
        index = rng.integers(0, vocab, (12, 30))
        index[:, :10] = 7                        # one heavy index among light ones
    else:
        index = rng.integers(0, vocab, (9, 13))
    index = index.astype(np.int32 if case == "int32" else np.int64)
    w = rng.standard_normal((vocab, 6)).astype(np.float32)
    check(lambda m, w, i: F(m).embedding(i, w), [w, index])
    check(lambda m, w, i: F(m).embedding(i, w, padding_idx=3, scale_grad_by_freq=True),
          [w, index])

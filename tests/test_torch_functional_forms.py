"""The torch.* forms of nn functions (ATen's argument orders and int reductions) and the
native_* functions that also return their statistics, against torch."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3)).astype(np.float32)
Y = rng.standard_normal((4, 3)).astype(np.float32)
Z = rng.standard_normal((4, 3)).astype(np.float32)
SIGN = np.sign(rng.standard_normal(4)).astype(np.float32)
PROB = rng.random((4, 3)).astype(np.float32)


@pytest.mark.parametrize("fn", [
    lambda m, x, p: m.kl_div(x.log_softmax(1), p),
    lambda m, x, p: (m.kl_div(x, p, 1), m.kl_div(x, p.log(), 2, log_target=True)),
    lambda m, x, p: (m.binary_cross_entropy_with_logits(x, p),
                     m.binary_cross_entropy_with_logits(x, p, p.detach(), p.detach() + 1, 1)),
    lambda m, x, p: (m.hinge_embedding_loss(x, m.ones(4, 3)),
                     m.hinge_embedding_loss(x, -m.ones(4, 3), 0.5, 2)),
    lambda m, x, p: (m.poisson_nll_loss(x, p, True, False, 1e-8, 0),
                     m.poisson_nll_loss(p + 1, p, False, True, 1e-8, 1)),
])
def test_pointwise_losses(fn):
    check(fn, [X, PROB])


@pytest.mark.parametrize("fn", [
    lambda m, x, y, z, s: (m.cosine_embedding_loss(x, y, s), m.cosine_embedding_loss(
        x, y, s, 0.3, 1)),
    lambda m, x, y, z, s: (m.margin_ranking_loss(x[:, 0], y[:, 0], s),
                           m.margin_ranking_loss(x[:, 0], y[:, 0], s, 0.5, 2)),
    lambda m, x, y, z, s: (m.triplet_margin_loss(x, y, z),
                           m.triplet_margin_loss(x, y, z, 0.5, 1.0, 1e-6, True, 1)),
])
def test_pair_losses(fn):
    check(fn, [X, Y, Z, SIGN])


def test_ctc_loss():
    log_probs = rng.standard_normal((6, 2, 5)).astype(np.float32)
    targets = np.array([[1, 2, 2], [3, 1, 0]])
    check(lambda m, lp: (m.ctc_loss(lp.log_softmax(2), m.tensor(targets), [6, 5], [3, 2]),
                         m.ctc_loss(lp.log_softmax(2), m.tensor(targets), m.tensor([6, 6]),
                                    m.tensor([3, 2]), 0, 1, True)), [log_probs])


def test_reduction_codes():
    check_raises(lambda m, x, p: m.kl_div(x, p, reduction="sum"), [X, PROB],
                 match="must be int, not str")


def test_pooling_and_sampling_forms():
    x = rng.standard_normal((1, 2, 8)).astype(np.float32)
    check(lambda m, x: tuple(m.adaptive_max_pool1d(x, 3)) + tuple(m.adaptive_max_pool1d(x, (4,))),
          [x])
    theta = rng.standard_normal((2, 2, 3)).astype(np.float32)
    check(lambda m, t: m.affine_grid_generator(t, [2, 1, 4, 5], False), [theta])
    image = rng.standard_normal((2, 1, 4, 4)).astype(np.float32)
    grid = (rng.random((2, 3, 2, 2)) * 2 - 1).astype(np.float32)
    check(lambda m, i, g: (m.grid_sampler(i, g, 0, 0, False), m.grid_sampler_2d(i, g, 1, 1, True),
                           m.grid_sampler_2d(i, g, 0, 2, False)), [image, grid])
    volume = rng.standard_normal((1, 1, 3, 4, 4)).astype(np.float32)
    grid3 = (rng.random((1, 2, 2, 2, 3)) * 2 - 1).astype(np.float32)
    check(lambda m, v, g: m.grid_sampler_3d(v, g, 0, 0, True), [volume, grid3])


def test_native_norms():
    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    check(lambda m, x, w: m.native_layer_norm(x, [3], w, w, 1e-5), [x, w], grad=False)
    check(lambda m, x, w: m.native_layer_norm(x, (4, 3), None, None, 1e-5)[0], [x, w])
    c = rng.standard_normal(4).astype(np.float32)
    check(lambda m, x, c: m.native_group_norm(x, c, c, 2, 4, 3, 2, 1e-5), [x, c], grad=False)
    check(lambda m, x, c: m.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)[0], [x, c])
    check(lambda m, x, c: m.native_batch_norm(x, c, c, None, None, True, 0.1, 1e-5), [x, c],
          grad=False)
    check(lambda m, x, c: m.native_batch_norm(x, None, None, m.zeros(4), m.ones(4), False, 0.1,
                                              1e-5), [x, c], grad=False)
    v = rng.standard_normal((3, 4, 5)).astype(np.float32)
    check(lambda m, v: (m.norm_except_dim(v), m.norm_except_dim(v, 2, 1),
                        m.norm_except_dim(v, 2, -1), m.norm_except_dim(v, 3, 2)), [v])


def test_native_dropout():
    for m in (ember, torch):
        x = m.ones(1000)
        out, mask = m.native_dropout(x, 0.25, True)
        assert mask.dtype is m.bool and out.shape == mask.shape
        kept = out[mask]
        assert np.allclose(kept.numpy(), 1 / 0.75) and not out[~mask].any()
        assert 0.65 < float(mask.float().mean()) < 0.85
        out, mask = m.native_dropout(x, 0.25, False)
        assert bool(mask.all()) and m.equal(out, x)


def _rnn_params(mode, layers, directions, features, hidden, bias, proj=0):
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    params = []
    for layer in range(layers):
        for _ in range(directions):
            width = features if layer == 0 else (proj or hidden) * directions
            shapes = [(gates * hidden, width), (gates * hidden, proj or hidden)]
            shapes += [(gates * hidden,)] * 2 if bias else []
            shapes += [(proj, hidden)] if proj else []
            params += [(rng.standard_normal(s) * 0.3).astype(np.float32) for s in shapes]
    return params


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers, directions, bias, batch_first", [(1, 1, True, False),
                                                                   (2, 2, False, True)])
def test_recurrent_functions(mode, layers, directions, bias, batch_first):
    params = _rnn_params(mode, layers, directions, 3, 4, bias)
    x = rng.standard_normal((2, 5, 3) if batch_first else (5, 2, 3)).astype(np.float32)
    h = rng.standard_normal((layers * directions, 2, 4)).astype(np.float32)

    def run(m, x, h, *ps):
        hx = (h, h * 0.5) if mode == "lstm" else h
        return tuple(getattr(m, mode)(x, hx, list(ps), bias, layers, 0.0, False,
                                      directions == 2, batch_first))
    check(run, [x, h] + params)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_recurrent_functions_packed(mode):
    params = _rnn_params(mode, 1, 1, 3, 4, True)
    data = rng.standard_normal((6, 3)).astype(np.float32)  # batch sizes 3, 2, 1
    h = rng.standard_normal((1, 3, 4)).astype(np.float32)

    def run(m, data, h, *ps):
        hx = (h, h) if mode == "lstm" else h
        return tuple(getattr(m, mode)(data, m.tensor([3, 2, 1]), hx, list(ps), True, 1, 0.0,
                                      False, False))
    check(run, [data, h] + params)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bias", [True, False])
def test_cells(mode, bias):
    w_ih, w_hh, *biases = _rnn_params(mode, 1, 1, 3, 4, bias)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    h = rng.standard_normal((2, 4)).astype(np.float32)

    def run(m, x, h, *weights):
        hx = (h, h * 2) if mode == "lstm" else h
        result = getattr(m, mode + "_cell")(x, hx, *weights)
        return tuple(result) if mode == "lstm" else result
    check(run, [x, h, w_ih, w_hh] + biases)


def test_grouped_mm():
    offs = np.array([2, 6], dtype=np.int32)  # (rows past the last offset: garbage in torch)
    a2, b3 = (rng.standard_normal(s).astype(np.float32) for s in ((6, 8), (2, 8, 4)))
    a3, b2 = (rng.standard_normal(s).astype(np.float32) for s in ((2, 6, 8), (8, 8)))
    c2, d2 = (rng.standard_normal(s).astype(np.float32) for s in ((6, 8), (8, 4)))
    check(lambda m, a, b: m.nn.functional.grouped_mm(a, b, offs=m.tensor(offs)), [a2, b3])
    check(lambda m, a, b: m.nn.functional.grouped_mm(a, b, offs=m.tensor([4, 8],
                                                                          dtype=m.int32)),
          [a3, b2])
    check(lambda m, a, b: m.nn.functional.grouped_mm(a, b, offs=m.tensor([4, 8],
                                                                          dtype=m.int32)),
          [c2, d2])
    check(lambda m, a, b: m.nn.functional.grouped_mm(a, b), [a3, b3])
    for fn, match in (
            (lambda m, a, b: m.nn.functional.grouped_mm(a, b), "Have to provide offsets"),
            (lambda m, a, b: m.nn.functional.grouped_mm(a, b, offs=m.tensor([2, 6])),
             "Offsets have to be int32"),
            (lambda m, a, b: m.nn.functional.grouped_mm(
                a, b, offs=m.tensor(offs), bias=m.ones(2, 4)), "Bias not supported yet")):
        check_raises(fn, [a2, b3], match=match)


def test_grouped_mm_zeroes_rows_past_the_last_offset():
    out = ember.nn.functional.grouped_mm(ember.ones(6, 8), ember.ones(2, 8, 4),
                                         offs=ember.tensor([2, 5], dtype=ember.int32))
    assert out[5].tolist() == [0.0] * 4 and out[:5].eq(8).all()

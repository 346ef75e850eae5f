"""torch's random streams through nn: dropout masks, every nn.init function and every layer's
default initialisation equal torch's after the same seed (bit for bit, except where the
module docstrings say "to rounding"), and a whole seeded training run (init, dropout, a
shuffled DataLoader, SGD) follows torch's to float rounding."""
import warnings

import numpy as np
import pytest

import ember

from .test_random_streams import assert_same

torch = pytest.importorskip("torch")


def both(fn, seed=0):
    """fn(lib) after manual_seed(seed) in torch and ember, then one more draw each."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        out.append((fn(lib), lib.rand(2)))
    return out[1], out[0]


# ----------------------------------------------------------------------------------------------
# dropout

DROPOUTS = {
    "dropout": lambda F, x: F.dropout(x, 0.3),
    "dropout-p0.9": lambda F, x: F.dropout(x, 0.9),
    "dropout-inplace": lambda F, x: F.dropout(x.clone(), 0.5, inplace=True),
    "dropout1d": lambda F, x: F.dropout1d(x.reshape(4, 6, 5), 0.4),
    "dropout1d-unbatched": lambda F, x: F.dropout1d(x.reshape(24, 5), 0.4),
    "dropout2d": lambda F, x: F.dropout2d(x.reshape(2, 3, 4, 5), 0.25),
    "dropout3d": lambda F, x: F.dropout3d(x.reshape(2, 3, 2, 2, 5), 0.6),
    "alpha_dropout": lambda F, x: F.alpha_dropout(x, 0.2, training=True),
    "feature_alpha_dropout": lambda F, x: F.feature_alpha_dropout(x.reshape(4, 6, 5), 0.3,
                                                                  training=True),
    "transposed": lambda F, x: F.dropout(x.reshape(10, 12).t(), 0.5),
}


@pytest.mark.parametrize("name", list(DROPOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_masks(name, dtype):
    data = np.random.default_rng(0).standard_normal(120)
    e, t = both(lambda m: DROPOUTS[name](m.nn.functional,
                                         m.tensor(data, dtype=getattr(m, dtype))))
    assert_same(e, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_slopes(dtype):
    """RReLU draws one uniform double per non-positive element (torch's
    rrelu_with_noise)."""
    data = np.random.default_rng(2).standard_normal((7, 9))

    def run(m):
        x = m.tensor(data, dtype=getattr(m, dtype), requires_grad=True)
        y = m.nn.functional.rrelu(x, training=True) + m.nn.RReLU(0.1, 0.3).train()(x.t()).t()
        y.sum().backward()
        return [y, x.grad, m.nn.functional.rrelu(x.detach(), 0.2, 0.4)]
    assert_same(*both(run))


def test_native_dropout():
    data = np.random.default_rng(3).standard_normal((6, 7)).astype(np.float32)
    assert_same(*both(lambda m: m.native_dropout(m.tensor(data), 0.35, True)))


def test_dropout_modules_and_gradients():
    data = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    results = []
    for lib in (torch, ember):
        lib.manual_seed(3)
        x = lib.tensor(data, requires_grad=True)
        y = lib.nn.Dropout(0.4)(x) + lib.nn.AlphaDropout(0.1).train()(x)
        y.sum().backward()
        results.append((y, x.grad))
    assert_same(results[1], results[0])


# ----------------------------------------------------------------------------------------------
# nn.init

INITS = {
    "uniform_": lambda I, w, g: I.uniform_(w, -0.3, 0.7, generator=g),
    "normal_": lambda I, w, g: I.normal_(w, 0.1, 0.02, generator=g),
    "trunc_normal_": lambda I, w, g: I.trunc_normal_(w, std=0.02, generator=g),
    "trunc_normal_-wide": lambda I, w, g: I.trunc_normal_(w, 0.0, 1.0, -1.0, 1.5, generator=g),
    "xavier_uniform_": lambda I, w, g: I.xavier_uniform_(w, generator=g),
    "xavier_uniform_-gain": lambda I, w, g: I.xavier_uniform_(w, gain=I.calculate_gain("relu"),
                                                              generator=g),
    "xavier_normal_": lambda I, w, g: I.xavier_normal_(w, 0.5, generator=g),
    "kaiming_uniform_": lambda I, w, g: I.kaiming_uniform_(w, generator=g),
    "kaiming_uniform_-sqrt5": lambda I, w, g: I.kaiming_uniform_(w, a=5 ** 0.5, generator=g),
    "kaiming_uniform_-fan_out": lambda I, w, g: I.kaiming_uniform_(
        w, mode="fan_out", nonlinearity="relu", generator=g),
    "kaiming_normal_": lambda I, w, g: I.kaiming_normal_(w, generator=g),
    "kaiming_normal_-tanh": lambda I, w, g: I.kaiming_normal_(w, mode="fan_out",
                                                              nonlinearity="tanh", generator=g),
    "sparse_": lambda I, w, g: I.sparse_(w.reshape(w.shape[0], -1), 0.3, generator=g),
    "constant_": lambda I, w, g: I.constant_(w, 0.25),
    "dirac_": lambda I, w, g: I.dirac_(w),
    "eye_": lambda I, w, g: I.eye_(w.reshape(w.shape[0], -1)),
}


@pytest.mark.parametrize("name", list(INITS))
@pytest.mark.parametrize("shape", [(6, 4, 3), (64, 3, 5)])
@pytest.mark.parametrize("explicit", [False, True])
def test_init_functions(name, shape, explicit):
    def run(m):
        w = m.empty(shape)
        g = m.Generator().manual_seed(11) if explicit else None
        INITS[name](m.nn.init, w, g)
        return w
    assert_same(*both(run))


def test_trunc_normal_narrow_interval():
    """Below 30% of the mass inside [a, b], torch switches to uniform proposals accepted by
    comparing log(u) with the log-density: equal to torch up to float32 log's last bit."""
    e, t = both(lambda m: m.nn.init.trunc_normal_(m.empty(2000), 0.0, 1.0, 2.0, 3.0))
    np.testing.assert_allclose(e[0].numpy(), t[0].numpy(), rtol=1e-6)
    assert e[0].min() >= 2 and e[0].max() <= 3


def test_orthogonal_to_rounding():
    e, t = both(lambda m: m.nn.init.orthogonal_(m.empty(6, 10), gain=2.0))
    np.testing.assert_allclose(e[0].numpy(), t[0].numpy(), atol=1e-5)
    assert_same(e[1], t[1])  # the same number of draws


# ----------------------------------------------------------------------------------------------
# layers: default initialisation (and construction order of their parameters)

LAYERS = {
    "Linear": lambda nn: nn.Linear(7, 5),
    "Linear-nobias": lambda nn: nn.Linear(7, 5, bias=False),
    "Bilinear": lambda nn: nn.Bilinear(3, 4, 5),
    "Conv1d": lambda nn: nn.Conv1d(3, 4, 3),
    "Conv2d": lambda nn: nn.Conv2d(3, 8, 3, groups=1),
    "Conv2d-groups": lambda nn: nn.Conv2d(4, 8, (3, 2), groups=2),
    "Conv3d": lambda nn: nn.Conv3d(2, 3, 2),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(3, 6, 3),
    "ConvTranspose1d": lambda nn: nn.ConvTranspose1d(4, 2, 5, groups=2),
    "Embedding": lambda nn: nn.Embedding(10, 4, padding_idx=2),
    "EmbeddingBag": lambda nn: nn.EmbeddingBag(10, 4),
    "RNN": lambda nn: nn.RNN(4, 6, num_layers=2),
    "LSTM": lambda nn: nn.LSTM(4, 5, bidirectional=True),
    "GRU": lambda nn: nn.GRU(3, 4, batch_first=True),
    "LSTM-proj": lambda nn: nn.LSTM(4, 6, proj_size=3),
    "RNNCell": lambda nn: nn.RNNCell(3, 4),
    "LSTMCell": lambda nn: nn.LSTMCell(3, 4),
    "GRUCell": lambda nn: nn.GRUCell(3, 4),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(8, 2),
    "MultiheadAttention-kv": lambda nn: nn.MultiheadAttention(8, 2, kdim=5, vdim=3,
                                                              add_bias_kv=True),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(8, 2, 16),
    "TransformerDecoderLayer": lambda nn: nn.TransformerDecoderLayer(8, 2, 16),
    "Transformer": lambda nn: nn.Transformer(8, 2, 1, 1, 16),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(4),
    "LayerNorm": lambda nn: nn.LayerNorm(6),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "PReLU": lambda nn: nn.PReLU(3),
    "Sequential": lambda nn: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)),
    "spectral_norm": lambda nn: nn.utils.spectral_norm(nn.Linear(5, 4)),
    "parametrizations.spectral_norm": lambda nn: nn.utils.parametrizations.spectral_norm(
        nn.Conv2d(2, 3, 2)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_default_init(name):
    def build(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = LAYERS[name](m.nn)
        return [(k, v) for k, v in layer.state_dict().items()]
    e, t = both(build)
    assert [k for k, _ in e[0]] == [k for k, _ in t[0]]
    if name in POWER_ITERATED:  # the draws are equal; 15 power iterations then round apart
        for (_, a), (_, b) in zip(e[0], t[0]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    else:
        assert_same([v for _, v in e[0]], [v for _, v in t[0]])
    assert_same(e[1], t[1])


POWER_ITERATED = {"parametrizations.spectral_norm"}


# ----------------------------------------------------------------------------------------------
# a whole seeded training run


def _train(lib, steps=6):
    nn, data = lib.nn, lib.utils.data
    lib.manual_seed(2024)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.25), nn.Linear(32, 3))
    x = lib.randn(64, 10)
    y = lib.randint(0, 3, (64,))
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses, orders = [], []
    for epoch in range(2):
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            orders.append(yb.tolist())
    return losses, orders, [p.detach() for p in model.parameters()]


def test_seeded_training_run_matches_torch():
    e_losses, e_orders, e_params = _train(ember)
    t_losses, t_orders, t_params = _train(torch)
    assert e_orders == t_orders  # the same shuffles
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-5)
    for a, b in zip(e_params, t_params):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)

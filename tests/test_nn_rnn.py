"""RNN / LSTM / GRU, their cells and the packing utilities against torch.

Each module is built in torch with a seed and its state_dict copied into ember; outputs, final
states and the gradients w.r.t. the input, the initial states and every parameter are
compared in float64 (plus float32 checks). Double backward goes through gradgradcheck.
"""
import itertools
import math
import warnings

import numpy as np
import pytest

import ember
from ember.ops.nn import rnn as rnn_ops

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def T(*shape):
    return rng.standard_normal(shape)


def pair(name, *args, dtype="float64", **kwargs):
    """The same module in torch and ember, ember holding torch's weights."""
    torch.manual_seed(0)
    t_mod = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    e_mod = getattr(ember.nn, name)(*args, **kwargs).to(getattr(ember, dtype))
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    e_mod.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                           for k, v in t_mod.state_dict().items()})
    return t_mod, e_mod


def flat(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in flat(item)]
    return [x]


def compare(t_mod, e_mod, run, arrays, rtol=1e-9, atol=1e-9):
    """run(lib, module, *tensors) -> tensors; compare them and all gradients with torch."""
    results = []
    for lib, mod in ((torch, t_mod), (ember, e_mod)):
        inputs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        outs = [o for o in flat(run(lib, mod, *inputs)) if isinstance(o, lib.Tensor)]
        weights = [lib.from_numpy(np.random.default_rng(1).standard_normal(tuple(o.shape)))
                   .to(o.dtype) for o in outs]
        sum(((o * w).sum() for o, w in zip(outs, weights) if o.is_floating_point()),
            lib.zeros((), dtype=outs[0].dtype)).backward()
        grads = [x.grad for x in inputs] + [p.grad for p in mod.parameters()]
        results.append((outs, grads))
    (t_outs, t_grads), (e_outs, e_grads) = results
    assert len(e_outs) == len(t_outs)
    for k, (e, t) in enumerate(zip(e_outs, t_outs)):
        assert tuple(e.shape) == tuple(t.shape), f"output {k}"
        assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1], f"output {k}"
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"output {k}")
    for k, (e, t) in enumerate(zip(e_grads, t_grads)):
        if t is None:
            assert e is None or not np.any(e.numpy()), f"grad {k}"
            continue
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"grad {k}")


MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}), ("GRU", {}),
         ("LSTM", {"proj_size": 3})]
MODE_IDS = ["rnn_tanh", "rnn_relu", "lstm", "gru", "lstm_proj"]


def hidden_shapes(name, kw, layers, directions, batch, hidden=5):
    size = kw.get("proj_size", 0) or hidden
    shapes = [(layers * directions, batch, size)]
    if name == "LSTM":
        shapes.append((layers * directions, batch, hidden))
    return shapes


def call(name, mod, x, states):
    if not states:
        return mod(x)
    return mod(x, tuple(states) if name == "LSTM" else states[0])


# ----------------------------------------------------------------------------------------------
# padded batches: every option combination


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, False), (1, True), (2, True)])
@pytest.mark.parametrize("bias,batch_first,with_hx",
                         list(itertools.product([True, False], repeat=3)))
def test_padded_against_torch(mode, layers, bidirectional, bias, batch_first, with_hx):
    name, kw = mode
    t_mod, e_mod = pair(name, 4, 5, num_layers=layers, bias=bias, batch_first=batch_first,
                        bidirectional=bidirectional, **kw)
    steps, batch = 4, 3
    x = T(batch, steps, 4) if batch_first else T(steps, batch, 4)
    states = [T(*s) for s in hidden_shapes(name, kw, layers, 1 + bidirectional, batch)] \
        if with_hx else []
    compare(t_mod, e_mod, lambda lib, mod, x, *h: call(name, mod, x, list(h)), [x] + states)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("with_hx", [True, False])
def test_unbatched_against_torch(mode, with_hx):
    name, kw = mode
    t_mod, e_mod = pair(name, 4, 5, num_layers=2, bidirectional=True, batch_first=True, **kw)
    states = [T(*s[:1], s[2]) for s in hidden_shapes(name, kw, 2, 2, 1)] if with_hx else []
    compare(t_mod, e_mod, lambda lib, mod, x, *h: call(name, mod, x, list(h)),
            [T(6, 4)] + states)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_float32_against_torch(mode):
    name, kw = mode
    t_mod, e_mod = pair(name, 4, 5, num_layers=2, bidirectional=True, dtype="float32", **kw)
    x = T(7, 3, 4).astype(np.float32)
    compare(t_mod, e_mod, lambda lib, mod, x: mod(x), [x], rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------------
# packed batches


def run_packed(name, lengths, batch_first, enforce_sorted):
    def run(lib, mod, x, *states):
        utils = lib.nn.utils.rnn
        packed = utils.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                            enforce_sorted=enforce_sorted)
        out, finals = call(name, mod, packed, list(states))
        padded, out_lengths = utils.pad_packed_sequence(out, batch_first=batch_first,
                                                        padding_value=-2.0, total_length=7)
        return padded, out_lengths, out.data, out.batch_sizes, finals
    return run


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
@pytest.mark.parametrize("enforce_sorted,batch_first,with_hx",
                         list(itertools.product([True, False], repeat=3)))
def test_packed_against_torch(mode, layers, bidirectional, enforce_sorted, batch_first,
                              with_hx):
    name, kw = mode
    t_mod, e_mod = pair(name, 4, 5, num_layers=layers, batch_first=batch_first,
                        bidirectional=bidirectional, **kw)
    lengths = [5, 5, 3, 2, 2, 1] if enforce_sorted else [2, 5, 1, 5, 3, 2]
    steps, batch = max(lengths), len(lengths)
    x = T(batch, steps, 4) if batch_first else T(steps, batch, 4)
    states = [T(*s) for s in hidden_shapes(name, kw, layers, 1 + bidirectional, batch)] \
        if with_hx else []
    compare(t_mod, e_mod, run_packed(name, lengths, batch_first, enforce_sorted),
            [x] + states)


def test_packed_output_keeps_indices():
    t_mod, e_mod = pair("GRU", 3, 4)
    x = T(4, 3, 3)
    results = []
    for lib, mod in ((torch, t_mod), (ember, e_mod)):
        packed = lib.nn.utils.rnn.pack_padded_sequence(lib.from_numpy(x), [2, 4, 3],
                                                       enforce_sorted=False)
        out, _ = mod(packed)
        assert type(out).__name__ == "PackedSequence"
        results.append([out.batch_sizes.tolist(), out.sorted_indices.tolist(),
                        out.unsorted_indices.tolist()])
    assert results[0] == results[1]


# ----------------------------------------------------------------------------------------------
# cells


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {}),
         ("GRUCell", {}), ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("cell", CELLS, ids=["rnn", "rnn_relu", "lstm", "gru", "gru_nobias"])
@pytest.mark.parametrize("batched,with_hx", list(itertools.product([True, False], repeat=2)))
def test_cells_against_torch(cell, batched, with_hx):
    name, kw = cell
    t_mod, e_mod = pair(name, 4, 5, **kw)
    lead = (3,) if batched else ()
    states = [T(*lead, 5) for _ in range(2 if name == "LSTMCell" else 1)] if with_hx else []

    def run(lib, mod, x, *h):
        if not h:
            return mod(x)
        return mod(x, tuple(h) if name == "LSTMCell" else h[0])
    compare(t_mod, e_mod, run, [T(*lead, 4)] + states)


def test_cell_float32_and_time_loop():
    t_mod, e_mod = pair("LSTMCell", 4, 5, dtype="float32")

    def run(lib, mod, x):
        h = c = lib.zeros(2, 5)
        outs = []
        for t in range(x.shape[0]):
            h, c = mod(x[t], (h, c))
            outs.append(h)
        return lib.stack(outs)
    compare(t_mod, e_mod, run, [T(6, 2, 4).astype(np.float32)], rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------------------------
# parameters, init, attributes


@pytest.mark.parametrize("name,kw", [("RNN", {"num_layers": 3, "bidirectional": True}),
                                     ("LSTM", {"num_layers": 2, "proj_size": 2,
                                               "bidirectional": True}),
                                     ("LSTM", {"bias": False, "proj_size": 2}),
                                     ("GRU", {"num_layers": 2, "bias": False})])
def test_parameters_names_shapes_and_init(name, kw):
    t_mod = getattr(torch.nn, name)(4, 6, **kw)
    e_mod = getattr(ember.nn, name)(4, 6, **kw)
    t_params = [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
    assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == t_params
    assert e_mod._flat_weights_names == t_mod._flat_weights_names
    assert e_mod._all_weights == t_mod._all_weights
    assert [tuple(w.shape) for w in e_mod._flat_weights] == \
        [tuple(w.shape) for w in t_mod._flat_weights]
    assert [[tuple(w.shape) for w in ws] for ws in e_mod.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t_mod.all_weights]
    assert repr(e_mod) == repr(t_mod)
    bound = 1 / math.sqrt(6)
    for p in e_mod.parameters():
        values = p.detach().numpy()
        assert np.all(np.abs(values) <= bound)
    everything = np.concatenate([p.detach().numpy().ravel() for p in e_mod.parameters()])
    torch_all = np.concatenate([p.detach().numpy().ravel() for p in t_mod.parameters()])
    # both draw U(-bound, bound): the extremes come close to the bound and the spread matches
    assert np.abs(everything).max() > 0.95 * bound and np.abs(torch_all).max() > 0.95 * bound
    assert abs(everything.std() - torch_all.std()) < 0.15 * torch_all.std()
    e_mod.flatten_parameters()  # a no-op, as on torch's CPU


def test_cell_parameters_and_repr():
    for name, kw in CELLS:
        t_mod = getattr(torch.nn, name)(4, 6, **kw)
        e_mod = getattr(ember.nn, name)(4, 6, **kw)
        assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
        assert repr(e_mod) == repr(t_mod)
        assert max(float(p.abs().max()) for p in e_mod.parameters()) <= 1 / math.sqrt(6)


def test_checkpoint_round_trip_to_torch():
    """ember's state_dict loads into torch (and runs the same)."""
    e_mod = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    t_mod = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    t_mod.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                           for k, v in e_mod.state_dict().items()})
    x = T(5, 2, 3)
    with ember.no_grad(), torch.no_grad():
        np.testing.assert_allclose(e_mod(ember.from_numpy(x))[0].numpy(),
                                   t_mod(torch.from_numpy(x))[0].numpy(), rtol=1e-10)


def test_torch_pickled_module_loads_and_runs(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    torch.save(model, tmp_path / "lstm.pt")
    loaded = ember.load(tmp_path / "lstm.pt", weights_only=False)
    x = T(5, 2, 3).astype(np.float32)
    np.testing.assert_allclose(loaded(ember.from_numpy(x))[0].detach().numpy(),
                               model(torch.from_numpy(x))[0].detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_to_and_weight_replacement_keep_flat_weights_current():
    mod = ember.nn.GRU(3, 4)
    mod.double()
    assert all(w.dtype is ember.float64 for w in mod._flat_weights)
    new = ember.nn.Parameter(ember.zeros(12, 4, dtype=ember.float64))
    mod.weight_hh_l0 = new
    assert mod._flat_weights[1] is new


# ----------------------------------------------------------------------------------------------
# dropout between layers, training vs eval


def test_dropout_between_layers():
    t_mod, e_mod = pair("LSTM", 4, 5, num_layers=3, dropout=0.5)
    x = T(6, 2, 4)
    t_mod.eval()
    e_mod.eval()
    compare(t_mod, e_mod, lambda lib, mod, x: mod(x), [x])
    e_mod.train()
    ember.manual_seed(0)
    out_a = e_mod(ember.from_numpy(x))[0]
    out_b = e_mod(ember.from_numpy(x))[0]
    eval_out = e_mod.eval()(ember.from_numpy(x))[0]
    assert not np.allclose(out_a.detach().numpy(), out_b.detach().numpy())
    assert not np.allclose(out_a.detach().numpy(), eval_out.detach().numpy())


def test_dropout_warning_and_config_errors():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ember.nn.LSTM(3, 4, dropout=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.nn.LSTM(3, 4, num_layers=2, dropout=0.2)
    for make in (lambda m: m.nn.LSTM(3, 4, dropout=1.5),
                 lambda m: m.nn.LSTM(3, 4, dropout=True),
                 lambda m: m.nn.LSTM(3, 0),
                 lambda m: m.nn.LSTM(0, 3),
                 lambda m: m.nn.LSTM(3, 4, num_layers=0),
                 lambda m: m.nn.LSTM(3, 4, proj_size=4),
                 lambda m: m.nn.LSTM(3, 4, proj_size=-1),
                 lambda m: m.nn.LSTM(3, 4, bias=1),
                 lambda m: m.nn.LSTM(3, 4, batch_first=1),
                 lambda m: m.nn.LSTM(3.0, 4),
                 lambda m: m.nn.GRU(3, 4, proj_size=2),
                 lambda m: m.nn.RNN(3, 4, nonlinearity="sigmoid"),
                 lambda m: m.nn.RNN(3, 4, 1, "sigmoid")):
        check_raises(make)


# ----------------------------------------------------------------------------------------------
# errors like torch's


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_shape_errors_like_torch(name):
    torch.manual_seed(0)
    t_mod = getattr(torch.nn, name)(10, 20, num_layers=2)
    e_mod = getattr(ember.nn, name)(10, 20, num_layers=2)
    mods = {torch: t_mod, ember: e_mod}
    lstm = name == "LSTM"

    def states(m, *shape):
        h = m.zeros(*shape)
        return (h, m.zeros(*shape)) if lstm else h
    check_raises(lambda m: mods[m](m.zeros(5, 3, 5)),
                 match="input.size(-1) must be equal to input_size. Expected 10, got 5")
    msg = "Expected hidden[0] size (2, 3, 20), got [2, 3, 10]" if lstm else \
        "Expected hidden size (2, 3, 20), got [2, 3, 10]"
    check_raises(lambda m: mods[m](m.zeros(5, 3, 10), states(m, 2, 3, 10)), match=msg)
    check_raises(lambda m: mods[m](m.zeros(5, 3, 10), states(m, 2, 4, 20)))
    check_raises(lambda m: mods[m](m.zeros(5, 3, 10), states(m, 3, 20)),
                 match="For batched 3-D input, hx")
    check_raises(lambda m: mods[m](m.zeros(5, 10), states(m, 2, 1, 20)),
                 match="For unbatched 2-D input, hx")
    check_raises(lambda m: mods[m](m.zeros(5)), match="Expected input to be 2D or 3D")
    check_raises(lambda m: mods[m](m.zeros(5, 3, 10, dtype=m.float64)),
                 match="does not match weight dtype")
    if lstm:
        check_raises(lambda m: mods[m](m.zeros(5, 3, 10), (m.zeros(2, 3, 20),
                                                            m.zeros(2, 3, 7))),
                     match="Expected hidden[1] size (2, 3, 20), got [2, 3, 7]")


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_empty_batch_and_empty_sequence(name):
    t_mod, e_mod = pair(name, 3, 4, bidirectional=True)
    compare(t_mod, e_mod, lambda lib, mod, x: mod(x), [T(2, 0, 3)])
    check_raises(lambda m: {torch: t_mod, ember: e_mod}[m](m.zeros(0, 2, 3, dtype=m.float64)),
                 match="Expected sequence length to be larger than 0 in RNN")


def test_cell_errors_like_torch():
    torch.manual_seed(0)
    mods = {torch: torch.nn.LSTMCell(10, 20), ember: ember.nn.LSTMCell(10, 20)}
    grus = {torch: torch.nn.GRUCell(10, 20), ember: ember.nn.GRUCell(10, 20)}
    check_raises(lambda m: mods[m](m.zeros(3, 5)),
                 match="input has inconsistent input_size: got 5 expected 10")
    check_raises(lambda m: mods[m](m.zeros(3, 10), (m.zeros(2, 20), m.zeros(3, 20))),
                 match="Input batch size 3 doesn't match hidden0 batch size 2")
    check_raises(lambda m: mods[m](m.zeros(3, 10), (m.zeros(3, 20), m.zeros(3, 21))),
                 match="hidden1 has inconsistent hidden_size: got 21, expected 20")
    check_raises(lambda m: mods[m](m.zeros(2, 3, 10)), match="Expected input to be 1D or 2D")
    check_raises(lambda m: mods[m](m.zeros(3, 10), (m.zeros(1, 3, 20), m.zeros(3, 20))),
                 match="Expected hx[0] to be 1D or 2D")
    check_raises(lambda m: grus[m](m.zeros(3, 10), m.zeros(3, 19)),
                 match="hidden0 has inconsistent hidden_size: got 19, expected 20")
    check_raises(lambda m: grus[m](m.zeros(3, 10, dtype=m.float64)))
    bad = {torch: torch.nn.RNNCell(3, 4, nonlinearity="foo"),
           ember: ember.nn.RNNCell(3, 4, nonlinearity="foo")}
    check_raises(lambda m: bad[m](m.zeros(2, 3)), match="Unknown nonlinearity: foo")


# ----------------------------------------------------------------------------------------------
# the layer ops: double backward, and the reference recurrences


BATCHES = [(3, 3, 3), (3, 2, 2, 1)]


def _layer_case(kind, batch_sizes, reverse):
    """(function of the op's tensor inputs, inputs) for one layer op."""
    rows, batch = sum(batch_sizes), batch_sizes[0]

    def t(*shape):
        return ember.from_numpy(T(*shape)).requires_grad_()
    attrs = {"batch_sizes": batch_sizes, "reverse": reverse}
    if kind == "lstm_proj":
        return (lambda xw, h, c, w, wr: rnn_ops._lstm_layer(xw, h, c, w, wr, **attrs)[:3],
                [t(rows, 12), t(batch, 2), t(batch, 3), t(12, 2), t(2, 3)])
    if kind == "lstm":
        return (lambda xw, h, c, w: rnn_ops._lstm_layer(xw, h, c, w, None, **attrs)[:3],
                [t(rows, 8), t(batch, 2), t(batch, 2), t(8, 2)])
    if kind == "gru":
        return (lambda xw, h, w, b: rnn_ops._gru_layer(xw, h, w, b, **attrs)[:2],
                [t(rows, 6), t(batch, 2), t(6, 2), t(6)])
    return (lambda xw, h, w: rnn_ops._rnn_layer(xw, h, w, nonlinearity=kind, **attrs),
            [t(rows, 2), t(batch, 2), t(2, 2)])


@pytest.mark.parametrize("kind,batch_sizes,reverse", [
    ("lstm_proj", (2, 2, 1), False), ("lstm", (2, 1, 1), True), ("lstm", (2, 2), False),
    ("gru", (2, 2, 1), True), ("gru", (2, 2), False), ("tanh", (3, 2, 1), True),
    ("relu", (2, 2, 2), False)])
def test_layer_ops_gradgradcheck(kind, batch_sizes, reverse):
    """Second derivatives go through the ember-op replay of the recurrence."""
    fn, args = _layer_case(kind, batch_sizes, reverse)
    assert ember.autograd.gradcheck(fn, args)
    assert ember.autograd.gradgradcheck(fn, args)


@pytest.mark.parametrize("batch_sizes", BATCHES, ids=["padded", "packed"])
@pytest.mark.parametrize("reverse", [False, True])
def test_reference_recurrences_match_the_kernels(batch_sizes, reverse):
    """The ember-op replay used for double backward computes what the kernels compute."""
    rows, batch = sum(batch_sizes), batch_sizes[0]

    def t(*shape):
        return ember.from_numpy(T(*shape))
    attrs = {"batch_sizes": batch_sizes, "reverse": reverse}
    args = [t(rows, 12), t(batch, 2), t(batch, 3), t(12, 2), t(2, 3)]
    pairs = [(rnn_ops._lstm_layer(*args, **attrs)[:3], rnn_ops._reference_lstm(*args, **attrs))]
    args = [t(rows, 6), t(batch, 2), t(6, 2), t(6)]
    pairs.append((rnn_ops._gru_layer(*args, **attrs)[:2], rnn_ops._reference_gru(*args, **attrs)))
    args = [t(rows, 2), t(batch, 2), t(2, 2)]
    pairs.append((rnn_ops._rnn_layer(*args, nonlinearity="relu", **attrs),
                  rnn_ops._reference_rnn(*args, nonlinearity="relu", **attrs)))
    for fused, reference in pairs:
        for a, b in zip(fused, reference):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_module_double_backward():
    mod = ember.nn.LSTM(2, 2, bidirectional=True).double()
    x = ember.from_numpy(T(3, 1, 2)).requires_grad_()

    def fn(x):
        return mod(x)[0]
    assert ember.autograd.gradgradcheck(fn, [x])


# ----------------------------------------------------------------------------------------------
# packing utilities


def utils(m):
    return m.nn.utils.rnn


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [4, 3, 3, 1]),
                                                    (False, [2, 4, 1, 3])])
def test_pack_and_pad_round_trip(batch_first, enforce_sorted, lengths):
    def fn(m, x):
        packed = utils(m).pack_padded_sequence(x, lengths, batch_first=batch_first,
                                               enforce_sorted=enforce_sorted)
        padded, out_lengths = utils(m).pad_packed_sequence(packed, batch_first=batch_first,
                                                           padding_value=7.0)
        return packed.data, packed.batch_sizes, padded, out_lengths
    check(fn, [T(4, 4, 2)])  # (T, B, 2) or (B, T, 2): four of each


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    check(lambda m, a, b, c: utils(m).pad_sequence([a, b, c], batch_first=batch_first,
                                                    padding_value=-1.0,
                                                    padding_side=padding_side),
          [T(2, 3), T(4, 3), T(1, 3)])


def test_pack_sequence_unpack_and_unpad():
    def fn(m, a, b, c):
        packed = utils(m).pack_sequence([a, b, c], enforce_sorted=False)
        padded, lengths = utils(m).pad_packed_sequence(packed)
        return (packed.data, packed.sorted_indices, utils(m).unpack_sequence(packed),
                utils(m).unpad_sequence(padded, lengths))
    check(fn, [T(2), T(4), T(3)])
    check(lambda m, a, b: utils(m).pack_sequence([a, b]).data, [T(3, 2), T(2, 2)])


def test_packed_sequence_object():
    packed = ember.nn.utils.rnn.pack_sequence([ember.ones(3, 2), ember.ones(1, 2)])
    assert packed.batch_sizes.tolist() == [2, 1, 1]
    assert packed.sorted_indices is None and packed.unsorted_indices is None
    assert packed.double().data.dtype is ember.float64
    assert packed.to(ember.float64).batch_sizes.dtype is ember.int64
    assert packed.to(ember.float32) is packed
    assert not packed.is_cuda
    t_packed = torch.nn.utils.rnn.pack_sequence([torch.ones(3, 2), torch.ones(1, 2)])
    assert packed.is_pinned() == t_packed.is_pinned()
    assert packed.pin_memory() is packed
    rebuilt = ember.nn.utils.rnn.PackedSequence(packed.data, packed.batch_sizes)
    assert rebuilt.data is packed.data
    assert ember.nn.utils.rnn.PackedSequence((packed.data, packed.batch_sizes)).batch_sizes \
        is packed.batch_sizes
    perm = ember.tensor([2, 0, 1])
    assert ember.nn.utils.rnn.invert_permutation(perm).tolist() == \
        torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 1])).tolist()


def test_packing_errors_like_torch():
    x = T(4, 3, 2)
    check_raises(lambda m, x: utils(m).pack_padded_sequence(x, [4, 2, 3]), [x],
                 match="must be sorted in decreasing order")
    check_raises(lambda m, x: utils(m).pack_padded_sequence(x, [4, 3, 0]), [x],
                 match="has to be greater than 0")
    check_raises(lambda m, x: utils(m).pack_padded_sequence(x, [4, 3]), [x],
                 match="Expected `len(lengths)` to be equal to batch_size, but got 2")
    check_raises(lambda m, x: utils(m).pack_padded_sequence(x, m.tensor([[4, 3, 2]])), [x],
                 match="'lengths' argument should be a 1D CPU int64 tensor")
    check_raises(lambda m: utils(m).pad_sequence([]), match="received an empty list")
    check_raises(lambda m: utils(m).pad_sequence([m.zeros(2)], padding_side="up"),
                 match="Expected padding_side to be one of left or right, but got up.")
    check_raises(lambda m: utils(m).pad_sequence([m.zeros(2, 3), m.zeros(3, 4)]))
    check_raises(lambda m: utils(m).pad_packed_sequence(
        utils(m).pack_sequence([m.zeros(3), m.zeros(2)]), total_length=2),
                 match="Expected total_length to be at least the length of the longest")

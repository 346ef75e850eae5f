"""Rows for ember/ops/nn/rnn.py: the layer ops run through nn.RNN / LSTM / GRU modules whose
weights are the row's inputs (more in tests/test_nn_rnn.py)."""
from ._spec import Spec, T


def _rnn(m, name, x, *weights, hidden, **kwargs):
    """Run `name` with the given tensors as its weights (in _flat_weights_names order)."""
    mod = getattr(m.nn, name)(x.shape[-1], hidden, **kwargs).to(x.dtype)
    for param, w in zip(list(mod._flat_weights_names), weights):
        delattr(mod, param)
        setattr(mod, param, w)
    return mod(x)


SPECS = [
    Spec("lstm_layer", lambda m, x, *w: _rnn(m, "LSTM", x, *w, hidden=3),
         [(T(4, 2, 2), T(12, 2), T(12, 3), T(12), T(12))],
         ops=["lstm_layer", "lstm_layer_backward"]),
    Spec("lstm_layer_proj_bidirectional",
         lambda m, x, *w: _rnn(m, "LSTM", x, *w, hidden=3, proj_size=2, bidirectional=True,
                               bias=False),
         [(T(3, 2, 2), T(12, 2), T(12, 2), T(2, 3), T(12, 2), T(12, 2), T(2, 3))],
         ops=["lstm_layer", "lstm_layer_backward"]),
    Spec("gru_layer", lambda m, x, *w: _rnn(m, "GRU", x, *w, hidden=3, bidirectional=True),
         [(T(4, 2, 2), T(9, 2), T(9, 3), T(9), T(9), T(9, 2), T(9, 3), T(9), T(9))],
         ops=["gru_layer", "gru_layer_backward"]),
    Spec("rnn_layer_tanh", lambda m, x, *w: _rnn(m, "RNN", x, *w, hidden=3),
         [(T(4, 2, 2), T(3, 2), T(3, 3), T(3), T(3))],
         ops=["rnn_layer", "rnn_layer_backward"]),
    Spec("rnn_layer_relu", lambda m, x, *w: _rnn(m, "RNN", x, *w, hidden=3,
                                                 nonlinearity="relu", batch_first=True),
         [(T(2, 4, 2), T(3, 2), T(3, 3), T(3), T(3))],
         ops=["rnn_layer", "rnn_layer_backward"]),
]

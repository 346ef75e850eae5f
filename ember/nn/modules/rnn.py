"""RNN, LSTM, GRU and their single-step cells, with torch's parameters and checkpoints.

Parameters are registered exactly as torch does, per layer and direction:

    weight_ih_l{k}[_reverse]  (gates * hidden, input)     bias_ih_l{k}[_reverse]  (gates * hidden)
    weight_hh_l{k}[_reverse]  (gates * hidden, hidden)    bias_hh_l{k}[_reverse]  (gates * hidden)
    weight_hr_l{k}[_reverse]  (proj_size, hidden)         LSTM with proj_size > 0 only

with gates = 4 (LSTM: i, f, g, o), 3 (GRU: r, z, n) or 1 (RNN), so named_parameters(),
state_dict() and `_flat_weights_names` match torch's and checkpoints load either way. All
weights start at U(-1/sqrt(hidden), 1/sqrt(hidden)).

`forward` accepts a padded batch (T, B, input) (or (B, T, input) with batch_first), an unbatched
sequence (T, input), or a `PackedSequence`; it checks the shapes with torch's messages and then
runs one layer op per layer and direction (`ember/ops/nn/rnn.py`).

Read next: `ember/ops/nn/rnn.py` (the recurrence kernels), `ember/nn/utils/rnn.py` (packing).
"""
import math
import numbers
import warnings

from ... import _creation
from ... import _dtype as dt
from ...ops.nn import rnn as _ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU: parameters, checks, layers and directions."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        _check_config(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                      proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weights_names = []
        self._all_weights = []
        directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        gate_size = _GATES[mode] * hidden_size
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for stem, shape in shapes.items():
                    name = f"{stem}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_creation.empty(shape, device=device,
                                                                  dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        """The weights in registration order (torch keeps this list for cuDNN)."""
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: cuDNN's packed weight buffer does not exist here."""

    def reset_parameters(self):
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), torch's
        initialisation."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("proj_size", 0)  # LSTMs pickled before torch 1.8

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------------------------------------
    # checks (torch's names and messages)

    def check_input(self, input, batch_sizes):
        """Check the input's dtype (that of the weights, else ValueError), its number of dimensions
        (2 when packed, 3 otherwise) and its last size (`input_size`), raising torch's errors."""
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        """The shape the initial hidden state must have for `input`: (num_layers * directions,
        batch, proj_size or hidden_size)."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """Raise RuntimeError (with `msg`) unless `hx` has the expected shape."""
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        """Check the input and the initial hidden state before a forward."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """Reorder the batch dimension of the hidden state by `permutation` (for packed sequences
        sorted by length); None leaves it as is."""
        return hx if permutation is None else hx.index_select(1, permutation)

    # ------------------------------------------------------------------------------------------
    # forward

    def forward(self, input, hx=None):
        """Run the RNN or GRU over a sequence; returns `(output, h_n)` (LSTM overrides this to
        carry `(h, c)`).

        `input` is (L, N, H_in) (or (N, L, H_in) with batch_first, (L, H_in) unbatched, or a
        PackedSequence, which gives a PackedSequence output); `hx` is the initial hidden state
        (num_layers * directions, N, hidden_size), zeros when None. `output` holds the last
        layer's h_t for every step (both directions concatenated when bidirectional); h_n holds
        every layer's final state."""
        output, (h_n,) = self._forward(input, None if hx is None else (hx,))
        return output, h_n

    def _forward(self, input, states):
        """Shared forward: `states` is None or a tuple (h0,) / (h0, c0) as the user gave it."""
        packed = isinstance(input, PackedSequence)
        if packed:
            input, sizes_tensor, sorted_indices, unsorted_indices = input
            batch_sizes = tuple(sizes_tensor.tolist())
            batched = True
        else:
            batched = self._check_unpacked(input, states)
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
                states = None if states is None else tuple(s.unsqueeze(1) for s in states)
            batch_sizes = sorted_indices = unsorted_indices = None
        if states is None:
            states = self._zero_states(input, batch_sizes)
        else:
            states = tuple(self.permute_hidden(s, sorted_indices) for s in states)
        self._check_states(input, states, batch_sizes)
        data, batch_sizes = (input, batch_sizes) if packed else self._rows(input)
        out, finals = self._run_layers(data, batch_sizes, states)
        finals = tuple(self.permute_hidden(s, unsorted_indices) for s in finals)
        if packed:
            return PackedSequence(out, sizes_tensor, sorted_indices, unsorted_indices), finals
        out = out.reshape(len(batch_sizes), batch_sizes[0], out.shape[-1])
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            finals = tuple(s.squeeze(1) for s in finals)
        return out, finals

    def _rows(self, input):
        """A padded batch as packed rows: time-major (T * B, input), batch_sizes (B,) * T."""
        data = input.transpose(0, 1) if self.batch_first else input
        steps, batch = data.shape[:2]
        if steps == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        return data.reshape(steps * batch, data.shape[2]), (batch,) * steps

    def _check_unpacked(self, input, states):
        """Is the (non-packed) input batched? Checks dims like torch."""
        if input.dim() not in (2, 3):
            name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        batched = input.dim() == 3
        if states is not None:
            dims = [s.dim() for s in states]
            want = 3 if batched else 2
            if any(d != want for d in dims):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if self.mode == "LSTM":
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D "
                                       f"but got ({dims[0]}-D, {dims[1]}-D) tensors")
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{dims[0]}-D tensor")
        return batched

    def _zero_states(self, input, batch_sizes):
        directions = 2 if self.bidirectional else 1
        if batch_sizes is not None:
            batch = batch_sizes[0] if batch_sizes else 0
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = [real_hidden] + ([self.hidden_size] if self.mode == "LSTM" else [])
        return tuple(_creation.zeros((self.num_layers * directions, batch, size),
                                     dtype=input.dtype, device=input.device) for size in sizes)

    def _check_states(self, input, states, batch_sizes):
        self.check_forward_args(input, states[0], batch_sizes)

    def _run_layers(self, data, batch_sizes, states):
        """Every layer and direction over the rows of `data`; returns (output rows, finals)."""
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in states]
        x = data
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                weights = [getattr(self, name) for name in self._all_weights[k]]
                out, *ends = self._layer(x, weights, [s[k] for s in states], batch_sizes,
                                         direction == 1)
                outputs.append(out)
                for collected, end in zip(finals, ends):
                    collected.append(end)
            x = outputs[0] if directions == 1 else _cat(outputs, 1)
            if self.dropout and self.training and layer + 1 < self.num_layers:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(_stack(collected) for collected in finals)

    def _layer(self, x, weights, states, batch_sizes, reverse):
        """One layer, one direction: (output rows, final h[, final c])."""
        w_ih, w_hh = weights[:2]
        b_ih, b_hh = weights[2:4] if self.bias else (None, None)
        w_hr = weights[-1] if self.proj_size > 0 else None
        if self.mode == "GRU":  # b_hh sits inside r * (h W_hn^T + b_hn): it cannot be folded
            out, h_n, _, _ = _ops._gru_layer(F.linear(x, w_ih, b_ih), states[0], w_hh, b_hh,
                                             batch_sizes=batch_sizes, reverse=reverse)
            return out, h_n
        xw = F.linear(x, w_ih, None if b_ih is None else b_ih + b_hh)
        if self.mode == "LSTM":
            out, h_n, c_n, _, _ = _ops._lstm_layer(xw, states[0], states[1], w_hh, w_hr,
                                                   batch_sizes=batch_sizes, reverse=reverse)
            return out, h_n, c_n
        nonlinearity = "tanh" if self.mode == "RNN_TANH" else "relu"
        return _ops._rnn_layer(xw, states[0], w_hh, batch_sizes=batch_sizes, reverse=reverse,
                               nonlinearity=nonlinearity)


def _cat(tensors, dim):
    from ... import cat

    return cat(tensors, dim)


def _stack(tensors):
    from ... import stack

    return stack(tensors)


def _check_config(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or \
            not 0 <= dropout <= 1:
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
    for name, value in (("bias", bias), ("batch_first", batch_first)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
    for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(value, int):
            raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
        if value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
        batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)"""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             f"or 'relu'.")
        super().__init__("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", *args,
                         **kwargs)


class LSTM(RNNBase):
    """Long short-term memory; returns (output, (h_n, c_n)). With proj_size > 0 the hidden
    state is projected: h_t = (o_t * tanh(c_t)) W_hr^T."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        """The shape the initial cell state must have for `input`: (num_layers * directions, batch,
        hidden_size); never projected."""
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        return (self.num_layers * directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        """Check the input and both initial states (h_0, c_0) before a forward."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        """Reorder the batch dimension of h and c (or of a single tensor) by `permutation`; None
        leaves them as they are."""
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    def _check_states(self, input, states, batch_sizes):
        self.check_forward_args(input, states, batch_sizes)

    def forward(self, input, hx=None):
        """Run the LSTM over a sequence; returns `(output, (h_n, c_n))`.

        `input` is (L, N, H_in) (or (N, L, H_in) with batch_first, (L, H_in) unbatched, or a
        PackedSequence, which gives a PackedSequence output); `hx` is `(h_0, c_0)`, zeros when None.
        `output` holds the last layer's h_t for every step; h_n has proj_size features when
        projections are on, c_n always hidden_size."""
        output, (h_n, c_n) = self._forward(input, None if hx is None else tuple(hx))
        return output, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit (torch's gate order r, z, n):
        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr),  z = sigmoid(W_iz x + b_iz + W_hz h + b_hz)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),  h' = (1 - z) * n + z * h"""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ----------------------------------------------------------------------------------------------
# cells: one time step, same kernels (a one-step "sequence")


class RNNCellBase(Module):
    """weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden), bias_ih,
    bias_hh; all U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias

        def param(*shape):
            return Parameter(_creation.empty(shape, device=device, dtype=dtype))
        self.weight_ih = param(num_chunks * hidden_size, input_size)
        self.weight_hh = param(num_chunks * hidden_size, hidden_size)
        if bias:
            self.bias_ih = param(num_chunks * hidden_size)
            self.bias_hh = param(num_chunks * hidden_size)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        """Draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), torch's
        initialisation."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, states):
        """(batched input, batched states, was_batched); checks dims like torch."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for k, s in enumerate(states):
            if s is not None and s.dim() not in (1, 2):
                what = "hidden" if len(states) == 1 else f"hx[{k}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros((input.size(0), self.hidden_size), dtype=input.dtype,
                                    device=input.device)
            states = [zeros for _ in states]
        elif not batched:
            states = [s.unsqueeze(0) for s in states]
        self._check_shapes(input, states)
        return input, states, batched

    def _check_shapes(self, input, states):
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for k, s in enumerate(states):
            if input.size(0) != s.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} "
                                   f"batch size {s.size(0)}")
            if s.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {s.size(1)}, "
                                   f"expected {self.hidden_size}")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{dt.scalar_name(input.dtype)} and "
                               f"{dt.scalar_name(self.weight_ih.dtype)}")

    def _folded_bias(self):
        return None if self.bias_ih is None else self.bias_ih + self.bias_hh


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """One step: the next hidden state from `input` (N, input_size) or (input_size,) and `hx`
        (zeros when None)."""
        input, (h,), batched = self._prepare(input, hx, [hx])
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        xw = F.linear(input, self.weight_ih, self._folded_bias())
        out, _ = _ops._rnn_layer(xw, h, self.weight_hh, batch_sizes=(input.size(0),),
                                 reverse=False, nonlinearity=self.nonlinearity)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """(h', c') with c' = f * c + i * g, h' = o * tanh(c') (gates i, f, g, o)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        """One step: returns `(h', c')` from `input` (N, input_size) or (input_size,) and `hx = (h,
        c)` (zeros when None)."""
        states = [None, None] if hx is None else list(hx)
        input, (h, c), batched = self._prepare(input, hx, states)
        xw = F.linear(input, self.weight_ih, self._folded_bias())
        _, h, c, _, _ = _ops._lstm_layer(xw, h, c, self.weight_hh, None,
                                         batch_sizes=(input.size(0),), reverse=False)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """h' = (1 - z) * n + z * h (gates r, z, n; see GRU)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        """One step: the next hidden state from `input` (N, input_size) or (input_size,) and `hx`
        (zeros when None)."""
        input, (h,), batched = self._prepare(input, hx, [hx])
        xw = F.linear(input, self.weight_ih, self.bias_ih)
        out, _, _, _ = _ops._gru_layer(xw, h, self.weight_hh, self.bias_hh,
                                       batch_sizes=(input.size(0),), reverse=False)
        return out if batched else out.squeeze(0)

"""Recurrent layers: one op runs a whole layer in one direction over a (packed) sequence.

    xw = input @ W_ih^T + b        one GEMM for every time step at once (done by the caller)
    for each step t:  state = cell(xw[t] + state @ W_hh^T)      -- the op's kernel

A Python loop over time through the dispatcher would record ~10 graph nodes per step; here the
whole recurrence is one node whose kernel and backward work on raw arrays. The backward
(`*_layer_backward`, backpropagation through time) walks the steps in reverse with one small
GEMM per step and computes the weight gradients afterwards with one large GEMM over all steps.

Double backward: with `create_graph=True` the rules do not call the raw-array backward.
They replay the layer with ordinary ember ops (`_reference_*`, the readable statement of the
math, step by step) and differentiate that replay, so higher-order gradients hold.

Sequence layout. Rows are time-major and packed, as in `PackedSequence.data`: step t owns rows
[offset_t, offset_t + batch_sizes[t]), and batch sizes never grow (sequences are sorted by
length, longest first). A padded batch is the case where every batch size equals B. States
live in an "extended" row space of N + B rows: row r < N holds the state after row r's step,
rows N.. hold the initial state. `_plan` says, for each step in visiting order, which rows it
writes and which rows hold its previous state -- so packed, padded, forward and reverse
directions all run through the same loop.

Two cores. Each kernel prepares its arrays, then hands the time loop (`_lstm_steps`, ...,
in `_rnn_steps.py`) to `_walk`. For a large LSTM or GRU layer on the CPU, `_walk` runs the
loop for the first half of the batch here and for the second half in ember's helper process
(`ember/_helper.py`), side by side: the halves' sequences are independent, so they touch
disjoint rows of the same arrays, which then live in shared memory. Threads cannot do this:
the loop's small NumPy calls each take the GIL (docs/PERFORMANCE.md).

Gate orders are torch's: LSTM (i, f, g, o), GRU (r, z, n) with n = tanh(x_n + r * (h W_hn^T +
b_hn)). Read next: `ember/nn/modules/rnn.py` (the modules), `ember/nn/utils/rnn.py` (packing).
"""
import functools

import numpy

from ... import _helper
from ... import _shared_memory as shared_memory
from ..._tensor import Tensor
from ...autograd import grad_mode
from .._op import op
from ._rnn_steps import (
    _gather,
    _gru_steps,
    _gru_steps_backward,
    _lstm_gate_affine,
    _lstm_steps,
    _lstm_steps_backward,
    _plan,
    _scatter_add,
)

__all__ = []


# ----------------------------------------------------------------------------------------------
# state buffers (the plan and the time loops are in _rnn_steps.py)


def _extended(empty, n, init):
    """An (n + B, H) state buffer, from `empty(shape, dtype)`, whose last B rows are the
    initial state."""
    ext = empty((n + init.shape[0], init.shape[1]), init.dtype)
    ext[n:] = init
    return ext


def _final(xp, ext, last):
    return _gather(xp, ext, last).copy()


# ----------------------------------------------------------------------------------------------
# LSTM: c' = f * c + i * g,  h' = o * tanh(c')  (then h' @ W_hr^T with a projection)


@op("same", name="lstm_layer", node_name="LstmBackward0")
def _lstm_layer(xp, xw, h0, c0, w_hh, w_hr, *, batch_sizes, reverse):
    """Outputs: h for every row, final h, final c, and for the backward the activated gates
    (i, f, g, o) of every row and the cell states in the extended row space."""
    steps, last, n = _plan(batch_sizes, reverse)
    split = _splits(xp, batch_sizes, w_hh)
    empty = shared_memory.empty if split else xp.empty
    h_ext = _extended(empty, n, h0)
    c_ext = _extended(empty, n, c0)
    scale, shift = _lstm_gate_affine(xp, c0.shape[1], xw.dtype)
    # the scale folded into the inputs once. W_hh^T is made contiguous for the whole batch on
    # two BLAS threads (its GEMMs measured 10% faster against it than against a transposed
    # view, which repays the transposing copy); one BLAS thread runs as fast on the view.
    if split:
        w_hh_t = xp.multiply(w_hh, scale[:, None], out=empty(w_hh.shape, w_hh.dtype)).T
    else:
        w_hh_t = xp.multiply(w_hh.T, scale, out=empty(w_hh.T.shape, w_hh.dtype))
    acts = xp.multiply(xw, scale, out=empty(xw.shape, xw.dtype))
    _walk(_lstm_steps, xp, split, batch_sizes, reverse,
          (acts, h_ext, c_ext, w_hh_t, _for_helper(split, w_hr), scale, shift))
    return h_ext[:n], _final(xp, h_ext, last), _final(xp, c_ext, last), acts, c_ext


@_lstm_layer.grad
def _lstm_layer(g, xw, h0, c0, w_hh, w_hr, out, batch_sizes, reverse):
    g_out, g_hn, g_cn = g[:3]  # the gradients of the workspace outputs are never used
    if grad_mode.is_grad_enabled():
        return _replay_vjp(_reference_lstm, (xw, h0, c0, w_hh, w_hr), (g_out, g_hn, g_cn),
                           batch_sizes, reverse)
    grads = _lstm_layer_backward(g_out, g_hn, g_cn, h0, w_hh, w_hr, out[0], out[3], out[4],
                                 batch_sizes=batch_sizes, reverse=reverse)
    return grads if w_hr is not None else grads + (None,)


@op("same", name="lstm_layer_backward")
def _lstm_layer_backward(xp, g_out, g_hn, g_cn, h0, w_hh, w_hr, hs, acts, c_ext, *,
                         batch_sizes, reverse):
    """Backpropagation through time -> (d xw, d h0, d c0, d W_hh[, d W_hr])."""
    steps, last, n = _plan(batch_sizes, reverse)
    # split as the forward did: its saved arrays are where the helper can see them
    split = _splits(xp, batch_sizes, w_hh) and shared_memory.where(acts) is not None
    empty = shared_memory.empty if split else xp.empty
    dh_ext = _extended(empty, n, xp.zeros_like(h0))  # row r: dLoss/dh_r, final once visited
    dh_ext[:n] = g_out
    _scatter_add(dh_ext, last, g_hn)
    dc_ext = empty(c_ext.shape, c_ext.dtype)
    dc_ext[...] = 0
    _scatter_add(dc_ext, last, g_cn)
    d_gates = empty(acts.shape, acts.dtype)
    _walk(_lstm_steps_backward, xp, split, batch_sizes, reverse,
          (acts, c_ext, dh_ext, dc_ext, d_gates, _for_helper(split, w_hh),
           _for_helper(split, w_hr)))
    grads = (d_gates, dh_ext[n:], dc_ext[n:], _weight_grad(xp, d_gates, hs, h0, steps,
                                                           batch_sizes, reverse))
    if w_hr is not None:  # h_r = (o * tanh c)_r @ W_hr^T, so dW_hr = sum_r dh_r^T (o tanh c)_r
        hidden = c_ext.shape[1]
        grads += (dh_ext[:n].T @ (acts[:, 3 * hidden:] * xp.tanh(c_ext[:n])),)
    return grads


# ----------------------------------------------------------------------------------------------
# two processes: each walks half the batch


# A layer shares its batch with the helper process when it has at least SPLIT_BATCH sequences
# and its recurrent GEMMs come to at least SPLIT_MACS multiply-adds (~1 ms of work; a smaller
# walk takes about as long as the hand-off). Measured, LSTM forward + backward at 2 threads:
# batch 24-128 with hidden 64-512 ran 4-15% faster in two processes, batch 8-16 1-9% slower
# (half of such a batch is too few rows to repay a GEMM on one BLAS thread).
SPLIT_BATCH = 24
SPLIT_MACS = 1 << 26


def _splits(xp, batch_sizes, w_hh):
    return xp is numpy and len(batch_sizes) > 0 and batch_sizes[0] >= SPLIT_BATCH and \
        sum(batch_sizes) * w_hh.shape[0] * w_hh.shape[1] >= SPLIT_MACS and _helper.usable()


def _for_helper(split, a):
    """`a` itself, or, when the walk is split, a copy in shared memory, where the helper
    process sees it (None stays None)."""
    if not split or a is None:
        return a
    copy = shared_memory.empty(a.shape, a.dtype)
    copy[...] = a
    return copy


def _walk(fn, xp, split, batch_sizes, reverse, arrays):
    """fn(xp, part, *arrays) over the whole batch, or over its two halves side by side, one
    in the helper process. A part is `_plan`'s arguments (small to send; each process keeps
    its own cache of plans)."""
    whole = ((batch_sizes, reverse),) + arrays
    if not split:
        fn(xp, *whole)
        return
    size = batch_sizes[0]
    mine = ((batch_sizes, reverse, 0, size // 2),) + arrays
    theirs = ((batch_sizes, reverse, size // 2, size),) + arrays
    _helper.side_by_side(fn, xp, mine, theirs, whole)


def _weight_grad(xp, d_gates, hs, h0, steps, batch_sizes, reverse):
    """d W_hh = sum over rows r of d_gates_r^T (the state row r's step started from)."""
    size = batch_sizes[0] if batch_sizes else 0
    if size == 0 or any(b != size for b in batch_sizes):  # packed: gather the states
        return d_gates.T @ _previous(xp, hs, h0, steps)
    # padded: the states are h0 for the first step visited, then hs shifted by one step --
    # two products on views instead of building that (N, H) array (and a concatenation as
    # large): less memory at the backward's peak, about as fast
    n = hs.shape[0]
    first, rest, shifted = ((slice(n - size, n), slice(0, n - size), slice(size, n)) if reverse
                            else (slice(0, size), slice(size, n), slice(0, n - size)))
    grad = d_gates[rest].T @ hs[shifted]
    grad += d_gates[first].T @ h0
    return grad


def _previous(xp, hs, h0, steps, empty=None):
    """Row r: the state that row r's step started from (for the W_hh gradient), in an array
    from `empty(shape, dtype)` (xp.empty by default)."""
    ext = xp.concatenate([hs, h0])
    prev_all = (empty or xp.empty)(hs.shape, hs.dtype)
    for rows, prev in steps:
        prev_all[rows] = _gather(xp, ext, prev)
    return prev_all


# ----------------------------------------------------------------------------------------------
# GRU: r, z = sigmoid(x_rz + h W_rz^T + b_rz),  n = tanh(x_n + r * (h W_n^T + b_n)),
#      h' = (1 - z) * n + z * h


@op("same", name="gru_layer", node_name="GruBackward0")
def _gru_layer(xp, xw, h0, w_hh, b_hh, *, batch_sizes, reverse):
    """Outputs: h for every row, final h, and for the backward the gates (r, z, n) of every
    row and the hidden part of the n gate (h W_n^T + b_n)."""
    steps, last, n = _plan(batch_sizes, reverse)
    split = _splits(xp, batch_sizes, w_hh)
    empty = shared_memory.empty if split else xp.empty
    h_ext = _extended(empty, n, h0)
    acts = empty(xw.shape, xw.dtype)
    hidden_n = empty((n, h0.shape[1]), xw.dtype)
    # see _lstm_layer for the two forms of W_hh^T
    w_hh_t = _for_helper(split, w_hh).T if split else xp.ascontiguousarray(w_hh.T)
    _walk(_gru_steps, xp, split, batch_sizes, reverse,
          (_for_helper(split, xw), h_ext, acts, hidden_n, w_hh_t, b_hh))
    return h_ext[:n], _final(xp, h_ext, last), acts, hidden_n


@_gru_layer.grad
def _gru_layer(g, xw, h0, w_hh, b_hh, out, batch_sizes, reverse):
    g_out, g_hn = g[:2]
    if grad_mode.is_grad_enabled():
        return _replay_vjp(_reference_gru, (xw, h0, w_hh, b_hh), (g_out, g_hn), batch_sizes,
                           reverse)
    grads = _gru_layer_backward(g_out, g_hn, h0, w_hh, out[0], out[2], out[3],
                                batch_sizes=batch_sizes, reverse=reverse)
    return grads if b_hh is not None else grads[:3] + (None,)


@op("same", name="gru_layer_backward")
def _gru_layer_backward(xp, g_out, g_hn, h0, w_hh, hs, acts, hidden_n, *, batch_sizes,
                        reverse):
    """Backpropagation through time -> (d xw, d h0, d W_hh, d b_hh)."""
    steps, last, n = _plan(batch_sizes, reverse)
    split = _splits(xp, batch_sizes, w_hh) and shared_memory.where(acts) is not None
    empty = shared_memory.empty if split else xp.empty
    dh_ext = _extended(empty, n, xp.zeros_like(h0))
    dh_ext[:n] = g_out
    _scatter_add(dh_ext, last, g_hn)
    h_prev_all = _previous(xp, hs, h0, steps, empty)
    d_xw = empty(acts.shape, acts.dtype)
    d_hh = empty(acts.shape, acts.dtype)  # the gradient of h W_hh^T + b_hh
    _walk(_gru_steps_backward, xp, split, batch_sizes, reverse,
          (acts, hidden_n, h_prev_all, dh_ext, d_xw, d_hh, _for_helper(split, w_hh)))
    return d_xw, dh_ext[n:], d_hh.T @ h_prev_all, d_hh.sum(0)


# ----------------------------------------------------------------------------------------------
# Elman RNN: h' = tanh(x + h W_hh^T)  or  relu(...)   (both biases are folded into x)


@op("same", name="rnn_layer", node_name="RnnBackward0")
def _rnn_layer(xp, xw, h0, w_hh, *, batch_sizes, reverse, nonlinearity):
    steps, last, n = _plan(batch_sizes, reverse)
    h_ext = _extended(xp.empty, n, h0)
    w_hh_t = xp.ascontiguousarray(w_hh.T)  # small-batch GEMMs: ~2x faster than a T view
    for rows, prev in steps:
        h = h_ext[rows]
        xp.matmul(_gather(xp, h_ext, prev), w_hh_t, out=h)
        h += xw[rows]
        if nonlinearity == "tanh":
            xp.tanh(h, out=h)
        else:
            xp.maximum(h, 0, out=h)
    return h_ext[:n], _final(xp, h_ext, last)


@_rnn_layer.grad
def _rnn_layer(g, xw, h0, w_hh, out, batch_sizes, reverse, nonlinearity):
    g_out, g_hn = g
    if grad_mode.is_grad_enabled():
        return _replay_vjp(functools.partial(_reference_rnn, nonlinearity=nonlinearity),
                           (xw, h0, w_hh), (g_out, g_hn), batch_sizes, reverse)
    return _rnn_layer_backward(g_out, g_hn, h0, w_hh, out[0], batch_sizes=batch_sizes,
                               reverse=reverse, nonlinearity=nonlinearity)


@op("same", name="rnn_layer_backward")
def _rnn_layer_backward(xp, g_out, g_hn, h0, w_hh, hs, *, batch_sizes, reverse,
                        nonlinearity):
    """Backpropagation through time -> (d xw, d h0, d W_hh)."""
    steps, last, n = _plan(batch_sizes, reverse)
    dh_ext = _extended(xp.empty, n, xp.zeros_like(h0))
    dh_ext[:n] = g_out
    _scatter_add(dh_ext, last, g_hn)
    d_xw = xp.empty_like(hs)
    for rows, prev in reversed(steps):
        h = hs[rows]
        d = d_xw[rows]
        if nonlinearity == "tanh":
            xp.multiply(dh_ext[rows], 1 - h * h, out=d)
        else:
            xp.multiply(dh_ext[rows], h > 0, out=d)
        _scatter_add(dh_ext, prev, d @ w_hh)
    return d_xw, dh_ext[n:], _weight_grad(xp, d_xw, hs, h0, steps, batch_sizes, reverse)


# ----------------------------------------------------------------------------------------------
# the reference: the same recurrences with ember ops, for double backward


def _replay_vjp(reference, inputs, grads, batch_sizes, reverse):
    """The vector-Jacobian product of `reference(*inputs)`, itself differentiable."""
    from ...autograd import grad

    wanted = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    outputs = reference(*inputs, batch_sizes=batch_sizes, reverse=reverse)
    found = iter(grad(outputs, wanted, grads, create_graph=True, allow_unused=True))
    return tuple(next(found) if isinstance(x, Tensor) and x.requires_grad else None
                 for x in inputs)


def _recur(step, xw, initial, batch_sizes, reverse):
    """Run `step(xw_rows, states) -> states` over the packed rows; states[0] is the output.

    Returns (output rows, final states). Sequences end (forward) or start (reverse) where the
    batch size changes, so the running states are cut or extended there."""
    from ..shape import cat

    offsets = [0]
    for size in batch_sizes:
        offsets.append(offsets[-1] + size)
    outputs = [None] * len(batch_sizes)
    ended = []  # states of sequences that finished early, latest rows first
    states = None
    for t in (range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))):
        size = batch_sizes[t]
        if states is None:
            states = [s[:size] for s in initial]
        elif states[0].shape[0] > size:
            ended.append([s[size:] for s in states])
            states = [s[:size] for s in states]
        elif states[0].shape[0] < size:
            states = [cat([s, s0[s.shape[0]:size]]) for s, s0 in zip(states, initial)]
        states = step(xw[offsets[t]:offsets[t + 1]], states)
        outputs[t] = states[0]
    ended.append(states)
    finals = [cat([e[k] for e in reversed(ended)]) if len(ended) > 1 else states[k]
              for k in range(len(states))]
    return cat(outputs), finals


def _reference_lstm(xw, h0, c0, w_hh, w_hr, *, batch_sizes, reverse):
    def step(x, states):
        h, c = states
        i, f, g, o = (x + h @ w_hh.mT).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return [h if w_hr is None else h @ w_hr.mT, c]

    out, (h_n, c_n) = _recur(step, xw, [h0, c0], batch_sizes, reverse)
    return out, h_n, c_n


def _reference_gru(xw, h0, w_hh, b_hh, *, batch_sizes, reverse):
    def step(x, states):
        (h,) = states
        hh = h @ w_hh.mT if b_hh is None else h @ w_hh.mT + b_hh
        x_r, x_z, x_n = x.chunk(3, 1)
        h_r, h_z, h_n = hh.chunk(3, 1)
        r = (x_r + h_r).sigmoid()
        z = (x_z + h_z).sigmoid()
        new = (x_n + r * h_n).tanh()
        return [(1 - z) * new + z * h]

    out, (h_n,) = _recur(step, xw, [h0], batch_sizes, reverse)
    return out, h_n


def _reference_rnn(xw, h0, w_hh, *, batch_sizes, reverse, nonlinearity):
    def step(x, states):
        pre = x + states[0] @ w_hh.mT
        return [pre.tanh() if nonlinearity == "tanh" else pre.relu()]

    out, (h_n,) = _recur(step, xw, [h0], batch_sizes, reverse)
    return out, h_n


# ----------------------------------------------------------------------------------------------
# torch's functional forms: torch.lstm / gru / rnn_tanh / rnn_relu over a flat weight list (as
# nn.LSTM's _flat_weights: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]), and the
# single-step cells


def _layer(mode, x, weights, states, has_biases, batch_sizes, reverse):
    """One layer, one direction over the rows x: (output rows, final state(s))."""
    from .linear import linear

    w_ih, w_hh = weights[:2]
    b_ih, b_hh = weights[2:4] if has_biases else (None, None)
    if mode == "gru":  # b_hh stays inside the reset gate's product
        out, h_n, _, _ = _gru_layer(linear(x, w_ih, b_ih), states[0], w_hh, b_hh,
                                    batch_sizes=batch_sizes, reverse=reverse)
        return out, (h_n,)
    xw = linear(x, w_ih, None if b_ih is None else b_ih + b_hh)
    if mode == "lstm":
        w_hr = weights[4] if len(weights) > (4 if has_biases else 2) else None
        out, h_n, c_n, _, _ = _lstm_layer(xw, states[0], states[1], w_hh, w_hr,
                                          batch_sizes=batch_sizes, reverse=reverse)
        return out, (h_n, c_n)
    out, h_n = _rnn_layer(xw, states[0], w_hh, batch_sizes=batch_sizes, reverse=reverse,
                          nonlinearity=mode[4:])
    return out, (h_n,)


def _layers(mode, data, batch_sizes, states, params, has_biases, num_layers, dropout, train,
            bidirectional):
    """Every layer and direction over packed rows: (output rows, stacked final states)."""
    from ..shape import cat, stack
    from .dropout import dropout as _dropout

    directions = 2 if bidirectional else 1
    per = len(params) // (num_layers * directions)
    finals = [[] for _ in states]
    x = data
    for layer in range(num_layers):
        outputs = []
        for d in range(directions):
            k = layer * directions + d
            out, ends = _layer(mode, x, params[k * per:(k + 1) * per], [s[k] for s in states],
                               has_biases, batch_sizes, d == 1)
            outputs.append(out)
            for collected, end in zip(finals, ends):
                collected.append(end)
        x = outputs[0] if directions == 1 else cat(outputs, 1)
        if dropout and train and layer + 1 < num_layers:
            x = _dropout(x, dropout, True)
    return x, tuple(stack(collected) for collected in finals)


def _recurrent(mode, input, states, params, has_biases, num_layers, dropout, train,
               bidirectional, batch_first=False, batch_sizes=None):
    """The shared body: a padded (T, B, F) / (B, T, F) input, or packed rows + batch_sizes."""
    params = list(params)
    if batch_sizes is not None:
        sizes = tuple(int(n) for n in batch_sizes.tolist())
        out, finals = _layers(mode, input, sizes, states, params, has_biases, num_layers,
                              dropout, train, bidirectional)
        return (out,) + finals
    data = input.transpose(0, 1) if batch_first else input
    steps, batch = data.shape[:2]
    rows = data.reshape(steps * batch, data.shape[2])
    out, finals = _layers(mode, rows, (batch,) * steps, states, params, has_biases,
                          num_layers, dropout, train, bidirectional)
    out = out.reshape(steps, batch, out.shape[-1])
    return (out.transpose(0, 1) if batch_first else out,) + finals


def _functional(mode):
    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            batch_first=False):
        # the packed overload: (data, batch_sizes, hx, params, has_biases, num_layers,
        # dropout, train, bidirectional) -- told apart by the weight list in 4th place
        if isinstance(has_biases, (list, tuple)):
            data, batch_sizes = input, hx
            hx, params, has_biases, num_layers, dropout, train, bidirectional = (
                params, has_biases, num_layers, dropout, train, bidirectional, batch_first)
            states = tuple(hx) if mode == "lstm" else (hx,)
            return _recurrent(mode, data, states, params, has_biases, num_layers, dropout,
                              train, bidirectional, batch_sizes=batch_sizes)
        states = tuple(hx) if mode == "lstm" else (hx,)
        return _recurrent(mode, input, states, params, has_biases, num_layers, dropout, train,
                          bidirectional, batch_first)
    run.__name__ = run.__qualname__ = mode
    outputs = "(output, h_n, c_n)" if mode == "lstm" else "(output, h_n)"
    run.__doc__ = (f"torch.{mode}(input, hx, params, has_biases, num_layers, dropout, train, "
                   f"bidirectional, batch_first) -> {outputs}: nn.{mode.upper()}'s computation "
                   f"over a flat weight list (also the packed form with batch_sizes second).")
    return run


def _cell(mode):
    def cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
        states = tuple(hx) if mode == "lstm" else (hx,)
        weights = [w_ih, w_hh] + ([b_ih, b_hh] if b_ih is not None else [])
        batched = input.ndim == 2
        if not batched:
            input, states = input.unsqueeze(0), tuple(s.unsqueeze(0) for s in states)
        out, ends = _layer(mode, input, weights, states, b_ih is not None,
                           (input.shape[0],), False)
        ends = ends if batched else tuple(e.squeeze(0) for e in ends)
        return ends if mode == "lstm" else ends[0]
    cell.__name__ = cell.__qualname__ = mode + "_cell"
    cell.__doc__ = f"torch.{mode}_cell: one step of nn.{mode.upper()}Cell's computation."
    return cell


def _export_functional_forms():
    from .._op import export

    for mode in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        export(_functional(mode), name=mode, function=True, method=False)
        export(_cell(mode), name=mode + "_cell", function=True, method=False)


_export_functional_forms()

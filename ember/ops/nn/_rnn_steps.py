"""The time loops of the recurrent layers (`rnn.py`), on raw arrays (`xp`: NumPy or CuPy).

Each loop walks the steps of a `part` of the batch -- `_plan`'s arguments: the whole batch, or
one half -- and writes disjoint rows of the arrays it is given. `rnn.py` prepares the arrays,
runs the loops through `_walk`, and holds the ops, their backward rules and their docs; the
layout (packed rows, the extended state rows, the plan) is described there.

Why a module of their own: a large layer walks half its batch in ember's helper process
(`ember/_helper.py`), which imports this module and none of the rest of ember: it imports
the standard library only, and must stay so. With all of ember imported the helper held
~26 MiB more private memory: the lstm benchmark's peak at 2 threads, which counts it, went
from 72 to 60 MiB with this module alone (torch: 61).
"""
import functools

__all__ = []


# ----------------------------------------------------------------------------------------------
# the step plan


@functools.lru_cache(maxsize=512)
def _plan(batch_sizes, reverse, lo=0, hi=None):
    """(steps, last, n): steps = ((rows, prev), ...) in visiting order, where `rows` is the
    slice a step writes and `prev` the slices (one or two) holding its previous state; `last`
    the slices holding each sequence's final state, in batch order; n the number of rows.

    With `lo`, `hi` the steps cover only sequences lo..hi-1 of the batch (the half that one
    process walks); `last` and `n` are always the whole batch's."""
    offsets = [0]
    for size in batch_sizes:
        offsets.append(offsets[-1] + size)
    n = offsets[-1]
    count = len(batch_sizes)
    hi = batch_sizes[0] if hi is None and count else hi
    steps = []
    for t in (range(count - 1, -1, -1) if reverse else range(count)):
        size = min(batch_sizes[t], hi) - lo  # this step's sequences in the part
        if size <= 0:
            continue
        rows = slice(offsets[t] + lo, offsets[t] + lo + size)
        if not reverse:  # the batch only shrinks: the previous step's rows, same sequences
            before = offsets[t - 1] if t else n
            prev = (slice(before + lo, before + lo + size),)
        else:  # the batch only grows: last step's rows, then newly starting sequences
            known = batch_sizes[t + 1] if t + 1 < count else 0
            prev = ()
            if min(known, hi) > lo:
                prev += (slice(offsets[t + 1] + lo, offsets[t + 1] + min(known, hi)),)
            if lo + size > max(known, lo):
                prev += (slice(n + max(known, lo), n + lo + size),)
        steps.append((rows, prev))
    if reverse:  # every sequence ends at t = 0
        last = (slice(0, batch_sizes[0]),) if count else ()
    else:  # sequences [batch_sizes[t+1], batch_sizes[t]) end at step t
        ends = list(batch_sizes[1:]) + [0]
        last = tuple(slice(offsets[t] + ends[t], offsets[t] + batch_sizes[t])
                     for t in range(count - 1, -1, -1) if batch_sizes[t] > ends[t])
    return tuple(steps), last, n


def _gather(xp, ext, pieces):
    if not pieces:  # an empty batch
        return ext[:0]
    if len(pieces) == 1:
        return ext[pieces[0]]
    return xp.concatenate([ext[p] for p in pieces])


def _scatter_add(ext, pieces, values):
    start = 0
    for p in pieces:
        stop = start + p.stop - p.start
        ext[p] += values[start:stop]
        start = stop


def _sigmoid_(xp, a):
    """In place: sigmoid(a) = (tanh(a/2) + 1) / 2, which never overflows."""
    a *= 0.5
    xp.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


# ----------------------------------------------------------------------------------------------
# LSTM


def _lstm_gate_affine(xp, hidden, dtype):
    """Per-column (scale, shift) with which ONE tanh activates all four gates:
    sigmoid(a) = tanh(a/2)/2 + 1/2 for i, f, o and tanh(a) for g, i.e.
    gates = tanh(scale * a) * scale + shift. (Halving is exact in floating point.)"""
    half = xp.full(hidden, 0.5, dtype=dtype)
    scale = xp.concatenate([half, half, xp.ones(hidden, dtype=dtype), half])
    shift = xp.concatenate([half, half, xp.zeros(hidden, dtype=dtype), half])
    return scale, shift


def _lstm_steps(xp, part, acts, h_ext, c_ext, w_hh_t, w_hr, scale, shift):
    """The forward recurrence over the steps of `part` (the whole batch or one half)."""
    steps = _plan(*part)[0]
    hidden = c_ext.shape[1]
    tanh_c = xp.empty((c_ext.shape[0] - acts.shape[0], hidden), dtype=c_ext.dtype)
    for rows, prev in steps:
        gates = acts[rows]
        gates += _gather(xp, h_ext, prev) @ w_hh_t
        xp.tanh(gates, out=gates)
        gates *= scale
        gates += shift
        i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        c = c_ext[rows]
        xp.multiply(f, _gather(xp, c_ext, prev), out=c)
        c += i * g
        tc = xp.tanh(c, out=tanh_c[:c.shape[0]])
        if w_hr is None:
            xp.multiply(o, tc, out=h_ext[rows])
        else:
            h_ext[rows] = (o * tc) @ w_hr.T


def _lstm_steps_backward(xp, part, acts, c_ext, dh_ext, dc_ext, d_gates, w_hh, w_hr):
    """The backward recurrence over the steps of `part` (the whole batch or one half)."""
    steps = _plan(*part)[0]
    hidden = c_ext.shape[1]
    # every gate's slope from its activated value a, in one product over the whole row:
    # sigmoid's a(1 - a) = 1/4 - (a - 1/2)^2 and tanh's 1 - a^2 are both scale^2 - (a - shift)^2
    scale, shift = _lstm_gate_affine(xp, hidden, acts.dtype)
    scale *= scale
    most = max((r.stop - r.start for r, _ in steps), default=0)
    slope = xp.empty((most, acts.shape[1]), dtype=acts.dtype)
    # tanh(c) step by step, not for all rows before the walk: an (N, H) array less at the
    # backward's peak, and each process of a split walk does its own half
    tanh_c = xp.empty((most, hidden), dtype=acts.dtype)
    for rows, prev in reversed(steps):
        gates = acts[rows]
        i, f, g, o = (gates[:, k * hidden:(k + 1) * hidden] for k in range(4))
        tc = xp.tanh(c_ext[rows], out=tanh_c[:gates.shape[0]])
        dh = dh_ext[rows] if w_hr is None else dh_ext[rows] @ w_hr
        dc = dh * o * (1 - tc * tc) + dc_ext[rows]
        d = d_gates[rows]  # d(loss)/d(gate) for i, f, g, o, then times each gate's slope
        xp.multiply(dc, g, out=d[:, :hidden])
        xp.multiply(dc, _gather(xp, c_ext, prev), out=d[:, hidden:2 * hidden])
        xp.multiply(dc, i, out=d[:, 2 * hidden:3 * hidden])
        xp.multiply(dh, tc, out=d[:, 3 * hidden:])
        s = xp.subtract(gates, shift, out=slope[:gates.shape[0]])
        s *= s
        d *= xp.subtract(scale, s, out=s)
        _scatter_add(dh_ext, prev, d @ w_hh)
        _scatter_add(dc_ext, prev, dc * f)


# ----------------------------------------------------------------------------------------------
# GRU


def _gru_steps(xp, part, xw, h_ext, acts, hidden_n, w_hh_t, b_hh):
    """The forward recurrence over the steps of `part` (the whole batch or one half)."""
    hidden = h_ext.shape[1]
    for rows, prev in _plan(*part)[0]:
        h_prev = _gather(xp, h_ext, prev)
        hh = h_prev @ w_hh_t
        if b_hh is not None:
            hh += b_hh
        gates = acts[rows]
        xp.add(xw[rows, :2 * hidden], hh[:, :2 * hidden], out=gates[:, :2 * hidden])
        _sigmoid_(xp, gates[:, :2 * hidden])
        hidden_n[rows] = hh[:, 2 * hidden:]
        r, z, new = (gates[:, k * hidden:(k + 1) * hidden] for k in range(3))
        xp.multiply(r, hh[:, 2 * hidden:], out=new)
        new += xw[rows, 2 * hidden:]
        xp.tanh(new, out=new)
        h_ext[rows] = new + z * (h_prev - new)


def _gru_steps_backward(xp, part, acts, hidden_n, h_prev_all, dh_ext, d_xw, d_hh, w_hh):
    """The backward recurrence over the steps of `part` (the whole batch or one half)."""
    hidden = hidden_n.shape[1]
    for rows, prev in reversed(_plan(*part)[0]):
        r, z, new = (acts[rows, k * hidden:(k + 1) * hidden] for k in range(3))
        dh = dh_ext[rows]
        d_new = dh * (1 - z) * (1 - new * new)
        d = d_xw[rows]
        xp.multiply(d_new * hidden_n[rows], r * (1 - r), out=d[:, :hidden])
        xp.multiply(dh * (h_prev_all[rows] - new), z * (1 - z), out=d[:, hidden:2 * hidden])
        d[:, 2 * hidden:] = d_new
        dhh = d_hh[rows]
        dhh[:, :2 * hidden] = d[:, :2 * hidden]
        xp.multiply(d_new, r, out=dhh[:, 2 * hidden:])
        _scatter_add(dh_ext, prev, dh * z + dhh @ w_hh)

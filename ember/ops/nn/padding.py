"""`F.pad`: constant, reflect, replicate and circular padding (torch.nn.functional.pad).

The pad tuple is torch's: pairs (left, right) starting from the *last* dim, so
`(1, 2, 3, 4)` pads the last dim by 1 before and 2 after, the one before it by 3 and 4.

* constant mode is one op, `constant_pad_nd`: the input is written into a buffer filled with
  `value`; a negative pad crops. Its adjoint is the same op with every pad negated (crop what
  was padded, zero-fill what was cropped), so it differentiates any number of times.
* reflect, replicate and circular only differ in *which input position* each output position
  reads. Per padded dim that is a 1-d index vector, and padding is `index_select` along each
  padded dim in turn; index_select's gradient (index_add) sums the gradient of repeated
  positions. (torch has a kernel per mode and dimension count; the index view makes them one
  short function here.)

For an input of size n along a dim, padded by (lo, hi), output position j reads
    reflect     r(j - lo), r mirrors about 0 and n - 1 without repeating the edge;
    replicate   clamp(j - lo, 0, n - 1);
    circular    the (possibly cropped) input, repeated: torch first crops negative pads,
                then wraps around what is left.

Read next: `pool.py`.
"""
import numpy as np  # index vectors are tiny host arrays built from Python ints

from ... import _creation
from ... import _dtype as dt
from ..._functorch import batch_rules
from .._dispatch import autocast_args
from .._op import export, op

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


@op("same", name="constant_pad_nd", node_name="ConstantPadNdBackward0")
def _constant_pad(xp, a, *, pad, value):
    """pad: ((lo, hi), ...) for the last len(pad) dims, in dim order; negative values crop."""
    lead = a.ndim - len(pad)
    spatial = a.shape[lead:]
    shape = a.shape[:lead] + tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pad))
    out = xp.full(shape, value, dtype=a.dtype)
    source = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for s, (lo, hi) in zip(spatial, pad))
    target = tuple(slice(max(lo, 0), o - max(hi, 0)) for o, (lo, hi) in zip(shape[lead:], pad))
    out[(Ellipsis,) + target] = a[(Ellipsis,) + source]
    return out


@_constant_pad.grad
def _constant_pad(g, pad):
    return (_constant_pad(g, pad=tuple((-lo, -hi) for lo, hi in pad), value=0),)


# ----------------------------------------------------------------------------------------------
# argument checks


def _pairs(pad, ndim):
    """torch's flat pad tuple (last dim first) -> ((lo, hi), ...) in dim order."""
    pad = tuple(pad)
    for i, p in enumerate(pad):
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{ndim}")
    pairs = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)]
    return tuple(reversed(pairs))


def _check_sizes(input, pairs):
    """Cropping cannot go below zero size (torch: narrow() with a negative length)."""
    spatial = input.shape[input.ndim - len(pairs):]
    for s, (lo, hi) in zip(spatial, pairs):
        if s + lo + hi < 0:
            raise RuntimeError(f"narrow(): length must be non-negative (padding {(lo, hi)} of a "
                               f"dim of size {s} in input {list(input.shape)})")


def _check_non_constant(input, pairs, mode):
    dims = len(pairs)
    if dims > 3 or input.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {2 * dims} is not supported for {input.ndim}D input tensor. "
            "Non-constant padding supports: 2D or 3D input with padding size 2 (last dim), "
            "3D or 4D input with padding size 4 (last 2 dims), 4D or 5D input with padding "
            "size 6 (last 3 dims)")
    if input.dtype is dt.bool and mode != "circular":
        raise NotImplementedError(f"\"{'replication' if mode == 'replicate' else 'reflection'}"
                                  f"_pad{dims}d\" not implemented for "
                                  f"'{dt.scalar_name(input.dtype)}'")
    batched = input.ndim == dims + 2
    if mode != "circular" and any(s == 0 for s in input.shape[int(batched):]):
        raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with possibly "
                           "0 batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    lead = input.ndim - dims
    for k, (s, (lo, hi)) in enumerate(zip(input.shape[lead:], pairs)):
        out = s + lo + hi
        if mode == "reflect" and (lo >= s or hi >= s):
            argument = 4 + 2 * (dims - 1 - k)
            raise RuntimeError(f"Argument #{argument}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {lead + k} of input {list(input.shape)}")
        kept = s - max(-lo, 0) - max(-hi, 0)  # circular wraps what cropping leaves
        if mode == "circular" and (lo > min(s, kept) or hi > min(s, kept)):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out < 0 or (out == 0 and dims == 1 and mode != "circular"):
            raise RuntimeError(f"input (size {s} at dimension {lead + k}) is too small for "
                               f"padding ({lo}, {hi}). Calculated output size: {out}")


# ----------------------------------------------------------------------------------------------
# index vectors of the gather modes


def _source_index(mode, size, lo, hi):
    """For each output position along one dim, the input position it copies."""
    j = np.arange(size + lo + hi) - lo
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j > size - 1, 2 * (size - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, size - 1)
    start = max(-lo, 0)                          # circular: wrap around the cropped input
    kept = size - start - max(-hi, 0)
    return start + (np.arange(size + lo + hi) - max(lo, 0)) % max(kept, 1)


def _gather_pad(input, pairs, mode):
    kind = {"reflect": "reflection", "replicate": "replication"}.get(mode, mode)
    input, = autocast_args(f"{kind}_pad{len(pairs)}d", input)  # some run in float32 on the CPU
    lead = input.ndim - len(pairs)
    out = input
    for k, (lo, hi) in enumerate(pairs):
        if lo == 0 and hi == 0:
            continue
        index = _source_index(mode, input.shape[lead + k], lo, hi)
        out = out.index_select(lead + k, _creation.tensor(index, device=input.device))
    return out


# ----------------------------------------------------------------------------------------------
# public functions


@export(name="constant_pad_nd")
def constant_pad_nd(input, pad, value=0):
    """Pad the last len(pad) // 2 dims of `input` with `value`; negative amounts crop.

    `pad` lists (before, after) amounts from the last dim backwards: (left, right, top, bottom,
    ...). The same as `F.pad(input, pad, "constant", value)`.
    """
    pairs = _pairs(pad, input.ndim)
    _check_sizes(input, pairs)
    return _constant_pad(input, pad=pairs, value=value)


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative values, crop) the last len(pad) // 2 dims of `input`."""
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = _pairs(pad, input.ndim)
    if mode == "constant":
        _check_sizes(input, pairs)
        return _constant_pad(input, pad=pairs, value=0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    _check_non_constant(input, pairs, mode)
    return _gather_pad(input, pairs, mode)


# forward mode and vmap (see ops/_op.py): padding with a constant is affine (its tangent pads
# with zeros); it pads trailing dims, so the batch is one more leading dim
_constant_pad.jvp(lambda a_t, pad, value: _constant_pad(a_t, pad=pad, value=0))
_constant_pad.batch(batch_rules.leading)

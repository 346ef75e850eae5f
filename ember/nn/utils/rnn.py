"""Variable-length batches for recurrent layers: `PackedSequence` and the packing helpers.

A packed batch stores only real time steps, time-major: for lengths [3, 2, 1] (sorted,
longest first) the rows of `data` are

    t=0: seq0 seq1 seq2 | t=1: seq0 seq1 | t=2: seq0        batch_sizes = [3, 2, 1]

`sorted_indices` records how an unsorted batch was reordered (`enforce_sorted=False`) and
`unsorted_indices` is its inverse, so results come back in the caller's order.

Packing and unpacking are a single `index_select` with an index map computed from the
lengths (plus one padding row for the padded side), so gradients flow through them.

Read next: `ember/nn/modules/rnn.py` (the layers that consume packed batches).
"""
from collections import namedtuple
from collections.abc import Iterable

from ... import _dtype as dt
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """(data, batch_sizes, sorted_indices, unsorted_indices); batch_sizes stays on the CPU.

    Made by `pack_padded_sequence` / `pack_sequence`, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated by "
                             "functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert `data` like Tensor.to; the indices follow data's device, batch_sizes stays."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.to(data.device)),
                          _bind(self.unsorted_indices, lambda t: t.to(data.device)))

    def cuda(self, *args, **kwargs):
        """A copy on a CUDA device (data and index tensors)."""
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self, *args, **kwargs):
        """A copy on the CPU (data and index tensors)."""
        return self.to("cpu")

    def pin_memory(self):
        """Return self: ember has no page-locked memory to pin (pinning only speeds up host-to-GPU
        copies)."""
        return self

    def is_pinned(self):
        """Always False: ember has no page-locked memory."""
        return False  # ember allocates no page-locked memory (see pin_memory)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def double(self):
        """A copy with `data` cast to float64."""
        return self.to(dtype=dt.float64)

    def float(self):
        """A copy with `data` cast to float32."""
        return self.to(dtype=dt.float32)

    def half(self):
        """A copy with `data` cast to float16."""
        return self.to(dtype=dt.float16)

    def long(self):
        """A copy with `data` cast to int64."""
        return self.to(dtype=dt.int64)

    def int(self):
        """A copy with `data` cast to int32."""
        return self.to(dtype=dt.int32)

    def short(self):
        """A copy with `data` cast to int16."""
        return self.to(dtype=dt.int16)

    def char(self):
        """A copy with `data` cast to int8."""
        return self.to(dtype=dt.int8)

    def byte(self):
        """A copy with `data` cast to uint8."""
        return self.to(dtype=dt.uint8)


def invert_permutation(permutation):
    """The inverse permutation: out[permutation[i]] = i."""
    if permutation is None:
        return None
    from ... import arange, empty_like

    out = empty_like(permutation)
    return out.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))


# ----------------------------------------------------------------------------------------------
# packing


def _as_lengths(lengths):
    from ... import as_tensor

    if not isinstance(lengths, Tensor):
        lengths = as_tensor(lengths, dtype=dt.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=dt.int64)
    if lengths.ndim != 1 or lengths.device.type != "cpu":
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D {lengths.device.type} Long tensor")
    return lengths


def _batch_sizes(lengths):
    """batch_sizes[t] = how many sequences are longer than t (lengths sorted, longest first)."""
    batch_sizes = []
    b = len(lengths)
    for t in range(lengths[0] if lengths else 0):
        while b and lengths[b - 1] <= t:
            b -= 1
        batch_sizes.append(b)
    return batch_sizes


def _select_rows(source, index):
    """source.index_select(0, index) with a host-side list index (moved to source's device)."""
    from ... import tensor

    return source.index_select(0, tensor(index, dtype=dt.int64, device=source.device))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *)) of sequences with the given lengths."""
    from ... import sort, tensor

    lengths = _as_lengths(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    sizes = lengths.tolist()
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 1)")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if len(sizes) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(sizes)} (batch_size={batch})")
    if batch and sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if batch and sizes[0] > steps:
        raise RuntimeError(f"`lengths` contains a length of {sizes[0]}, longer than the "
                           f"input's {steps} time steps")
    batch_sizes = _batch_sizes(sizes)
    if batch_first:  # row (b, t) of the flattened input
        index = [b * steps + t for t, size in enumerate(batch_sizes) for b in range(size)]
    else:
        index = [t * batch + b for t, size in enumerate(batch_sizes) for b in range(size)]
    data = _select_rows(input.flatten(0, 1), index)
    batch_sizes = tensor(batch_sizes, dtype=dt.int64, device="cpu")  # always on the host
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of `pack_padded_sequence`: (padded batch, lengths), in the caller's order."""
    from ... import cat, full, tensor

    data, batch_sizes, _, unsorted = sequence
    batch_sizes = batch_sizes.tolist()
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    lengths = [sum(1 for size in batch_sizes if size > b) for b in range(batch)]
    order = unsorted.tolist() if unsorted is not None else list(range(batch))
    offsets = [0]
    for size in batch_sizes:
        offsets.append(offsets[-1] + size)
    pad = data.shape[0]  # the index of the padding row appended below

    def row(t, j):
        b = order[j]
        return offsets[t] + b if t < lengths[b] else pad

    if batch_first:
        index = [row(t, j) for j in range(batch) for t in range(steps)]
    else:
        index = [row(t, j) for t in range(steps) for j in range(batch)]
    padding = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                   device=data.device)
    padded = _select_rows(cat([data, padding]), index)
    shape = (batch, steps) if batch_first else (steps, batch)
    return padded.reshape(shape + tuple(data.shape[1:])), \
        tensor([lengths[b] for b in order], dtype=dt.int64, device="cpu")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences (L_i, *) into a (T, B, *) (or (B, T, *)) batch, padding the short ones."""
    from ... import cat, full

    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    if first.ndim == 0:
        raise RuntimeError("pad_sequence: every sequence needs a length dimension, got a 0-d "
                           "tensor")
    trailing = tuple(first.shape[1:])
    for s in sequences[1:]:
        if s.ndim == 0 or tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have trailing size "
                               f"{list(trailing)} like the first one, but got {list(s.shape)}")
    lengths = [s.shape[0] for s in sequences]
    steps = max(lengths)
    starts = [0]
    for n in lengths:
        starts.append(starts[-1] + n)
    pad = starts[-1]

    def row(t, b):
        skip = steps - lengths[b] if padding_side == "left" else 0
        return starts[b] + t - skip if skip <= t < skip + lengths[b] else pad

    if batch_first:
        index = [row(t, b) for b in range(len(sequences)) for t in range(steps)]
    else:
        index = [row(t, b) for t in range(steps) for b in range(len(sequences))]
    rows = [s.to(first.dtype) for s in sequences]
    rows.append(full((1,) + trailing, padding_value, dtype=first.dtype, device=first.device))
    shape = (len(sequences), steps) if batch_first else (steps, len(sequences))
    return _select_rows(cat(rows), index).reshape(shape + trailing)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences in a padded batch, each cut to its length."""
    lengths = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    if padded_sequences.shape[0 if batch_first else 1] != len(lengths):
        raise ValueError(f"unpad_sequence: {len(lengths)} lengths for a batch of "
                         f"{padded_sequences.shape[0 if batch_first else 1]} sequences")
    if batch_first:
        return [padded_sequences[b, :n] for b, n in enumerate(lengths)]
    return [padded_sequences[:n, b] for b, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (L_i, *): pad_sequence then pack_padded_sequence."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a PackedSequence, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

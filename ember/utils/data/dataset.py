"""Datasets (torch.utils.data.dataset).

A map-style `Dataset` answers `dataset[index]` (and usually `len(dataset)`); it may also
answer `dataset.__getitems__(indices)` with a list of samples, which the DataLoader prefers
when batching. An `IterableDataset` only yields samples from `__iter__`; under several
worker processes each worker iterates its own copy, so it shards itself with
`get_worker_info()` (or yields duplicates, exactly as in torch).

The wrappers: TensorDataset (rows of tensors), StackDataset (samples zipped into tuples or
dicts), ConcatDataset (datasets end to end), ChainDataset (iterable datasets one after
another), Subset (a dataset seen through a list of indices) and random_split.

Read next: sampler.py.
"""
import bisect
import itertools
import math
import warnings
from typing import Generic, Iterable, TypeVar

import ember

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys (usually 0 .. len-1) to samples. Subclasses define `__getitem__`,
    usually `__len__`, and optionally `__getitems__(indices)` for faster batches."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])

    # no default __len__: len() of a dataset that has none must raise TypeError (a default
    # raising NotImplementedError would break list() and other length-hint users)


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses define `__iter__`. `a + b` chains two streams."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is `tuple(t[i] for t in tensors)`; the tensors share their first dim."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of equal length zipped: `StackDataset(a, b)[i] == (a[i], b[i])` and
    `StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}`."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or ``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args) or list(kwargs.values())
        self._length = len(parts[0])
        if any(len(d) != self._length for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {key: d[index] for key, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """One batched read per part (through its own `__getitems__` where it has one)."""
        named = isinstance(self.datasets, dict)
        keys = list(self.datasets) if named else range(len(self.datasets))
        columns = [_read_many(self.datasets[k], indices) for k in keys]
        if named:
            return [dict(zip(keys, row)) for row in zip(*columns)]
        return [tuple(row) for row in zip(*columns)]

    def __len__(self):
        return self._length


def _read_many(dataset, indices):
    """dataset's samples at `indices`, batched when the dataset supports it."""
    getitems = getattr(dataset, "__getitems__", None)
    if not callable(getitems):
        return [dataset[i] for i in indices]
    items = getitems(indices)
    if len(items) != len(indices):
        raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, "
                         f"got {len(items)}")
    return items


class ConcatDataset(Dataset):
    """Datasets end to end. `cumulative_sizes[k]` is the total length of datasets 0..k; an
    index finds its dataset by bisection. Negative indices count from the end."""

    @staticmethod
    def cumsum(sequence):
        """The running totals of the lengths of `sequence`'s datasets, e.g. [3, 5, 9] for lengths 3,
        2, 4."""
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another, chained lazily."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            _require_iterable(d)
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            _require_iterable(d)
            total += len(d)
        return total


def _require_iterable(d):
    if not isinstance(d, IterableDataset):
        raise AssertionError("ChainDataset only supports IterableDataset")


class Subset(Dataset):
    """`dataset` seen through `indices`: `Subset(d, idx)[i] == d[idx[i]]`."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        # The DataLoader reads batches through __getitems__, which would silently bypass an
        # overridden __getitem__: torch refuses such a subclass, so do we.
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. When subclassing "
                "Subset and overriding __getitem__, you must also override __getitems__ to "
                "ensure DataLoader works correctly with your custom logic. A simple "
                "implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split `dataset` into non-overlapping random Subsets of the given `lengths`, or of
    fractions of its length summing to 1: each gets floor(fraction * len), and the items
    left over go one each to the splits in order, round-robin (torch's rule).
    `generator` defaults to ember's global generator."""
    generator = ember.default_generator if generator is None else generator
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = ember.randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, indices[end - n:end]) for end, n in zip(ends, lengths)]


def _lengths_from_fractions(fractions, total):
    for i, frac in enumerate(fractions):
        if not 0 <= frac <= 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
    lengths = [math.floor(total * frac) for frac in fractions]
    for i in range(total - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, n in enumerate(lengths):
        if n == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                          "dataset.", stacklevel=3)
    return lengths

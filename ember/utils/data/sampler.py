"""Samplers: iterables of dataset indices (torch.utils.data.sampler).

SequentialSampler gives 0 .. n-1; RandomSampler a permutation (or draws with replacement);
SubsetRandomSampler a permutation of given indices; WeightedRandomSampler draws indices
with given weights; BatchSampler groups any sampler's indices into lists.

Random streams are torch's, call for call: a sampler given `generator=` draws only from it;
RandomSampler without one draws a fresh seed from the global generator each time it is
iterated (one int64 `random_()`, as torch) and shuffles with a new Generator seeded by it, so
after the same `manual_seed` the indices equal torch's. All drawing happens in the main
process, so the number of worker processes never changes which indices are produced.

Read next: distributed.py, then dataloader.py.
"""
import itertools
import numbers
from typing import Generic, TypeVar

import ember

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: subclasses define `__iter__` (indices or lists of indices) and usually
    `__len__` (no default, so len() of a sampler without one raises TypeError)."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class RandomSampler(Sampler[int]):
    """A random permutation of the dataset's indices; with `num_samples` > len, several
    permutations back to back (the last one cut short). With `replacement=True`,
    `num_samples` independent uniform draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            # a fresh stream per pass, seeded from the global generator
            generator = ember.Generator().manual_seed(_draw_seed(None))
        if self.replacement:
            # in torch's chunks of 32, so a pass stopped early leaves the generator where
            # torch's would be
            for _ in range(self.num_samples // 32):
                yield from ember.randint(0, n, (32,), generator=generator).tolist()
            yield from ember.randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from ember.randperm(n, generator=generator).tolist()
        yield from ember.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


def _draw_seed(generator):
    """A non-negative 63-bit seed drawn from `generator` (or the global one), as torch's
    `empty((), dtype=int64).random_(generator)`."""
    return ember.empty((), dtype=ember.int64).random_(generator=generator).item()


class SubsetRandomSampler(Sampler[int]):
    """The given indices in random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices of `weights` drawn with probability proportional to their
    weight; without replacement an index is drawn at most once."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not _is_int(num_samples) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = ember.as_tensor(weights, dtype=ember.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = ember.multinomial(self.weights, self.num_samples, self.replacement,
                                  generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Lists of `batch_size` consecutive indices from `sampler`; the last, shorter list is
    kept unless `drop_last`."""

    def __init__(self, sampler, batch_size, drop_last):
        if not _is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        while True:
            batch = list(itertools.islice(indices, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size

"""DistributedSampler (torch.utils.data.distributed): each of `num_replicas` processes
iterates its own disjoint share of the dataset.

The indices (shuffled with a generator seeded by `seed + epoch`, so every replica computes
the same permutation; call `set_epoch` each epoch to change it) are padded by repeating
from the start until they divide evenly, or cut short with `drop_last`; replica `rank`
then takes every `num_replicas`-th index starting at `rank`:

    indices 0 1 2 3 4 5 6 | 0      (7 items, 4 replicas: one pad)
    rank 0: 0 4   rank 1: 1 5   rank 2: 2 6   rank 3: 3 0

The shuffle is torch's own -- `torch.randperm` with a CPU generator seeded `seed + epoch`:
a Fisher-Yates pass driven by the 32-bit outputs of MT19937 seeded with the low 32 bits of
the seed (NumPy's RandomState is that generator) -- so each rank gets exactly the indices
it gets under torch, and a run can be resumed or compared across the two libraries.

Read next: dataloader.py.
"""
import importlib
import math

import numpy as np

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _process_group_value(name):
    """dist.get_world_size() / dist.get_rank() when ember.distributed exists and a process
    group is initialised; otherwise the same ValueError torch raises."""
    try:
        dist = importlib.import_module("ember.distributed")
    except ImportError:
        dist = None
    if dist is None or not dist.is_available() or not dist.is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return getattr(dist, name)()


class DistributedSampler(Sampler):
    """Replica `rank`'s share of `dataset` (see the module doc). `num_replicas` and `rank`
    default to the process group's world size and rank, so they are required when no
    group is initialised."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = _process_group_value("get_world_size")
        if rank is None:
            rank = _process_group_value("get_rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            # the largest share every replica can get without padding
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = _torch_randperm(n, self.seed + self.epoch)
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            pad = self.total_size - n
            indices += (indices * math.ceil(pad / n))[:pad] if pad else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Reshuffle differently on the next pass (the permutation is seeded by
        seed + epoch, identically on every replica)."""
        self.epoch = epoch


def _torch_randperm(n, seed):
    """torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()."""
    draws = np.random.RandomState(seed & 0xFFFFFFFF).randint(0, 2 ** 32, size=max(n - 1, 0),
                                                             dtype=np.uint32)
    steps = np.arange(len(draws))
    partners = (steps + draws % (n - steps)).tolist()  # step i swaps items i and partners[i]
    indices = list(range(n))
    for i, j in enumerate(partners):  # each swap depends on the ones before: a Python loop
        indices[i], indices[j] = indices[j], indices[i]
    return indices

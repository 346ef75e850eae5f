"""torch's random streams through utils.data: samplers, random_split, DataLoader shuffling
and worker seeding give torch's indices and seeds after the same manual_seed."""
import random

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def both(fn, seed=0):
    """fn(lib) after manual_seed(seed), and the next global draw, for torch and ember."""
    out = []
    for lib in (torch, ember):
        lib.manual_seed(seed)
        out.append((fn(lib), lib.randint(0, 1000, (4,)).tolist()))
    return out[1], out[0]


SAMPLERS = {
    "random": lambda d, m: d.RandomSampler(range(50)),
    "random-num_samples": lambda d, m: d.RandomSampler(range(20), num_samples=45),
    "random-fewer": lambda d, m: d.RandomSampler(range(20), num_samples=7),
    "replacement": lambda d, m: d.RandomSampler(range(30), replacement=True),
    "replacement-70": lambda d, m: d.RandomSampler(range(30), True, num_samples=70),
    "generator": lambda d, m: d.RandomSampler(range(40), generator=m.Generator().manual_seed(5)),
    "subset": lambda d, m: d.SubsetRandomSampler([3, 7, 11, 19, 23, 42]),
    "weighted": lambda d, m: d.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 2.0], 12),
    "weighted-no-replacement": lambda d, m: d.WeightedRandomSampler([0.1, 0.9, 0.4, 1.0, 2.0],
                                                                    4, replacement=False),
    "batch": lambda d, m: d.BatchSampler(d.RandomSampler(range(23)), 5, drop_last=False),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_samplers(name):
    def run(m):
        sampler = SAMPLERS[name](m.utils.data, m)
        return [list(sampler), list(sampler)]  # two passes: a fresh shuffle each
    e, t = both(run)
    assert e == t


def test_a_pass_stopped_early_leaves_torch_state():
    def run(m):
        it = iter(m.utils.data.RandomSampler(range(1000), replacement=True))
        return [next(it) for _ in range(40)]
    e, t = both(run)
    assert e == t


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.25, 0.25, 0.5], [5, 0, 5]])
def test_random_split(lengths):
    def run(m):
        parts = m.utils.data.random_split(range(10), lengths)
        explicit = m.utils.data.random_split(range(10), lengths,
                                             generator=m.Generator().manual_seed(42))
        return [list(p) for p in parts] + [list(p) for p in explicit]
    e, t = both(run)
    assert e == t


@pytest.mark.parametrize("kwargs", [dict(batch_size=4, shuffle=True),
                                    dict(batch_size=3, shuffle=True, drop_last=True),
                                    dict(batch_size=None, shuffle=True),
                                    dict(batch_size=4, shuffle=False)])
def test_dataloader_shuffle_order(kwargs):
    def run(m):
        data = m.utils.data.TensorDataset(m.arange(22))
        generator = m.Generator().manual_seed(7)
        out = []
        for gen in (None, generator):
            loader = m.utils.data.DataLoader(data, generator=gen, **kwargs)
            for _ in range(2):
                out.append([b[0].tolist() for b in loader])
        return out
    e, t = both(run)
    assert e == t


def test_worker_numpy_seed_is_torchs():
    from torch.utils.data._utils.worker import _generate_state

    for base_seed in (0, 1, 2**31 + 5, 2**62 + 12345, 9223372036854775807):
        for worker_id in range(3):
            ours = np.random.SeedSequence([worker_id, base_seed]).generate_state(4)
            np.testing.assert_array_equal(ours, _generate_state(base_seed, worker_id))


class SeedReport:
    """Each item: the worker's library seed and a draw from NumPy's and Python's generators."""

    def __init__(self, lib_name):
        self.lib_name = lib_name

    def __len__(self):
        return 6

    def __getitem__(self, i):
        lib = torch if self.lib_name == "torch" else ember
        info = lib.utils.data.get_worker_info()
        return [i, info.id, info.seed, lib.initial_seed(), int(np.random.randint(2**31)),
                random.random(), lib.rand(2).tolist()]


@pytest.mark.slow
def test_worker_seeding_matches_torch():
    def run(m):
        loader = m.utils.data.DataLoader(SeedReport(m.__name__), batch_size=None,
                                         num_workers=2)
        return [loader_item for loader_item in loader]
    e, t = both(run, seed=123)
    assert e[1] == t[1]
    e_items = [[int(v) if isinstance(v, (int, np.integer)) else v for v in item] for item in e[0]]
    t_items = [[v.item() if hasattr(v, "item") and not isinstance(v, list) else v
                for v in item] for item in t[0]]
    assert e_items == t_items

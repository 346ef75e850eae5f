"""ember.utils.data against torch.utils.data, in one process: datasets, samplers, the
collate functions and the single-process DataLoader. Worker processes are tested in
test_dataloader_workers.py.

Deterministic behaviour (sequential batches, collation, lengths, splits, argument errors) is
compared with torch directly; random streams are ember's own, so shuffled results are
checked by their properties and their reproducibility.
"""
import collections
import warnings

import numpy as np
import pytest

import ember
from ember.utils.data import (
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    default_collate,
    get_worker_info,
    random_split,
)
from ember.utils.data._utils.collate import collate, default_collate_fn_map
from tests.oracle import assert_close, check_raises

torch = pytest.importorskip("torch")

Point = collections.namedtuple("Point", ["x", "y"])


def same(e, t, where="result"):
    """ember result `e` has torch result `t`'s structure, container types, dtypes, values."""
    if isinstance(t, torch.Tensor):
        assert_close(e, t, what=where)
    elif isinstance(t, dict):
        assert type(e) is type(t), f"{where}: {type(e)} != {type(t)}"
        assert list(e) == list(t), f"{where}: keys {list(e)} != {list(t)}"
        for k in t:
            same(e[k], t[k], f"{where}[{k!r}]")
    elif isinstance(t, (list, tuple, collections.deque)):
        assert type(e) is type(t), f"{where}: {type(e).__name__} != {type(t).__name__}"
        assert len(e) == len(t), f"{where}: length {len(e)} != {len(t)}"
        for i, (a, b) in enumerate(zip(e, t)):
            same(a, b, f"{where}[{i}]")
    elif isinstance(t, np.ndarray):
        assert isinstance(e, np.ndarray)
        np.testing.assert_array_equal(e, t)
    else:
        assert type(e) is type(t) and e == t, f"{where}: {e!r} != torch {t!r}"


def both(fn):
    """fn(m) for m = ember and m = torch, compared with `same`."""
    same(fn(ember), fn(torch))


def data(m):
    return m.utils.data


# ----------------------------------------------------------------------------------------------
# datasets


def tensors(m):
    x = m.arange(24, dtype=m.float32).reshape(6, 4)
    y = m.arange(6) * 10
    return x, y


def test_public_paths():
    assert ember.utils.data.dataloader.default_collate is default_collate
    assert ember.utils.data.distributed.DistributedSampler is DistributedSampler
    assert ember.utils.data._utils.collate.default_collate is default_collate
    assert ember.utils.data.get_worker_info is get_worker_info
    assert get_worker_info() is None  # the main process is no worker


def test_tensor_dataset():
    both(lambda m: [data(m).TensorDataset(*tensors(m))[i] for i in (0, 5, -1)])
    both(lambda m: len(data(m).TensorDataset(*tensors(m))))
    both(lambda m: data(m).TensorDataset(*tensors(m))[1:3])
    check_raises(lambda m: data(m).TensorDataset(m.zeros(3), m.zeros(4)), match="Size mismatch")


def test_concat_dataset():
    def parts(m):
        return [list(range(3)), list(range(10, 12)), list(range(20, 24))]

    both(lambda m: data(m).ConcatDataset(parts(m)).cumulative_sizes)
    both(lambda m: [data(m).ConcatDataset(parts(m))[i] for i in range(-9, 9)])
    both(lambda m: len(data(m).ConcatDataset(parts(m))))
    check_raises(lambda m: data(m).ConcatDataset(parts(m))[-10], match="absolute value")
    check_raises(lambda m: data(m).ConcatDataset(parts(m))[9])
    check_raises(lambda m: data(m).ConcatDataset([]), match="empty")
    check_raises(lambda m: data(m).ConcatDataset([Count(m, 3)]), match="IterableDataset")


class Items(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class TorchItems(torch.utils.data.Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def items(m, values):
    return (Items if m is ember else TorchItems)(values)


def test_dataset_add():
    both(lambda m: type(items(m, [1, 2]) + items(m, [3])).__name__)
    both(lambda m: [x for x in items(m, [1, 2]) + items(m, [3]) + items(m, [4, 5])])
    both(lambda m: list(Count(m, 2) + Count(m, 3)))
    both(lambda m: type(Count(m, 2) + Count(m, 3)).__name__)


def test_dataset_without_getitem():
    check_raises(lambda m: data(m).Dataset()[0], match="__getitem__")
    check_raises(lambda m: len(data(m).Dataset()))


def count_class(m):
    class Count(data(m).IterableDataset):
        def __init__(self, n, start=0):
            self.n, self.start = n, start

        def __iter__(self):
            return iter(range(self.start, self.start + self.n))

        def __len__(self):
            return self.n

    return Count


COUNT = {}


def Count(m, n, start=0):
    """An IterableDataset of the ints start .. start+n-1, for library m."""
    if m not in COUNT:
        COUNT[m] = count_class(m)
    return COUNT[m](n, start)


def test_chain_dataset():
    both(lambda m: list(data(m).ChainDataset([Count(m, 2), Count(m, 3, 10)])))
    both(lambda m: len(data(m).ChainDataset([Count(m, 2), Count(m, 3, 10)])))
    check_raises(lambda m: list(data(m).ChainDataset([Count(m, 2), [1, 2]])),
                 match="only supports IterableDataset")
    check_raises(lambda m: len(data(m).ChainDataset([[1, 2]])))


def test_stack_dataset():
    both(lambda m: data(m).StackDataset(*tensors(m))[2])
    both(lambda m: data(m).StackDataset(a=tensors(m)[0], b=[5, 6, 7, 8, 9, 10])[3])
    both(lambda m: data(m).StackDataset(*tensors(m)).__getitems__([0, 4]))
    both(lambda m: data(m).StackDataset(a=tensors(m)[1], b=data(m).Subset(
        list(range(10)), [9, 8, 7, 6, 5, 4])).__getitems__([1, 2]))
    both(lambda m: len(data(m).StackDataset(x=[1, 2, 3])))
    check_raises(lambda m: data(m).StackDataset([1], x=[2]), match="both types")
    check_raises(lambda m: data(m).StackDataset(), match="At least one")
    check_raises(lambda m: data(m).StackDataset([1, 2], [3]), match="Size mismatch")


def test_subset():
    both(lambda m: [data(m).Subset(list(range(10, 20)), [4, 1, 7])[i] for i in range(3)])
    both(lambda m: data(m).Subset(list(range(10, 20)), [4, 1, 7]).__getitems__([2, 0]))
    both(lambda m: data(m).Subset(
        data(m).Subset(list(range(10, 20)), [9, 8, 7]), [2, 0]).__getitems__([0, 1]))
    both(lambda m: len(data(m).Subset(list(range(10)), [4, 1, 7])))

    def bad_subclass(m):
        class Doubled(data(m).Subset):
            def __getitem__(self, i):
                return 2 * super().__getitem__(i)

        return Doubled([1, 2], [0])

    check_raises(bad_subclass, match="overrides __getitem__ but not __getitems__")


@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.1] * 10),
    (5, [1.0]), (10, [0.25, 0.25, 0.5]), (3, [0, 3])])
def test_random_split_sizes(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-length splits warn in both libraries
        both(lambda m: [len(s) for s in data(m).random_split(range(n), lengths)])
        parts = random_split(range(n), lengths, generator=ember.Generator().manual_seed(1))
        again = random_split(range(n), lengths, generator=ember.Generator().manual_seed(1))
    values = [list(p) for p in parts]
    assert sorted(v for p in values for v in p) == list(range(n))  # a partition
    assert values == [list(p) for p in again]                      # reproducible


def test_random_split_is_random_and_uses_the_global_generator():
    ember.manual_seed(5)
    a = [list(s) for s in random_split(range(20), [10, 10])]
    ember.manual_seed(5)
    assert [list(s) for s in random_split(range(20), [10, 10])] == a
    b = [list(s) for s in random_split(range(20), [10, 10])]
    assert a != b
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        random_split(range(3), [0.9, 0.1])


def test_random_split_errors():
    check_raises(lambda m: data(m).random_split(range(10), [3, 3]), match="Sum of input")
    check_raises(lambda m: data(m).random_split(range(10), [1.5, -0.5]),
                 match="not between 0 and 1")


# ----------------------------------------------------------------------------------------------
# samplers


def test_sequential_sampler():
    both(lambda m: list(data(m).SequentialSampler(range(7))))
    both(lambda m: len(data(m).SequentialSampler(range(7))))


def test_random_sampler_is_a_reproducible_permutation():
    def run(seed, **kw):
        return list(RandomSampler(range(10), generator=ember.Generator().manual_seed(seed), **kw))

    assert sorted(run(0)) == list(range(10))
    assert run(0) == run(0) and run(0) != run(1)
    long = run(0, num_samples=25)  # two full permutations, then five more distinct indices
    assert sorted(long[:10]) == sorted(long[10:20]) == list(range(10))
    assert len(set(long[20:])) == 5 and len(long) == 25
    drawn = run(3, replacement=True, num_samples=2000)
    assert len(drawn) == 2000 and set(drawn) == set(range(10))
    ember.manual_seed(7)
    a = list(RandomSampler(range(10)))
    ember.manual_seed(7)
    assert list(RandomSampler(range(10))) == a  # generator=None follows ember.manual_seed


def test_random_sampler_lengths_and_errors():
    both(lambda m: len(data(m).RandomSampler(range(10))))
    both(lambda m: len(data(m).RandomSampler(range(10), replacement=True, num_samples=37)))
    check_raises(lambda m: data(m).RandomSampler(range(3), replacement=1), match="boolean")
    check_raises(lambda m: data(m).RandomSampler(range(3), num_samples=0), match="positive")
    check_raises(lambda m: data(m).RandomSampler([], num_samples=None), match="positive")


def test_subset_random_sampler():
    g = ember.Generator().manual_seed(2)
    drawn = list(SubsetRandomSampler([5, 9, 11, 2], generator=g))
    assert sorted(drawn) == [2, 5, 9, 11]
    both(lambda m: len(data(m).SubsetRandomSampler([5, 9, 11, 2])))


def test_weighted_random_sampler():
    g = ember.Generator().manual_seed(0)
    weights = [0.0, 1.0, 3.0, 0.0, 6.0]
    drawn = np.array(list(WeightedRandomSampler(weights, 4000, generator=g)))
    assert set(drawn) <= {1, 2, 4}  # zero weight is never drawn
    freq = np.bincount(drawn, minlength=5) / 4000
    np.testing.assert_allclose(freq, np.array(weights) / 10, atol=0.04)
    once = list(WeightedRandomSampler(weights, 3, replacement=False, generator=g))
    assert sorted(once) == [1, 2, 4]
    both(lambda m: len(data(m).WeightedRandomSampler([1, 2], 9)))
    check_raises(lambda m: data(m).WeightedRandomSampler([1, 2], 0), match="positive")
    check_raises(lambda m: data(m).WeightedRandomSampler([1, 2], True), match="positive")
    check_raises(lambda m: data(m).WeightedRandomSampler([1, 2], 2, replacement=0),
                 match="boolean")
    check_raises(lambda m: data(m).WeightedRandomSampler([[1, 2]], 2), match="1d sequence")


@pytest.mark.parametrize("n, size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True),
                                                (2, 5, False), (2, 5, True), (0, 2, False)])
def test_batch_sampler(n, size, drop_last):
    both(lambda m: list(data(m).BatchSampler(data(m).SequentialSampler(range(n)), size,
                                             drop_last)))
    both(lambda m: len(data(m).BatchSampler(range(n), size, drop_last)))


def test_batch_sampler_errors():
    check_raises(lambda m: data(m).BatchSampler(range(3), 0, False), match="positive")
    check_raises(lambda m: data(m).BatchSampler(range(3), True, False), match="positive")
    check_raises(lambda m: data(m).BatchSampler(range(3), 2, 1), match="boolean")


# ----------------------------------------------------------------------------------------------
# DistributedSampler


@pytest.mark.parametrize("n, replicas", [(10, 3), (12, 4), (7, 4), (2, 5), (9, 1)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_without_shuffle(n, replicas, drop_last):
    for rank in range(replicas):
        both(lambda m: list(data(m).DistributedSampler(
            range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)))
        both(lambda m: len(data(m).DistributedSampler(
            range(n), num_replicas=replicas, rank=rank, drop_last=drop_last)))


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True),
                                                    (12, 4, False), (3, 5, False)])
def test_distributed_sampler_with_shuffle(n, replicas, drop_last):
    def shares(seed=0, epoch=0):
        out = []
        for rank in range(replicas):
            s = DistributedSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    lengths = [len(torch.utils.data.DistributedSampler(range(n), replicas, r,
                                                       drop_last=drop_last))
               for r in range(replicas)]
    first = shares()
    assert [len(s) for s in first] == lengths
    flat = [i for s in first for i in s]
    if drop_last:
        assert len(set(flat)) == len(flat)           # disjoint, nothing repeated
    else:
        assert set(flat) == set(range(n))            # every item, padded by repeats
    assert shares() == first                         # same seed and epoch: same shares
    assert shares(epoch=1) != first                  # set_epoch reshuffles
    assert shares(seed=1) != first


def test_distributed_sampler_errors():
    check_raises(lambda m: data(m).DistributedSampler(range(4), num_replicas=2, rank=2),
                 match="Invalid rank 2")
    check_raises(lambda m: data(m).DistributedSampler(range(4), num_replicas=2, rank=-1),
                 match="Invalid rank")
    check_raises(lambda m: data(m).DistributedSampler(range(4)),
                 match="process group has not been initialized")


# ----------------------------------------------------------------------------------------------
# collate


def sample(m, i):
    """A nested sample using every kind default_collate handles."""
    return {
        "t": m.arange(3, dtype=m.float32) + i,
        "i64": m.tensor([i, 2 * i]),
        "arr": np.full((2, 2), i, dtype=np.int16),
        "f": 0.5 * i, "i": i, "b": i % 2 == 0, "s": f"s{i}", "by": b"x",
        "np_f32": np.float32(i), "np_i": np.int64(i), "np_b": np.bool_(i), "np_0d": np.array(i),
        "pt": Point(x=m.tensor(float(i)), y=[i, i + 1]),
        "tup": (i, "a"), "lst": [m.zeros(2) + i, {"k": i}],
    }


def test_default_collate_nested():
    both(lambda m: data(m).default_collate([sample(m, i) for i in range(3)]))


class MyDict(dict):
    pass


def test_default_collate_container_types():
    both(lambda m: data(m).default_collate([MyDict(a=1), MyDict(a=2)]))
    both(lambda m: data(m).default_collate([collections.OrderedDict(b=1.0, a=2.0)] * 2))
    both(lambda m: data(m).default_collate([Point(1, 2.0), Point(3, 4.0)]))
    both(lambda m: data(m).default_collate([collections.deque([1, 2]),
                                            collections.deque([3, 4])]))
    both(lambda m: data(m).default_collate([range(2), range(2)]))  # rebuild fails -> list
    both(lambda m: data(m).default_collate([m.tensor(1.5, dtype=m.float16)] * 2))
    both(lambda m: data(m).default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])]))
    both(lambda m: data(m).default_collate(["a", "b"]))
    both(lambda m: data(m).default_collate([np.str_("a"), np.str_("b")]))
    both(lambda m: data(m).default_collate([True, False]))


def test_default_collate_errors():
    e = check_raises(lambda m: data(m).default_collate([m.zeros(2), m.zeros(3)]))
    assert "stack expects each tensor to be equal size" in str(e)
    check_raises(lambda m: data(m).default_collate([[1, 2], [3]]),
                 match="each element in list of batch should be of equal size")
    check_raises(lambda m: data(m).default_collate([object(), object()]),
                 match="batch must contain tensors, numpy arrays, numbers, dicts or lists")
    check_raises(lambda m: data(m).default_collate([np.array(["a"]), np.array(["b"])]),
                 match="found <U1")


def test_default_convert():
    def value(m):
        return {"arr": np.arange(3, dtype=np.float32), "np_i": np.int32(4), "s": np.str_("x"),
                "tup": (np.zeros(2), 1), "pt": Point(np.array(1), 2.0), "lst": [np.ones(1)],
                "t": m.ones(2), "py": 3, "obj": np.array(["a"])}

    both(lambda m: data(m).default_convert(value(m)))
    both(lambda m: data(m).default_convert(MyDict(a=np.ones(1))))


def test_collate_fn_map_extension():
    class Box:
        def __init__(self, v):
            self.v = v

    def collate_box(batch, *, collate_fn_map=None):
        return sum(b.v for b in batch)

    table = {Box: collate_box, **default_collate_fn_map}
    out = collate([{"box": Box(1), "t": ember.ones(2)}, {"box": Box(2), "t": ember.zeros(2)}],
                  collate_fn_map=table)
    assert out["box"] == 3
    assert out["t"].tolist() == [[1.0, 1.0], [0.0, 0.0]]
    with pytest.raises(TypeError, match="found"):
        default_collate([Box(1)])


# ----------------------------------------------------------------------------------------------
# DataLoader, one process


def loaded(m, dataset_fn, **kw):
    return list(data(m).DataLoader(dataset_fn(m), **kw))


def tensor_ds(m):
    return data(m).TensorDataset(*tensors(m))


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=4), dict(batch_size=4, drop_last=True),
                                dict(batch_size=6), dict(batch_size=7, drop_last=True),
                                dict(batch_size=None)])
def test_loader_sequential(kw):
    both(lambda m: loaded(m, tensor_ds, **kw))
    both(lambda m: len(data(m).DataLoader(tensor_ds(m), **kw)))


def test_loader_nested_samples_and_custom_collate():
    both(lambda m: loaded(m, lambda m: items(m, [sample(m, i) for i in range(5)]), batch_size=2))
    both(lambda m: loaded(m, lambda m: items(m, [sample(m, i) for i in range(3)]),
                          batch_size=None))
    both(lambda m: loaded(m, lambda m: items(m, list(range(7))), batch_size=3,
                          collate_fn=lambda batch: [x * 2 for x in batch]))


def test_loader_samplers():
    both(lambda m: loaded(m, tensor_ds, sampler=[5, 0, 3], batch_size=2))
    both(lambda m: loaded(m, tensor_ds, batch_sampler=[[5, 0], [3], [1, 2, 4]]))
    both(lambda m: len(data(m).DataLoader(tensor_ds(m), batch_sampler=[[5, 0], [3]])))
    both(lambda m: loaded(m, lambda m: data(m).Subset(tensor_ds(m), [4, 2, 0]), batch_size=2))


def test_loader_iterable_dataset():
    both(lambda m: loaded(m, lambda m: Count(m, 7), batch_size=3))
    both(lambda m: loaded(m, lambda m: Count(m, 7), batch_size=3, drop_last=True))
    both(lambda m: loaded(m, lambda m: Count(m, 7), batch_size=None))
    both(lambda m: len(data(m).DataLoader(Count(m, 7), batch_size=3)))
    both(lambda m: len(data(m).DataLoader(Count(m, 7), batch_size=3, drop_last=True)))


def test_loader_warns_when_an_iterable_outgrows_its_len():
    class Liar(IterableDataset):
        def __iter__(self):
            return iter(range(4))

        def __len__(self):
            return 2

    loader = DataLoader(Liar(), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2"):
        list(loader)


def test_shuffle_is_a_reproducible_permutation():
    def epoch(loader):
        return [b.tolist() for b in loader]

    loader = DataLoader(range(10), batch_size=3, shuffle=True,
                        generator=ember.Generator().manual_seed(4))
    first, second = epoch(loader), epoch(loader)
    assert sorted(sum(first, [])) == sorted(sum(second, [])) == list(range(10))
    assert first != second  # a new order each epoch
    again = DataLoader(range(10), batch_size=3, shuffle=True,
                       generator=ember.Generator().manual_seed(4))
    assert epoch(again) == first
    ember.manual_seed(9)
    a = epoch(DataLoader(range(10), batch_size=3, shuffle=True))
    ember.manual_seed(9)
    assert epoch(DataLoader(range(10), batch_size=3, shuffle=True)) == a


@pytest.mark.parametrize("kw, match", [
    (dict(sampler=[0, 1], shuffle=True), "mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], shuffle=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], sampler=[0]), "batch_sampler option is mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), "batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "disables auto-batching"),
    (dict(num_workers=-1), "num_workers option should be non-negative"),
    (dict(timeout=-1), "timeout option should be non-negative"),
    (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
    (dict(num_workers=1, prefetch_factor=-1), "prefetch_factor option should be non-negative"),
    (dict(persistent_workers=True), "persistent_workers option needs num_workers > 0"),
    (dict(multiprocessing_context="fork"), "can only be used with multi-process loading"),
    (dict(num_workers=1, multiprocessing_context="nope"), "valid start method"),
    (dict(num_workers=1, multiprocessing_context=3), "valid context object"),
    (dict(batch_size=0), "batch_size should be a positive integer value"),
])
def test_loader_argument_errors(kw, match):
    check_raises(lambda m: data(m).DataLoader(list(range(4)), **kw), match=match)


@pytest.mark.parametrize("kw, match", [(dict(shuffle=True), "expected unspecified shuffle"),
                                       (dict(sampler=[0]), "expected unspecified sampler"),
                                       (dict(batch_sampler=[[0]]), "unspecified batch_sampler")])
def test_loader_iterable_argument_errors(kw, match):
    check_raises(lambda m: data(m).DataLoader(Count(m, 3), **kw), match=match)


def test_loader_attributes():
    def set_after_init(m):
        loader = data(m).DataLoader(list(range(4)), batch_size=2)
        loader.batch_size = 3

    check_raises(set_after_init, match="should not be set after DataLoader is initialized")
    both(lambda m: type(data(m).DataLoader(list(range(4)), shuffle=True).sampler).__name__)
    both(lambda m: type(data(m).DataLoader(list(range(4))).batch_sampler).__name__)
    both(lambda m: data(m).DataLoader(list(range(4)), batch_sampler=[[0]]).batch_size)
    both(lambda m: data(m).DataLoader(list(range(4)), num_workers=1).prefetch_factor)
    loader = DataLoader(list(range(4)), num_workers=1, multiprocessing_context="spawn")
    assert loader.multiprocessing_context.get_start_method() == "spawn"


def test_loader_timeout_needs_workers():
    check_raises(lambda m: list(data(m).DataLoader(list(range(3)), timeout=1)))


def test_pin_memory_is_accepted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no accelerator" warning, as torch gives
        both(lambda m: loaded(m, tensor_ds, batch_size=4, pin_memory=True))


def test_loader_iterator_len_and_pickling():
    it = iter(DataLoader(range(5), batch_size=2))
    assert len(it) == 3
    with pytest.raises(NotImplementedError):
        import pickle
        pickle.dumps(it)

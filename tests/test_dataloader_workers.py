"""The DataLoader with worker processes: same batches as one process, in sampler order;
seeding, worker_init_fn and get_worker_info; iterable datasets sharded per worker (compared
with torch's output); errors, timeouts and dead workers; persistent workers; and no
process left behind (the autouse fixture checks multiprocessing.active_children()).

Datasets live at module level so that the spawn start method can pickle them.
"""
import multiprocessing
import os
import pickle
import random
import subprocess
import sys
import time

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, Dataset, TensorDataset, get_worker_info

# torch is imported only by the tests that compare with it: spawned workers import this
# module to unpickle its datasets, and should not pay for importing torch.


@pytest.fixture(autouse=True)
def no_process_left_behind():
    yield
    left = multiprocessing.active_children()
    for process in left:  # so that one failure does not spill into the next tests
        process.terminate()
        process.join()
    assert left == [], "worker processes outlived their DataLoader iterator"


def batches(loader):
    """Batches as plain nested lists, comparable across libraries and runs."""
    return [_plain(b) for b in loader]


def _plain(x):
    if hasattr(x, "tolist"):  # an ember or torch tensor
        return x.tolist()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


class Squares(Dataset):
    """Item i is (i, i*i as float32 tensor); odd items are slow, so worker 1 (which gets
    them with batch_size=1) finishes after worker 0 and results arrive out of order."""

    def __init__(self, n, slow=0.0):
        self.n, self.slow = n, slow

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i % 2:
            time.sleep(self.slow)
        return {"i": i, "sq": ember.tensor([float(i * i)])}


class Fails(Dataset):
    def __init__(self, bad, error=ValueError):
        self.bad, self.error = bad, error

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.bad:
            raise self.error(f"no item {i}")
        return i


class Unpicklable(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return lambda: i


class WhoAmI(Dataset):
    """Reports the worker's info, pid and its random streams."""

    def __init__(self, n=6):
        self.n = n
        self.offset = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "same_dataset": info.dataset is self, "offset": self.offset, "pid": os.getpid(),
                "ember": ember.rand(1).item(), "numpy": float(np.random.rand()),
                "random": random.random()}


def shift_by_worker(worker_id):
    get_worker_info().dataset.offset = 100 * (worker_id + 1)


class Sleepy(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(5)
        return i


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def make_range(m):
    """torch's documented sharding example, for library m: the IterableDataset range(start,
    end), split evenly between workers when `shard` is set."""
    class Range(m.utils.data.IterableDataset):
        def __init__(self, start, end, shard=True):
            self.start, self.end, self.shard = start, end, shard

        def __iter__(self):
            info = m.utils.data.get_worker_info()
            if info is None or not self.shard:
                return iter(range(self.start, self.end))
            per = -(-(self.end - self.start) // info.num_workers)
            lo = self.start + info.id * per
            return iter(range(lo, min(lo + per, self.end)))

    return Range


EmberRange = make_range(ember)


# ----------------------------------------------------------------------------------------------
# same batches as one process


def seeded(seed=3):
    return ember.Generator().manual_seed(seed)


@pytest.mark.parametrize("kw", [dict(batch_size=3, shuffle=True),
                                dict(batch_size=2, drop_last=True, shuffle=True),
                                dict(batch_size=None, shuffle=True), dict(batch_size=4)])
def test_workers_give_the_single_process_batches(kw):
    single = batches(DataLoader(Squares(11), generator=seeded(), **kw))
    multi = batches(DataLoader(Squares(11), generator=seeded(), num_workers=2, **kw))
    assert multi == single


def test_batches_come_in_sampler_order_despite_completion_order():
    loader = DataLoader(Squares(6, slow=0.1), batch_size=1, num_workers=2)
    assert [b["i"] for b in batches(loader)] == [[i] for i in range(6)]
    loose = DataLoader(Squares(6, slow=0.1), batch_size=1, num_workers=2, in_order=False)
    got = [b["i"][0] for b in batches(loose)]
    assert sorted(got) == list(range(6)) and got != list(range(6))


def test_tensor_views_travel_compactly():
    x = ember.arange(4000, dtype=ember.float32).reshape(1000, 4)
    loader = DataLoader(TensorDataset(x), batch_size=None, num_workers=2)
    rows = [row for (row,) in loader]
    assert ember.equal(ember.stack(rows), x)
    # each row crossed the pipe alone, not with the whole 16 kB tensor it views
    assert {r.untyped_storage().nbytes() for r in rows} == {16}


def test_prefetch_keeps_tasks_in_flight():
    counter = multiprocessing.get_context("fork").Value("i", 0)

    class Counted(Dataset):
        def __len__(self):
            return 40

        def __getitem__(self, i):
            with counter.get_lock():
                counter.value += 1
            return i

    for prefetch in (2, 3):
        counter.value = 0
        it = iter(DataLoader(Counted(), num_workers=2, prefetch_factor=prefetch))
        next(it)
        expected = 2 * prefetch + 1  # the primed tasks, plus one refill for the batch taken
        deadline = time.monotonic() + 5
        while counter.value < expected and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)  # had more been sent, the workers would have fetched it by now
        assert counter.value == expected
        del it


# ----------------------------------------------------------------------------------------------
# seeds, worker_init_fn, get_worker_info


def test_worker_info_seeds_and_init_fn():
    def run(seed):
        loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, generator=seeded(seed),
                            worker_init_fn=shift_by_worker)
        return list(loader)

    rows = run(1)
    assert [r["id"] for r in rows] == [0, 1, 0, 1, 0, 1]
    assert all(r["num_workers"] == 2 and r["same_dataset"] for r in rows)
    assert [r["offset"] for r in rows] == [100, 200] * 3
    base = rows[0]["seed"]
    assert [r["seed"] for r in rows] == [base, base + 1] * 3
    assert len({r["pid"] for r in rows}) == 2 and os.getpid() not in {r["pid"] for r in rows}
    for stream in ("ember", "numpy", "random"):
        assert rows[0][stream] != rows[1][stream]  # workers draw different numbers
    again = run(1)
    for stream in ("seed", "ember", "numpy", "random"):
        assert [r[stream] for r in again] == [r[stream] for r in rows]  # reproducible
    assert run(2)[0]["seed"] != base


def test_numpy_worker_seed_matches_torch():
    """NumPy's per-worker state is derived from (base_seed, worker_id) exactly as torch's."""
    pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state

    from ember.utils.data._utils.worker import _seed
    base_seed = 123456789012345
    _seed(base_seed, 1)
    ours = np.random.rand(3)
    np.random.seed(_generate_state(base_seed, 1))
    np.testing.assert_array_equal(ours, np.random.rand(3))


# ----------------------------------------------------------------------------------------------
# iterable datasets (compared with torch's real output)


@pytest.mark.parametrize("kw", [dict(num_workers=2), dict(num_workers=3),
                                dict(num_workers=2, batch_size=None),
                                dict(num_workers=2, batch_size=2),
                                dict(num_workers=2, batch_size=3, drop_last=True)])
@pytest.mark.parametrize("shard", [True, False])
@pytest.mark.filterwarnings("ignore:This DataLoader will create")  # 3 workers on 2 CPUs
def test_iterable_dataset_like_torch(kw, shard):
    torch = pytest.importorskip("torch")
    ours = batches(DataLoader(EmberRange(3, 10, shard), **kw))
    theirs = batches(torch.utils.data.DataLoader(make_range(torch)(3, 10, shard), **kw))
    assert ours == theirs


# ----------------------------------------------------------------------------------------------
# errors


def test_worker_exception_is_reraised_with_worker_id_and_traceback():
    with pytest.raises(ValueError) as info:
        list(DataLoader(Fails(3), num_workers=2))  # item 3 goes to worker 1
    message = str(info.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 1.")
    assert "Original Traceback (most recent call last):" in message
    assert "in __getitem__" in message and "ValueError: no item 3" in message


def test_worker_exception_types():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(DataLoader(Fails(0, KeyError), num_workers=2))
    with pytest.raises(Exception, match="Caught .* in DataLoader worker process 0"):
        list(DataLoader(Unpicklable(), num_workers=1))


def test_worker_init_fn_error():
    def init(worker_id):
        raise RuntimeError("bad init")

    with pytest.raises(RuntimeError, match="(?s)worker process 0.*bad init"):
        list(DataLoader(range(4), num_workers=1, worker_init_fn=init))


def test_timeout():
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        list(DataLoader(Sleepy(), num_workers=1, timeout=0.3))


def test_dead_worker_is_detected():
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly"):
        list(DataLoader(Dies(), num_workers=2))


# ----------------------------------------------------------------------------------------------
# process lifetime


def pids(loader):
    return {row["pid"] for row in loader}


def test_persistent_workers_are_reused():
    loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, persistent_workers=True)
    first, second = pids(loader), pids(loader)
    assert first == second and len(first) == 2
    assert len(multiprocessing.active_children()) == 2
    it = iter(loader)
    next(it)  # an abandoned epoch: the next one still starts cleanly
    assert [row["i"] for row in loader] == list(range(6))
    del loader, it  # the loader owns the iterator, and with it the workers


def test_workers_are_fresh_each_epoch_otherwise():
    loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2)
    first = pids(loader)
    assert multiprocessing.active_children() == []  # shut down at the end of the epoch
    assert pids(loader).isdisjoint(first)


def test_persistent_iterable_epochs():
    loader = DataLoader(EmberRange(0, 5), num_workers=2, persistent_workers=True)
    assert batches(loader) == batches(loader) == [[0], [3], [1], [4], [2]]
    del loader


def test_deleting_an_iterator_mid_epoch_stops_its_workers():
    it = iter(DataLoader(Squares(50), num_workers=2))
    next(it)
    assert len(multiprocessing.active_children()) == 2
    del it


def test_spawn_start_method():
    loader = DataLoader(Squares(5), batch_size=2, num_workers=2, generator=seeded(),
                        shuffle=True, multiprocessing_context="spawn")
    assert batches(loader) == batches(DataLoader(Squares(5), batch_size=2, generator=seeded(),
                                                 shuffle=True))


def test_iterator_with_workers_cannot_be_pickled():
    it = iter(DataLoader(range(3), num_workers=1))
    with pytest.raises(NotImplementedError):
        pickle.dumps(it)
    del it


SCRIPT = """
import os, sys
sys.path.insert(0, {root!r})
from ember.utils.data import DataLoader
from tests.test_dataloader_workers import WhoAmI
loader = DataLoader(WhoAmI(), batch_size=None, num_workers=2, persistent_workers=True)
print(sorted({{row["pid"] for row in loader}}), flush=True)
# exits with the workers still running
"""


def test_workers_end_with_the_interpreter():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(root=root)], timeout=60,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for pid in eval(done.stdout):
        with pytest.raises(ProcessLookupError):  # gone, not a zombie waiting for its parent
            os.kill(pid, 0)

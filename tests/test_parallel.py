"""ember's thread pool and its control of BLAS's own threads."""
import sys

import numpy as np
import pytest

import ember
from ember import _parallel

needs_blas_control = pytest.mark.skipif(
    _parallel._blas is None, reason="NumPy's BLAS offers no thread-count switch here")


@pytest.fixture
def restore_threads():
    before = ember.get_num_threads()
    yield
    ember.set_num_threads(before)


def test_parallel_map_keeps_order_and_results(restore_threads):
    ember.set_num_threads(3)
    assert _parallel.parallel_map(lambda i: i * i, list(range(10))) == [i * i for i in range(10)]


@needs_blas_control
def test_a_thread_held_up_by_one_item_leaves_the_rest_to_the_others(restore_threads):
    """Items go to whichever thread is free: while one thread sleeps on a slow item, the
    other runs all the quick ones (fixed runs per thread would give it only half)."""
    import threading
    import time

    ember.set_num_threads(2)
    ran_on = {}

    def item(i):
        time.sleep(1.0 if i == 0 else 0.01)
        ran_on[i] = threading.get_ident()
        return i
    assert _parallel.parallel_map(item, list(range(10))) == list(range(10))
    quick = {ran_on[i] for i in range(1, 10)}
    assert len(quick) == 1 and ran_on[0] not in quick


@needs_blas_control
def test_blas_threads_follow_set_num_threads_and_survive_parallel_work(restore_threads):
    get_blas, _ = _parallel._blas
    ember.set_num_threads(2)
    assert get_blas() == 2
    seen = _parallel.parallel_map(lambda _: get_blas(), [0, 1, 2, 3])
    assert seen == [1, 1, 1, 1]  # inside the workers BLAS stays on one thread
    assert get_blas() == 2  # and gets its threads back afterwards
    ember.set_num_threads(1)
    assert get_blas() == 1


def test_set_num_threads_rejects_zero():
    with pytest.raises(RuntimeError, match="positive"):
        ember.set_num_threads(0)


F = ember.nn.functional
ROW_SPLIT_CASES = {
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "softmax_last": lambda x: F.softmax(x, -1),
    "softmax_dim0": lambda x: F.softmax(x, 0),
    "log_softmax_mid": lambda x: F.log_softmax(x, 1),
    "log_softmax_dim0": lambda x: F.log_softmax(x, 0),
    "layer_norm_last": lambda x: F.layer_norm(x, x.shape[-1:], ember.linspace(0.5, 2, 7),
                                              ember.linspace(-1, 1, 7)),
    "layer_norm_all": lambda x: F.layer_norm(x, x.shape),
}


@pytest.mark.parametrize("name", sorted(ROW_SPLIT_CASES))
def test_row_split_kernels_match_one_thread(name, monkeypatch, restore_threads):
    """Kernels cut into row blocks (one per thread) give the single-thread result, forward and
    backward, also where a block boundary would be wrong (a softmax over dim 0)."""
    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 8)
    fn = ROW_SPLIT_CASES[name]
    results = []
    for threads in (1, 3):
        ember.set_num_threads(threads)
        x = ember.linspace(-4, 4, 5 * 6 * 7).reshape(5, 6, 7).requires_grad_()
        y = fn(x)
        (y * ember.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for one, split in zip(*results):
        np.testing.assert_allclose(split, one, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_by_rows_in_cache_pieces_cover_every_row_once(threads, monkeypatch, restore_threads):
    """`in_cache=True` walks each block in pieces of at most CACHE_ELEMENTS elements: every
    row is written once, by a piece of the inputs cut alike (a broadcast row goes whole)."""
    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 8)
    monkeypatch.setattr(_parallel, "CACHE_ELEMENTS", 3 * 7)
    ember.set_num_threads(threads)
    x = np.arange(13 * 7, dtype=np.float64).reshape(13, 7)
    scale = np.linspace(1, 2, 7)
    sizes = []

    def kernel(xp, outs, a, w):
        sizes.append(a.shape[0])
        outs[0][...] = a * w + outs[0]  # a row written twice would count twice
    out = np.zeros_like(x)
    _parallel.by_rows(kernel, np, (out,), x, scale, in_cache=True)
    np.testing.assert_array_equal(out, x * scale)
    assert sum(sizes) == 13 and max(sizes) == 3 and len(sizes) >= 5


def test_cache_pieces_of_a_block():
    a = np.empty((10, 4))
    assert _parallel.cache_pieces(slice(3, 10), a) == [slice(3, 10)]  # 40 elements fit
    original = _parallel.CACHE_ELEMENTS
    try:
        _parallel.CACHE_ELEMENTS = 9  # two rows of 4
        assert _parallel.cache_pieces(slice(3, 10), a) == [
            slice(3, 5), slice(5, 7), slice(7, 9), slice(9, 10)]
        _parallel.CACHE_ELEMENTS = 2  # less than a row: one row a piece
        assert _parallel.cache_pieces(slice(0, 2), a) == [slice(0, 1), slice(1, 2)]
    finally:
        _parallel.CACHE_ELEMENTS = original


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_in_cache_pieces_matches_one_pass(approximate, monkeypatch, restore_threads):
    """gelu's forward runs a contiguous input as rows of its last dim in cache-sized pieces;
    a strided input keeps its own rows. Both give the single-piece values, and torch's."""
    torch = pytest.importorskip("torch")
    x = ember.linspace(-6, 6, 4 * 5 * 6).reshape(4, 5, 6)
    inputs = {"contiguous": x, "strided": x.transpose(0, 2)}
    for name, a in inputs.items():
        whole = F.gelu(a, approximate=approximate).numpy()
        monkeypatch.setattr(_parallel, "CACHE_ELEMENTS", 2 * 6)
        for threads in (1, 2):
            ember.set_num_threads(threads)
            np.testing.assert_array_equal(F.gelu(a, approximate=approximate).numpy(), whole)
        monkeypatch.undo()
        expected = torch.nn.functional.gelu(torch.from_numpy(a.numpy()),
                                            approximate=approximate)
        np.testing.assert_allclose(whole, expected.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,kernel", [((5, 3, 8, 8), 2), ((4, 2, 9, 7), 3)])
def test_row_split_max_pool_matches_one_thread(shape, kernel, monkeypatch, restore_threads):
    """A multi-output kernel (values and choices) and its backward, with a cropped border."""
    monkeypatch.setattr(_parallel, "SPLIT_ELEMENTS", 8)
    results = []
    for threads in (1, 3):
        ember.set_num_threads(threads)
        x = ember.linspace(-3, 3, int(np.prod(shape))).reshape(shape).cos().requires_grad_()
        y = F.max_pool2d(x, kernel)
        (y * ember.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    for one, split in zip(*results):
        np.testing.assert_array_equal(split, one)


def test_nested_parallel_regions_run_serially_instead_of_deadlocking(restore_threads):
    ember.set_num_threads(2)
    inner = lambda i: sum(_parallel.parallel_map(lambda j: i * j, [1, 2, 3]))  # noqa: E731
    assert _parallel.parallel_map(inner, list(range(6))) == [6 * i for i in range(6)]


@needs_blas_control
def test_blas_threads_come_back_after_regions_from_several_user_threads(restore_threads):
    import threading

    ember.set_num_threads(2)
    start = threading.Barrier(3)

    def region():
        start.wait()
        for _ in range(20):
            _parallel.parallel_map(lambda _: np.ones((64, 64)) @ np.ones((64, 64)), [0, 1, 2])
    users = [threading.Thread(target=region) for _ in range(3)]
    for u in users:
        u.start()
    for u in users:
        u.join()
    assert _parallel._blas[0]() == 2


def _square_in_pool(n):
    return _parallel.parallel_map(lambda i: i * i, list(range(n)))


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX-only")
def test_a_forked_child_starts_its_own_pool(restore_threads):
    """The parent's pool threads do not exist in a forked child (a DataLoader worker)."""
    import multiprocessing

    ember.set_num_threads(2)
    _square_in_pool(4)  # the parent's pool now exists
    with multiprocessing.get_context("fork").Pool(1) as child:
        assert child.apply_async(_square_in_pool, (5,)).get(timeout=30) == [0, 1, 4, 9, 16]


@needs_blas_control
def test_an_error_in_a_piece_reaches_the_caller_after_every_worker_is_done(restore_threads):
    import time

    ember.set_num_threads(2)
    finished = []

    def piece(i):
        if i == 0:  # one piece fails at once...
            raise ValueError("piece 0")
        time.sleep(0.05)  # ...while the others are still going
        finished.append(i)
        return i
    with pytest.raises(ValueError, match="piece 0"):
        _parallel.parallel_map(piece, list(range(6)))
    done = sorted(finished)
    time.sleep(0.2)
    assert sorted(finished) == done and set(done) <= {1, 2, 3, 4, 5}  # nothing left running
    assert _parallel._blas[0]() == 2  # BLAS got its threads back
    assert _parallel.parallel_map(lambda i: -i, range(5)) == [0, -1, -2, -3, -4]


@needs_blas_control
def test_the_caller_does_not_wait_for_a_worker_that_has_not_started(restore_threads):
    """When the calling thread has run every item before the pool's thread got to its share
    (here: the pool's thread is held by other work), that share is cancelled, not waited for."""
    import threading

    ember.set_num_threads(2)
    _parallel.parallel_map(lambda i: i, [0, 1])  # the pool exists
    release = threading.Event()
    held = _parallel._pool.submit(release.wait, 30)
    try:
        ran_on = []

        def item(i):
            ran_on.append(threading.get_ident())
            return -i
        assert _parallel.parallel_map(item, list(range(6))) == [0, -1, -2, -3, -4, -5]
        assert set(ran_on) == {threading.get_ident()}
        assert not held.done()  # returned while the pool's thread was still busy
    finally:
        release.set()
        held.result(timeout=30)
    assert _parallel.parallel_map(lambda i: i + 1, range(4)) == [1, 2, 3, 4]

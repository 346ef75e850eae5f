"""ember's thread pool and its control of BLAS's own threads."""
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

"""torch.quasirandom.SobolEngine: the same Sobol points as torch, unscrambled (a fixed
sequence) and scrambled (drawn from the seeded or the global generator), over draws split
any way, fast_forward, reset and draw_base2; and torch.random.thread_safe_generator."""
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytest.importorskip("scipy")  # the direction numbers' table

E, T = ember.quasirandom.SobolEngine, torch.quasirandom.SobolEngine


def same(e, t):
    """Bit-for-bit equal, dtype included."""
    assert str(e.dtype).replace("ember", "torch") == str(t.dtype)
    np.testing.assert_array_equal(e.numpy().view(np.uint8), t.numpy().view(np.uint8))


def both(make, calls, seed=3):
    """The engines make(lib) after manual_seed(seed), each fed the same calls (functions of
    (engine, lib) returning a tensor); the results compared, then the next global draws."""
    for lib in (torch, ember):
        lib.manual_seed(seed)
    engines = make(T, torch), make(E, ember)
    for call in calls:
        same(call(engines[1], ember), call(engines[0], torch))
    same(engines[1].quasi, engines[0].quasi)
    same(ember.rand(5), torch.rand(5))
    assert engines[1].num_generated == engines[0].num_generated


DRAWS = [
    lambda g, m: g.draw(),
    lambda g, m: g.draw(7),
    lambda g, m: g.draw(16, dtype=m.float64),
    lambda g, m: g.fast_forward(5).draw(3),
    lambda g, m: g.draw_base2(5),
    lambda g, m: g.reset().draw(9, dtype=m.float64),
    lambda g, m: g.draw(4, out=m.empty(1)),
]


@pytest.mark.parametrize("dimension", [1, 2, 5, 40, 1111])
def test_unscrambled_sequence(dimension):
    both(lambda S, m: S(dimension), [lambda g, m: g.sobolstate] + DRAWS)


def test_the_largest_dimension():
    both(lambda S, m: S(21201), [lambda g, m: g.sobolstate, lambda g, m: g.draw(3),
                                 lambda g, m: g.draw(2, dtype=m.float64)])


@pytest.mark.parametrize("seed", [None, 0, 12345])
@pytest.mark.parametrize("dimension", [1, 3, 64])
def test_scrambled_sequence(dimension, seed):
    both(lambda S, m: S(dimension, scramble=True, seed=seed),
         [lambda g, m: g.shift, lambda g, m: g.sobolstate] + DRAWS)


def test_first_draw_of_float64_after_a_float32_start():
    # torch computes the first point in the default dtype at construction, then converts
    both(lambda S, m: S(4, scramble=True, seed=9),
         [lambda g, m: g.draw(1, dtype=m.float64), lambda g, m: g.draw(3, dtype=m.float64)])
    both(lambda S, m: S(4, scramble=True, seed=9), [lambda g, m: g.fast_forward(0).draw(2)])


def test_default_dtype_float64():
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    try:
        both(lambda S, m: S(3, scramble=True, seed=1), [lambda g, m: g.draw(1),
                                                        lambda g, m: g.draw(5)])
    finally:
        ember.set_default_dtype(old)
        torch.set_default_dtype(getattr(torch, str(old).split(".")[-1]))


ERRORS = [
    lambda S, m: S(0),
    lambda S, m: S(21202),
    lambda S, m: S(3).draw(0),
    lambda S, m: S(3).draw(2, dtype=m.int64),
    lambda S, m: S(3).draw(2, dtype=m.float16),
    lambda S, m: S(3).fast_forward(3).draw_base2(1),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_as_torch(fn):
    with pytest.raises(Exception) as t_info:
        fn(T, torch)
    with pytest.raises(type(t_info.value), match=re.escape(str(t_info.value))):
        fn(E, ember)


def test_repr():
    for args in [(3,), (3, True), (3, True, 7), (2, False, 5)]:
        assert repr(E(*args)) == repr(T(*args))


def test_thread_safe_generator(monkeypatch):
    assert ember.random.thread_safe_generator() is None is torch.random.thread_safe_generator()
    assert ember.thread_safe_generator is ember.random.thread_safe_generator

    class ThreadRng:  # what a thread worker's WorkerInfo.rng carries
        def __init__(self, lib):
            self.torch_generator = lib.Generator()

    for lib, worker in ((torch, torch.utils.data._utils.worker),
                        (ember, ember.utils.data._utils.worker)):
        rng = ThreadRng(lib)
        for method, expected in (("thread", rng.torch_generator), ("multiprocessing", None)):
            monkeypatch.setattr(worker, "_worker_info", worker.WorkerInfo(
                id=0, num_workers=1, seed=0, dataset=None, rng=rng, worker_method=method))
            assert lib.random.thread_safe_generator() is expected

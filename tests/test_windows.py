"""ember.signal.windows and the `*_window` factories against torch: every window, symmetric
and periodic, lengths 0, 1, 2, odd and even, float32 / float64, parameters; requires_grad; torch's
errors."""
import pytest

from .oracle import check, check_raises

WINDOWS = [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}),
    ("exponential", {"tau": 2.5}), ("gaussian", {}), ("gaussian", {"std": 0.7}),
    ("general_cosine", {"a": [0.5, 0.3, 0.2]}), ("general_hamming", {}),
    ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}), ("kaiser", {}),
    ("kaiser", {"beta": 3.0}), ("nuttall", {}),
]


@pytest.mark.parametrize("M", [0, 1, 2, 7, 10])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("name,args", WINDOWS, ids=str)
def test_signal_windows(name, args, sym, M):
    pytest.importorskip("torch")
    check(lambda m: getattr(m.signal.windows, name)(M, sym=sym, **args), [], grad=False)
    check(lambda m: getattr(m.signal.windows, name)(M, sym=sym, dtype=m.float64, **args), [],
          grad=False)


def test_exponential_center():
    pytest.importorskip("torch")
    check(lambda m: m.signal.windows.exponential(9, center=2.0, sym=False), [], grad=False)


FACTORIES = [("hann_window", ()), ("hamming_window", ()), ("hamming_window", (0.5, 0.4)),
             ("blackman_window", ()), ("bartlett_window", ()), ("kaiser_window", ()),
             ("kaiser_window", (5.0,))]


@pytest.mark.parametrize("L", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("name,args", FACTORIES, ids=str)
def test_window_factories(name, args, periodic, L):
    pytest.importorskip("torch")
    check(lambda m: getattr(m, name)(L, periodic, *args), [], grad=False)
    check(lambda m: getattr(m, name)(L, periodic, *args, dtype=m.float64), [], grad=False)


def test_defaults_and_requires_grad():
    pytest.importorskip("torch")
    check(lambda m: (m.hann_window(6), m.kaiser_window(6, True, 2.0),
                     m.signal.windows.hann(4, requires_grad=True).requires_grad,
                     m.hann_window(4, requires_grad=True).requires_grad,
                     m.hann_window(5, dtype=m.float16)), [], grad=False, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("fn", [
    lambda m: m.signal.windows.hann(-1),
    lambda m: m.signal.windows.hann(5, dtype=m.int64),
    lambda m: m.signal.windows.hann(5, dtype=m.float16),
    lambda m: m.signal.windows.exponential(5, center=1.0),
    lambda m: m.signal.windows.exponential(5, tau=0),
    lambda m: m.signal.windows.gaussian(5, std=0),
    lambda m: m.signal.windows.general_cosine(5, a=[]),
    lambda m: m.signal.windows.general_cosine(5, a=1.0),
    lambda m: m.signal.windows.kaiser(5, beta=-1),
    lambda m: m.signal.windows.bartlett(-2),
    lambda m: m.hann_window(-1),
    lambda m: m.hann_window(5, dtype=m.int64),
    lambda m: m.blackman_window(-3),
])
def test_errors_match_torch(fn):
    pytest.importorskip("torch")
    check_raises(fn)

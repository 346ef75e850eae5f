"""ember.fft against torch.fft: every function's values, dtypes and gradients with n / s / dim /
norm variants, real and complex inputs; float64 / complex128 gradcheck (which also checks the
one-sided transforms' gradients, where only part of the spectrum is free); errors; the
frequency and shift helpers. The op rows for the primitives are in tests/specs/fft.py."""
import itertools

import numpy as np
import pytest

import ember

from .oracle import check, check_raises
from .specs._spec import C, T

NORMS = [None, "backward", "forward", "ortho"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2"]
N_D = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"}


def _inputs(name, shape, dtype, seed=0):
    """A real input for the real-only functions; else a complex one (or real when asked)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if name not in REAL_ONLY and dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    elif dtype.startswith("complex"):
        dtype = {"complex64": "float32", "complex128": "float64"}[dtype]
    return x.astype(dtype)


def _fn(name, **kwargs):
    return lambda m, a: getattr(m.fft, name)(a, **kwargs)


# (n, dim) / (s, dim) variants: default, shorter, longer, odd, -1, other and reordered dims
ONE_D_ARGS = [{}, {"n": 4}, {"n": 9}, {"n": 7, "dim": 0}, {"dim": 0}]
TWO_D_ARGS = [{}, {"s": (3, 8)}, {"s": (4, 5), "dim": (0, 2)}, {"dim": (2, 0)},
              {"s": (-1, 4)}]
N_D_ARGS = [{}, {"s": (4, 3)}, {"dim": (0, 2)}, {"s": (2, 5), "dim": (1, 0)},
            {"s": (3, 2, 7)}, {"dim": 1}]
SHAPES = {"1": (5, 6), "2": (3, 4, 6), "n": (3, 4, 5)}


def _cases(names, arg_sets, kind):
    """Every function x argument set x dtype, each with the next norm in turn (every norm
    meets every function: 4 norms against 5-6 argument sets x 2 dtypes)."""
    norms = itertools.cycle(NORMS)
    return [pytest.param(name, dtype, args, next(norms), SHAPES[kind],
                         id=f"{name}-{dtype}-{args}")
            for name in names for args in arg_sets for dtype in ("float32", "complex128")]


@pytest.mark.parametrize("name,dtype,args,norm,shape",
                         _cases(ONE_D, ONE_D_ARGS, "1") + _cases(TWO_D, TWO_D_ARGS, "2")
                         + _cases(N_D, N_D_ARGS, "n"))
def test_against_torch(name, dtype, args, norm, shape):
    pytest.importorskip("torch")
    x = _inputs(name, shape, dtype)
    check(_fn(name, norm=norm, **args), [x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_D)
def test_every_norm(name, norm):
    pytest.importorskip("torch")
    check(_fn(name, norm=norm, n=7), [_inputs(name, (2, 6), "complex64")], rtol=1e-4,
          atol=1e-5)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
def test_integer_and_non_contiguous_inputs(name):
    pytest.importorskip("torch")
    ints = np.arange(12).reshape(3, 4)
    check(_fn(name), [ints], grad=False)
    x = _inputs(name, (6, 5), "complex64").T  # transposed memory
    check(_fn(name, dim=0), [x], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ONE_D + TWO_D + N_D)
def test_gradcheck(name):
    """Finite differences in float64 / complex128, with a size change and a norm."""
    x = _inputs(name, (3, 4), "complex128", seed=1)
    t = ember.from_numpy(x).requires_grad_()
    size = {"n": 5} if name in ONE_D else {"s": (2, 6)}
    fn = getattr(ember.fft, name)
    assert ember.autograd.gradcheck(lambda a: fn(a, norm="ortho", **size), [t])
    assert ember.autograd.gradcheck(lambda a: fn(a), [t])


def test_double_backward():
    x = ember.from_numpy(_inputs("irfft", (6,), "complex128", seed=2)).requires_grad_()
    assert ember.autograd.gradgradcheck(lambda a: ember.fft.irfft(a, n=9), [x])
    r = ember.from_numpy(_inputs("rfft", (7,), "float64", seed=3)).requires_grad_()
    assert ember.autograd.gradgradcheck(lambda a: ember.fft.rfft(a).abs(), [r])


def test_grad_fn_names_match_torch():
    torch = pytest.importorskip("torch")
    for m in (ember, torch):
        x = m.ones(8, requires_grad=True)
        z = m.ones(5, dtype=m.complex64, requires_grad=True)
        names = [m.fft.fft(x).grad_fn.name(), m.fft.fft(z).grad_fn.name(),
                 m.fft.rfft(x).grad_fn.name(), m.fft.irfft(z).grad_fn.name(),
                 m.fft.hfft(z).grad_fn.name(), m.fft.ihfft(x).grad_fn.name()]
        if m is ember:
            ours = names
    assert ours == names


def test_dtypes():
    assert ember.fft.fft(ember.ones(4)).dtype is ember.complex64
    assert ember.fft.rfft(ember.ones(4, dtype=ember.float64)).dtype is ember.complex128
    assert ember.fft.irfft(ember.ones(3, dtype=ember.complex64)).dtype is ember.float32
    assert ember.fft.hfft(ember.ones(3)).dtype is ember.float32
    assert ember.fft.fft(ember.arange(4)).dtype is ember.complex64


@pytest.mark.parametrize("fn", [
    lambda m: m.fft.fft(m.ones(8), norm="bad"),
    lambda m: m.fft.fft(m.ones(8), n=0),
    lambda m: m.fft.fft(m.ones(8).half()),
    lambda m: m.fft.rfft(m.ones(8, dtype=m.complex64)),
    lambda m: m.fft.ihfft(m.ones(8, dtype=m.complex64)),
    lambda m: m.fft.fftn(m.ones(8), s=(4,), dim=(0, 1)),
    lambda m: m.fft.fftn(m.ones(2, 4), dim=(0, 0)),
    lambda m: m.fft.fft(m.ones(8), dim=3),
    lambda m: m.fft.fft(m.tensor(1.0)),
    lambda m: m.fft.fft(m.ones(0)),
    lambda m: m.fft.fft2(m.ones(8)),
    lambda m: m.fft.irfft(m.ones(1, dtype=m.complex64)),
    lambda m: m.fft.fft([1.0, 2.0]),
])
def test_errors_match_torch(fn):
    pytest.importorskip("torch")
    check_raises(fn)


@pytest.mark.parametrize("fn", [
    lambda m: m.fft.fftfreq(5), lambda m: m.fft.fftfreq(8, 0.1),
    lambda m: m.fft.fftfreq(4, dtype=m.float64), lambda m: m.fft.rfftfreq(7, 2.0),
    lambda m: m.fft.rfftfreq(6), lambda m: m.fft.fftfreq(1),
])
def test_frequencies(fn):
    pytest.importorskip("torch")
    check(fn, [], grad=False)


@pytest.mark.parametrize("fn", [
    lambda m, a: m.fft.fftshift(a), lambda m, a: m.fft.ifftshift(a),
    lambda m, a: m.fft.fftshift(a, dim=1), lambda m, a: m.fft.ifftshift(a, dim=(0, -1)),
    lambda m, a: m.fft.ifftshift(m.fft.fftshift(a)),
])
def test_shifts(fn):
    pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    check(fn, [C(3, 5).build(rng)])
    check(fn, [T(4, 7).build(rng)])


def test_round_trips():
    rng = np.random.default_rng(4)
    x = ember.from_numpy(rng.standard_normal((3, 10)))
    assert ember.allclose(ember.fft.irfft(ember.fft.rfft(x), n=10), x)
    assert ember.allclose(ember.fft.ifft(ember.fft.fft(x)).real, x)
    assert ember.allclose(ember.fft.irfftn(ember.fft.rfftn(x), s=x.shape), x)
    assert ember.allclose(ember.fft.hfft(ember.fft.ihfft(x), n=10), x)

"""stft / istft against torch: values and gradients (signal and window) over hop, window
length, centring and padding modes, one- and two-sided, normalized, align_to_window, batches;
istft round trips (with `length`); torch's errors; float64 gradcheck."""
import warnings

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

STFT_ARGS = [
    {"n_fft": 16},
    {"n_fft": 16, "hop_length": 3, "win_length": 10},
    {"n_fft": 15, "center": False},
    {"n_fft": 16, "normalized": True, "onesided": False},
    {"n_fft": 8, "pad_mode": "constant"},
    {"n_fft": 16, "pad_mode": "replicate", "hop_length": 5},
    {"n_fft": 16, "pad_mode": "circular"},
    {"n_fft": 16, "win_length": 8, "center": False, "align_to_window": True, "hop_length": 5},
]


def _signal(shape, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _window(args, dtype="float64"):
    """A raised-cosine window of the row's win_length that nowhere vanishes (so istft's
    overlap-add envelope does not either), as data: a differentiable input."""
    n = args.get("win_length", args["n_fft"])
    return (0.6 - 0.4 * np.cos(2 * np.pi * np.arange(n) / n)).astype(dtype)


@pytest.mark.parametrize("args", STFT_ARGS, ids=str)
@pytest.mark.parametrize("shape", [(50,), (2, 40)], ids=str)
def test_stft_against_torch(args, shape):
    pytest.importorskip("torch")
    check(lambda m, x, w: m.stft(x, window=w, return_complex=True, **args),
          [_signal(shape), _window(args)])


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_stft_dtypes_and_complex_input(dtype):
    pytest.importorskip("torch")
    args = {"n_fft": 12, "hop_length": 4}
    check(lambda m, x, w: m.stft(x, window=w, return_complex=True, **args),
          [_signal((30,), dtype), _window(args, "float32")], rtol=1e-4, atol=1e-5)


def test_stft_without_window_warns_as_torch():
    pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="window was not provided"):
        check(lambda m, x: m.stft(x, 8, return_complex=True), [_signal((20,))])


def test_stft_real_view_is_deprecated():
    pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        check(lambda m, x, w: m.stft(x, 8, window=w, return_complex=False),
              [_signal((20,)), _window({"n_fft": 8})])


ISTFT_ARGS = [
    ({"n_fft": 16}, None),
    ({"n_fft": 16}, 40),
    ({"n_fft": 16}, 60),
    ({"n_fft": 16, "hop_length": 3, "win_length": 10}, None),
    ({"n_fft": 16, "normalized": True, "onesided": False}, 33),
    ({"n_fft": 12, "hop_length": 3, "center": False}, None),
]


@pytest.mark.parametrize("args,length", ISTFT_ARGS, ids=str)
def test_istft_against_torch(args, length):
    pytest.importorskip("torch")

    def fn(m, x, w):
        spectrum = m.stft(x, window=w, return_complex=True, **args)
        return m.istft(spectrum * (1 + 0.5j), window=w, length=length, **args)

    check(fn, [_signal((2, 45)), _window(args)])


def test_istft_of_a_two_sided_spectrum_returns_complex():
    pytest.importorskip("torch")
    args = {"n_fft": 8, "hop_length": 2}
    check(lambda m, x, w: m.istft(m.stft(x, window=w, return_complex=True, **args), window=w,
                                  onesided=False, return_complex=True, **args),
          [_signal((24,), "complex128"), _window(args)])


@pytest.mark.parametrize("args", [{"n_fft": 16}, {"n_fft": 16, "hop_length": 3,
                                                  "win_length": 10},
                                  {"n_fft": 9, "hop_length": 2, "center": False}], ids=str)
def test_round_trip(args):
    x = ember.from_numpy(_signal((3, 41)))
    window = ember.hamming_window(args.get("win_length", args["n_fft"]), dtype=ember.float64)
    spectrum = ember.stft(x, window=window, return_complex=True, **args)
    stft_args = {k: v for k, v in args.items()}
    y = ember.istft(spectrum, window=window, length=41 if args.get("center", True) else None,
                    **stft_args)
    kept = y.shape[-1]
    if args.get("center", True):
        assert kept == 41
    assert ember.allclose(y, x[..., :kept])


def test_gradcheck():
    args = {"n_fft": 8, "hop_length": 3, "win_length": 6}
    x = ember.from_numpy(_signal((20,))).requires_grad_()
    w = ember.from_numpy(_window(args)).requires_grad_()
    assert ember.autograd.gradcheck(lambda x, w: ember.stft(x, window=w, return_complex=True,
                                                            **args), [x, w])
    spectrum = ember.stft(x.detach(), window=w.detach(), return_complex=True, **args)
    spectrum.requires_grad_()
    assert ember.autograd.gradcheck(lambda s, w: ember.istft(s, window=w, **args),
                                    [spectrum, w])


@pytest.mark.parametrize("fn", [
    lambda m: m.stft(m.ones(20), 8),
    lambda m: m.stft(m.ones(20), 8, center=True, align_to_window=True, return_complex=True),
    lambda m: m.stft(m.ones(20), 8, window=m.ones(9), return_complex=True),
    lambda m: m.stft(m.ones(20), 8, hop_length=0, return_complex=True),
    lambda m: m.stft(m.ones(1, 1, 20), 8, return_complex=True),
    lambda m: m.stft(m.ones(4), 8, center=False, return_complex=True),
    lambda m: m.stft(m.ones(20), 8, win_length=9, return_complex=True),
    lambda m: m.stft(m.ones(20, dtype=m.complex64), 8, return_complex=True, onesided=True),
    lambda m: m.istft(m.ones(5, 4), 8),
    lambda m: m.istft(m.ones(6, 4, dtype=m.complex64), 8),
    lambda m: m.istft(m.ones(5, 4, dtype=m.complex64), 8, window=m.zeros(8)),
])
def test_errors_match_torch(fn):
    pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(fn)

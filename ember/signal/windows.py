"""`ember.signal.windows` (torch.signal.windows): window functions for spectral analysis.

Each returns M samples of a window, symmetric by default (`sym=True`: w[n] = w[M - 1 - n], the
form for filter design); `sym=False` gives the periodic form used with FFTs (the symmetric
window of M + 1 samples without its last one). Values are computed in float64 with NumPy and
rounded once to `dtype` (float32 or float64, the default dtype by default), so a float32 window
can differ from torch's, which computes in float32, in the last bit.

    general_cosine   sum_k (-1)^k a_k cos(2 pi k n / N), N = M - 1 (M for sym=False)
    general_hamming  general_cosine with a = (alpha, 1 - alpha); hamming alpha = 0.54, hann 0.5
    blackman         a = (0.42, 0.5, 0.08);  nuttall  a = (0.3635819, 0.4891775, 0.1365995,
                     0.0106411)
    bartlett         the triangle 1 - |2n / N - 1|
    cosine           sin(pi (n + 1/2) / M)
    exponential      exp(-|n - center| / tau), centred by default
    gaussian         exp(-((n - N/2) / std)^2 / 2)
    kaiser           I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta)

`ember.hann_window` and the other `*_window` factories (periodic by default) are in
`ember/_windows.py`. Read next: `ops/spectral.py` (stft uses them).
"""
import math
import numbers

import numpy as np

from .. import _dtype as dt
from .._creation import _finish

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _check(name, M, dtype):
    """torch's checks: a non-negative int length and a float32/float64 dtype."""
    if isinstance(M, bool) or not isinstance(M, numbers.Integral):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if dtype not in (dt.float32, dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _positions(M, sym):
    """n = 0 .. M-1 and the denominator N: M - 1 for a symmetric window, M for a periodic one
    (the symmetric window of M + 1 samples, last sample dropped)."""
    return np.arange(M, dtype=np.float64), (M - 1 if sym else M)


def _window(name, M, sym, dtype, layout, device, requires_grad, values):
    """Build a window: `values(n, N)` on float64 positions; M = 0 and M = 1 as torch."""
    dtype = _check(name, M, dtype)
    if layout is not None and repr(layout) != "ember.strided":
        raise NotImplementedError(f"layout={layout} is not supported (only ember.strided)")
    if M == 0:
        array = np.zeros(0)
    elif M == 1:
        array = np.ones(1)
    else:
        array = values(*_positions(M, sym))
    return _finish(array, dtype, device, requires_grad)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """sum_k (-1)^k a[k] cos(2 pi k n / N): the family of hann, hamming, blackman, nuttall."""
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")

    def values(n, N):
        return sum((-1) ** k * c * np.cos(2 * math.pi * k * n / N) for k, c in enumerate(a))
    return _window("general_cosine", M, sym, dtype, layout, device, requires_grad, values)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / N)."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hamming window: general_hamming with alpha = 0.54."""
    return general_hamming(M, alpha=0.54, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window: 0.5 - 0.5 cos(2 pi n / N) = sin^2(pi n / N)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window 1 - |2n / N - 1| (zero at both ends when symmetric)."""
    return _window("bartlett", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / N - 1))


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """The cosine (sine) window sin(pi (n + 1/2) / M) (M + 1 for sym=False)."""
    return _window("cosine", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: np.sin(math.pi * (n + 0.5) / (N + 1)))


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None,
                requires_grad=False):
    """exp(-|n - center| / tau); `center` defaults to the middle, (M - 1) / 2 (M / 2 for
    sym=False), and may only be given for sym=False, as torch."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")

    def values(n, N):
        middle = N / 2 if center is None else center
        return np.exp(-np.abs(n - middle) / tau)
    return _window("exponential", M, sym, dtype, layout, device, requires_grad, values)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None,
             requires_grad=False):
    """exp(-((n - N / 2) / std)^2 / 2)."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window("gaussian", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: np.exp(-((n - N / 2) / std) ** 2 / 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None,
           requires_grad=False):
    """I0(beta sqrt(1 - (2n / N - 1)^2)) / I0(beta), I0 the modified Bessel function."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", M, sym, dtype, layout, device, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / N - 1) ** 2, 0, 1)))
                   / np.i0(beta))

"""`ember.fft`: discrete Fourier transforms (torch.fft), differentiable.

Each function resolves its arguments the way torch does, then runs one of the three primitives
in `ops/fft.py` (c2c, r2c, c2r), sometimes with a `conj` around it:

    fft, fft2, fftn          complex input: c2c forward; real input: r2c, not one-sided
    ifft, ifft2, ifftn       complex input: c2c inverse; real input: conj(r2c), which is the same
    rfft, rfft2, rfftn       real input only: r2c one-sided (the last dim keeps n//2 + 1 entries)
    irfft, irfft2, irfftn    c2r: a one-sided spectrum to a real signal (n = 2(m - 1) by default)
    hfft, hfft2, hfftn       c2r of conj(input), scaled as a forward transform
    ihfft, ihfft2, ihfftn    conj(r2c), scaled as an inverse transform (real input only)

`n` (1-d) or `s` (n-d) is the signal size of each transformed dim: the input is cut or
zero-padded to it first (for the c2r family, the one-sided last dim to s[-1] // 2 + 1), with
ordinary ops, so the gradient reaches the original input. `dim` defaults to the last dim, the
last two, or -- for the n-d functions -- the last len(s) dims (every dim without `s`).
`norm` is "backward" (the default: the inverse scales by 1/n), "forward" or "ortho".

Real inputs give complex64 for float32 (and integers, via the default float dtype) and
complex128 for float64; half precision is refused as on torch's CPU. `fftfreq`, `rfftfreq`,
`fftshift` and `ifftshift` are the usual helpers.

Read next: `ops/spectral.py` (stft, istft), `signal/windows.py`.
"""
import operator

import numpy as np

from . import _dtype as dt
from ._creation import _finish
from ._tensor import Tensor
from ._utils import wrap_dim
from .ops.complex import conj
from .ops.fft import _DUAL, fft_c2c, fft_c2r, fft_r2c

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


# ----------------------------------------------------------------------------------------------
# arguments


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _float_or_complex(name, input, real_only=False):
    """The input promoted as torch does: integers and bools to the default float dtype; half
    precision refused; `real_only` functions refuse complex input."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dtype = input.dtype
    if real_only and dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{dt.scalar_name(dtype)}")
    if dtype in (dt.float16, dt.bfloat16):
        raise RuntimeError(f"Unsupported dtype {dt.scalar_name(dtype)}")
    if dtype.category < dt.FLOATING:
        return input.to(dt.get_default_dtype())
    return input


def _dims_and_sizes(input, s, dim, default_dims):
    """torch's rules: both given (same length), or the last len(s) dims, or the sizes of the
    given dims; -1 in s keeps a dim's size. Returns (dims, sizes), sizes None when unset."""
    if s is not None:
        s = [operator.index(n) for n in s]
    if dim is not None:
        dims = [wrap_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > input.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{input.ndim} dimensions.")
        dims = list(range(input.ndim - len(s), input.ndim))
    else:
        dims = [wrap_dim(d, input.ndim) for d in default_dims(input.ndim)]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [input.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    return dims, s


def _check_sizes(sizes):
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(input, dims, sizes):
    """Cut or zero-pad `input` to `sizes` along `dims` (differentiable, as torch does)."""
    from .ops.nn.padding import constant_pad_nd
    from .ops.shape import narrow

    pad = [0, 0] * input.ndim
    for d, n in zip(dims, sizes):
        if n < input.shape[d]:
            input = narrow(input, d, 0, n)
        elif n > input.shape[d]:
            pad[2 * (input.ndim - 1 - d) + 1] = n - input.shape[d]
    return constant_pad_nd(input, pad) if any(pad) else input


def _one_dim(n, dim):
    return None if n is None else (n,), (dim,)


def _all_dims(ndim):
    return range(ndim)


def _last_two(ndim):
    return (-2, -1)


# ----------------------------------------------------------------------------------------------
# the three families


def _c2c(name, input, s, dim, norm, forward, default_dims):
    """fft / ifft over dims: c2c for complex input, r2c (not one-sided) for real input."""
    input = _float_or_complex(name, input)
    dims, sizes = _dims_and_sizes(input, s, dim, default_dims)
    sizes = [input.shape[d] for d in dims] if sizes is None else sizes
    _check_sizes(sizes)
    input = _resize(input, dims, sizes)
    norm = _norm(norm)
    if input.dtype.is_complex:
        return fft_c2c(input, dims=tuple(dims), norm=norm, forward=forward)
    if forward:
        return fft_r2c(input, dims=tuple(dims), norm=norm, onesided=False)
    # the inverse transform of a real signal is the conjugate of its forward transform
    return conj(fft_r2c(input, dims=tuple(dims), norm=_DUAL[norm], onesided=False))


def _r2c(name, input, s, dim, norm, forward, default_dims):
    """rfft (forward) / ihfft (inverse): the one-sided spectrum of a real signal."""
    input = _float_or_complex(name, input, real_only=True)
    dims, sizes = _dims_and_sizes(input, s, dim, default_dims)
    sizes = [input.shape[d] for d in dims] if sizes is None else sizes
    _check_sizes(sizes)
    input = _resize(input, dims, sizes)
    norm = _norm(norm)
    if forward:
        return fft_r2c(input, dims=tuple(dims), norm=norm, onesided=True)
    return conj(fft_r2c(input, dims=tuple(dims), norm=_DUAL[norm], onesided=True))


def _c2r(name, input, s, dim, norm, forward, default_dims):
    """irfft (inverse) / hfft (forward, of the conjugate): a real signal from a one-sided
    spectrum. The last dim's signal size defaults to 2 (m - 1)."""
    input = _float_or_complex(name, input)
    dims, sizes = _dims_and_sizes(input, s, dim, default_dims)
    if sizes is None:
        sizes = [input.shape[d] for d in dims[:-1]] + [2 * (input.shape[dims[-1]] - 1)]
    _check_sizes(sizes)
    last = sizes[-1]
    input = _resize(input, dims, sizes[:-1] + [last // 2 + 1])
    if not input.dtype.is_complex:
        input = input.to(input.dtype.to_complex())
    norm = _norm(norm)
    if forward:  # hfft: the forward transform of a Hermitian signal
        input, norm = conj(input), _DUAL[norm]
    return fft_c2r(input, dims=tuple(dims), norm=norm, last_size=last)


def _define(name, family, forward, kind):
    """One public function of torch.fft with its exact signature (`kind`: 1-d, 2-d or n-d)."""
    if kind == "1":
        def function(input, n=None, dim=-1, norm=None):
            s, dims = _one_dim(n, dim)
            return family(name, input, s, dims, norm, forward, None)
    elif kind == "2":
        def function(input, s=None, dim=(-2, -1), norm=None):
            return family(name, input, s, dim, norm, forward, _last_two)
    else:
        def function(input, s=None, dim=None, norm=None):
            return family(name, input, s, dim, norm, forward, _all_dims)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = _DOCS[name]
    return function


_DOCS = {
    "fft": "The 1-d discrete Fourier transform along `dim`.",
    "ifft": "The inverse of fft (scaled by 1/n with the default norm).",
    "fft2": "The 2-d FFT over `dim` (the last two dims by default).",
    "ifft2": "The inverse of fft2.",
    "fftn": "The n-d FFT over `dim` (every dim, or the last len(s) dims).",
    "ifftn": "The inverse of fftn.",
    "rfft": "The FFT of a real signal, one-sided: n // 2 + 1 entries along `dim`.",
    "irfft": "The inverse of rfft: a real signal of n = 2 (m - 1) samples by default.",
    "rfft2": "The 2-d FFT of a real signal, one-sided along the last of `dim`.",
    "irfft2": "The inverse of rfft2.",
    "rfftn": "The n-d FFT of a real signal, one-sided along the last of `dim`.",
    "irfftn": "The inverse of rfftn.",
    "hfft": "The FFT of a Hermitian signal given by its first half: a real result.",
    "ihfft": "The inverse of hfft: the first half of the inverse FFT of a real signal.",
    "hfft2": "The 2-d hfft (Hermitian along the last of `dim`).",
    "ihfft2": "The inverse of hfft2.",
    "hfftn": "The n-d hfft (Hermitian along the last of `dim`).",
    "ihfftn": "The inverse of hfftn.",
}

fft = _define("fft", _c2c, True, "1")
ifft = _define("ifft", _c2c, False, "1")
fft2 = _define("fft2", _c2c, True, "2")
ifft2 = _define("ifft2", _c2c, False, "2")
fftn = _define("fftn", _c2c, True, "n")
ifftn = _define("ifftn", _c2c, False, "n")
rfft = _define("rfft", _r2c, True, "1")
ihfft = _define("ihfft", _r2c, False, "1")
rfft2 = _define("rfft2", _r2c, True, "2")
ihfft2 = _define("ihfft2", _r2c, False, "2")
rfftn = _define("rfftn", _r2c, True, "n")
ihfftn = _define("ihfftn", _r2c, False, "n")
irfft = _define("irfft", _c2r, False, "1")
hfft = _define("hfft", _c2r, True, "1")
irfft2 = _define("irfft2", _c2r, False, "2")
hfft2 = _define("hfft2", _c2r, True, "2")
irfftn = _define("irfftn", _c2r, False, "n")
hfftn = _define("hfftn", _c2r, True, "n")


# ----------------------------------------------------------------------------------------------
# helpers: sample frequencies and shifts


def _frequencies(values, n, d, dtype, device, requires_grad):
    dtype = dt.get_default_dtype() if dtype is None else dtype
    return _finish(values / (d * n), dtype, device, requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point FFT: [0, 1, ..., -(n // 2), ..., -1] / (d n)."""
    values = np.fft.fftfreq(n) * n  # the integers, computed in float64
    return _frequencies(values, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of rfft's n // 2 + 1 outputs: [0, 1, ..., n // 2] / (d n)."""
    values = np.arange(n // 2 + 1, dtype=np.float64)
    return _frequencies(values, n, d, dtype, device, requires_grad)


def _shift(input, dim, sign):
    from .ops.shape import roll

    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    dims = [wrap_dim(d, input.ndim) for d in dims]
    if not dims:
        return input
    return roll(input, [sign * (input.shape[d] // 2) for d in dims], dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the middle: roll each of `dim` (every dim) by n // 2."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """Undo fftshift: roll each of `dim` (every dim) by -(n // 2)."""
    return _shift(input, dim, -1)


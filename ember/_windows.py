"""torch's window factories: `hann_window`, `hamming_window`, `blackman_window`,
`bartlett_window`, `kaiser_window`.

They are ember.signal.windows' windows with torch's older signature: `periodic=True` by default
(the form for FFTs, `sym=False`), any floating dtype, and RuntimeError for a negative length.
Read next: `signal/windows.py`.
"""
import numbers

from . import _dtype as dt
from .signal import windows

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _check(name, window_length, dtype):
    if isinstance(window_length, bool) or not isinstance(window_length, numbers.Integral):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    return dtype


def _make(name, window, window_length, periodic, dtype, layout, device, requires_grad, **args):
    """`window` computed in float64 and cast once to `dtype` (which may be half precision
    here, unlike torch.signal.windows)."""
    dtype = _check(name, window_length, dtype)
    values = window(window_length, sym=not periodic, dtype=dt.float64, layout=layout,
                    device=device, **args)
    result = values.to(dtype)
    return result.requires_grad_() if requires_grad else result


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False, pin_memory=False):
    """The Hann window, periodic by default (see ember.signal.windows.hann)."""
    return _make("hann_window", windows.hann, window_length, periodic, dtype, layout, device,
                 requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False, pin_memory=False):
    """alpha - beta cos(2 pi n / N), periodic by default."""
    return _make("hamming_window", windows.general_cosine, window_length, periodic, dtype,
                 layout, device, requires_grad, a=[alpha, beta])


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False, pin_memory=False):
    """The Blackman window, periodic by default."""
    return _make("blackman_window", windows.blackman, window_length, periodic, dtype, layout,
                 device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False, pin_memory=False):
    """The triangular window, periodic by default."""
    return _make("bartlett_window", windows.bartlett, window_length, periodic, dtype, layout,
                 device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False, pin_memory=False):
    """The Kaiser window with shape parameter `beta`, periodic by default."""
    return _make("kaiser_window", windows.kaiser, window_length, periodic, dtype, layout,
                 device, requires_grad, beta=beta)

"""`stft` and `istft`: short-time Fourier transforms, written with ordinary ops (so both are
differentiable in the signal and in the window).

    stft   pad the signal (center=True: n_fft // 2 on each side, `pad_mode`), cut it into
           frames of n_fft samples every hop_length (`unfold`, a view), multiply each by the
           window (zero-padded to n_fft, centred), FFT each frame (rfft when one-sided);
           result (B?, n_freq, n_frames).
    istft  the inverse: inverse FFT of each frame (irfft of its first n_fft // 2 + 1 bins
           for a real result, even from a two-sided spectrum, as torch), times the window,
           overlap-added into the
           signal (`index_add`), divided by the overlap-added squared window (the "window
           envelope", which must not vanish: torch's NOLA condition), then trimmed to `length`.

`normalized=True` scales each frame's transform by n_fft^-1/2 (norm="ortho"). With
center=False, `align_to_window=True` starts each window -- not each n_fft-frame -- at
t * hop_length (frames then reach win_length, not n_fft, past the last hop).

Read next: `../fft.py`.
"""
import warnings

from .._tensor import Tensor
from ._op import export


def _check_stft_args(name, input, n_fft, hop_length, win_length, window):
    """Defaults and torch's checks: hop = n_fft // 4, win_length = n_fft, 0 < n_fft, 0 < hop,
    0 < win_length <= n_fft, a 1-d window of win_length."""
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if n_fft <= 0:
        raise RuntimeError(f"{name}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{name}: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{name}: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.shape)}")
    return hop_length, win_length


def _padded_window(window, win_length, n_fft, like):
    """The window as n_fft samples: ones when None, zero-padded on both sides (centred)."""
    from .._creation import ones
    from .nn.padding import constant_pad_nd

    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    left = (n_fft - win_length) // 2
    if left or win_length < n_fft:
        window = constant_pad_nd(window, [left, n_fft - win_length - left])
    return window


@export(method=True)
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform of a signal (L) or batch (B, L): (B?, n_freq, n_frames),
    complex (or its real view with a last dim of 2 for the deprecated return_complex=False)."""
    from .. import fft
    from .nn.padding import pad

    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    return_complex = _stft_return_complex(return_complex, complex_in)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got a {input.ndim}D tensor")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied, which "
                      "is known to cause spectral leakage. Other windows such as "
                      "torch.hann_window or torch.hamming_window are recommended to reduce "
                      "spectral leakage.", UserWarning, stacklevel=2)
    hop_length, win_length = _check_stft_args("stft", input, n_fft, hop_length, win_length,
                                              window)
    signal = input.reshape(-1, 1, input.shape[-1])  # (B, 1, L): the form F.pad reflects
    if center:
        signal = pad(signal, [n_fft // 2, n_fft // 2], mode=pad_mode)
    elif align_to_window:  # the window, not the n_fft-frame, starts at t * hop
        left = (n_fft - win_length) // 2
        signal = pad(signal, [left, n_fft - win_length - left])
    signal = signal.reshape(signal.shape[0], signal.shape[-1])
    if not 0 < n_fft <= signal.shape[-1]:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {signal.shape[-1]} (the padded "
                           f"input length), but got n_fft={n_fft}")
    frames = signal.unfold(-1, n_fft, hop_length) * _padded_window(window, win_length, n_fft,
                                                                    signal)
    onesided = not complex_in if onesided is None else onesided
    if onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    spectrum = (fft.rfft if onesided else fft.fft)(frames, norm=norm).transpose(1, 2)
    if input.ndim == 1:
        spectrum = spectrum.squeeze(0)
    return spectrum if return_complex else _view_as_real_deprecated(spectrum)


def _stft_return_complex(return_complex, complex_in):
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return True
    return return_complex


def _view_as_real_deprecated(spectrum):
    from .complex import view_as_real

    warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, "
                  "stft will return complex tensors for all inputs, and return_complex=False "
                  "will raise an error.\nNote: you can still call torch.view_as_real on the "
                  "complex output to recover the old return format.", UserWarning,
                  stacklevel=3)
    return view_as_real(spectrum)


@export(method=True)
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of stft: a signal (B?, L) from a complex (B?, n_freq, n_frames) spectrum,
    by overlap-add. `length` trims (or zero-pads) the result to that many samples."""
    from .. import fft

    if not isinstance(input, Tensor) or not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"istft: expected a tensor with 2 or 3 dimensions of complex "
                           f"dtype, but got {input.ndim}")
    hop_length, win_length = _check_stft_args("istft", input, n_fft, hop_length, win_length,
                                              window)
    spectrum = input.unsqueeze(0) if input.ndim == 2 else input
    n_freq, n_frames = spectrum.shape[-2], spectrum.shape[-1]
    onesided = n_freq != n_fft if onesided is None else onesided
    _check_istft_sizes(n_fft, n_freq, onesided, return_complex, window)
    norm = "ortho" if normalized else "backward"
    columns = spectrum.transpose(1, 2)  # (B, n_frames, n_freq)
    if return_complex:
        frames = fft.ifft(columns, n=n_fft, norm=norm)
    else:  # a real signal reads only the one-sided half of a two-sided spectrum, as torch
        frames = fft.irfft(columns[..., :n_fft // 2 + 1], n=n_fft, norm=norm)
    window = _padded_window(window, win_length, n_fft, frames)
    signal = _overlap_add(frames * window, hop_length)
    envelope = _overlap_add((window * window.conj()).real.expand(n_frames, n_fft), hop_length)
    return _trim(signal, envelope, n_fft, hop_length, n_frames, center, length, input.ndim)


def _check_istft_sizes(n_fft, n_freq, onesided, return_complex, window):
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"istft: expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {n_freq}")
    if return_complex and onesided:
        raise RuntimeError("cannot have onesided output if window or input is complex")
    if window is not None and window.dtype.is_complex and not return_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")


def _overlap_add(frames, hop_length):
    """sum_t frames[..., t, k] placed at sample t * hop + k: (..., n_frames, n) -> (..., L)."""
    from .._creation import arange

    n_frames, n = frames.shape[-2], frames.shape[-1]
    positions = (arange(n_frames, device=frames.device).unsqueeze(1) * hop_length
                 + arange(n, device=frames.device)).reshape(-1)
    total = n + hop_length * (n_frames - 1)
    flat = frames.reshape(frames.shape[:-2] + (n_frames * n,))
    out = flat.new_zeros(frames.shape[:-2] + (total,))
    return out.index_add(-1, positions, flat)


def _trim(signal, envelope, n_fft, hop_length, n_frames, center, length, ndim):
    """Cut the padding (n_fft // 2 each side when centred, or to `length`), divide by the
    window envelope, and zero-pad to `length` when it asks for more than the frames hold."""
    from .nn.padding import constant_pad_nd

    expected = n_fft + hop_length * (n_frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    end = min(end, expected)
    signal, envelope = signal[..., start:end], envelope[start:end]
    smallest = envelope.abs().min().item() if envelope.numel() else 1.0
    if smallest < 1e-11:
        raise RuntimeError(f"istft: window overlap add min: {smallest:g}; the window does not "
                           "satisfy the nonzero overlap-add (NOLA) condition")
    signal = signal / envelope
    if length is not None and signal.shape[-1] < length:
        signal = constant_pad_nd(signal, [0, length - signal.shape[-1]])
    return signal.squeeze(0) if ndim == 2 else signal

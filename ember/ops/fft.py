"""The three FFT primitives behind `ember.fft`, as torch has them:

    fft_c2c   complex -> complex over `dims`, forward or inverse
    fft_r2c   real -> complex; `onesided` keeps the first n//2 + 1 entries of the last dim
    fft_c2r   complex (last dim halved) -> real of `last_size` along the last dim

Every public function (fft, rfft2, hfftn, ...) is one of these, maybe with a `conj` around it,
after `ember/fft.py` has cut or zero-padded the input to the requested sizes with ordinary
(differentiable) ops, so a primitive always transforms its input's own sizes.

`norm` follows NumPy and torch: "backward" scales the inverse transform by 1/n, "forward" the
forward one, "ortho" both by 1/sqrt(n). Each transform is linear, so its gradient is its
adjoint (the conjugate transpose, in torch's convention for complex gradients): the transform
in the other direction with the same scaling -- the *dual* norm, since NumPy names a scaling by
the direction it applies to:

    c2c   the c2c of g in the other direction;
    r2c   the full inverse c2c of g, zero-padded back to n along the last dim when onesided;
          the input is real, so the gradient is its real part;
    c2r   r2c of g (onesided), with every entry that stands for two in the full spectrum
          (1 <= k <= (n - 1) // 2) doubled: c2r reads X[k] and its mirror conj(X[k]).

NumPy's pocketfft keeps float32 as complex64 (NumPy >= 2); the kernels cast all the same, so a
result never comes back in double precision by surprise.

Read next: `spectral.py` (stft and istft), then `../fft.py` (the public functions).
"""
import numpy as np

from .. import _dtype as dt
from ._op import defop

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_of(a):
    return dt._BY_NUMPY[a.dtype].to_complex().np


def _c2c_kernel(xp, a, *, dims, norm, forward):
    transform = xp.fft.fftn if forward else xp.fft.ifftn
    return transform(a, axes=dims, norm=norm).astype(a.dtype, copy=False)


def _r2c_kernel(xp, a, *, dims, norm, onesided):
    transform = xp.fft.rfftn if onesided else xp.fft.fftn
    return transform(a, axes=dims, norm=norm).astype(_complex_of(a), copy=False)


def _c2r_kernel(xp, a, *, dims, norm, last_size):
    sizes = [a.shape[d] for d in dims[:-1]] + [last_size]
    out = xp.fft.irfftn(a, s=sizes, axes=dims, norm=norm)
    return out.astype(dt._BY_NUMPY[a.dtype].to_real().np, copy=False)


def _c2c_rule(g, dims, norm, forward):
    return (fft_c2c(g, dims=dims, norm=_DUAL[norm], forward=not forward),)


def _r2c_rule(g, a_shape, dims, norm, onesided):
    if onesided:
        from .nn.padding import constant_pad_nd

        missing = a_shape[dims[-1]] - g.shape[dims[-1]]
        pad = [0, 0] * (g.ndim - 1 - dims[-1]) + [0, missing]
        g = constant_pad_nd(g, pad)
    return (fft_c2c(g, dims=dims, norm=_DUAL[norm], forward=False).real,)


def _c2r_rule(g, a_shape, dims, norm, last_size):
    gI = fft_r2c(g, dims=dims, norm=_DUAL[norm], onesided=True)
    return (gI * _mirror_weights(a_shape[dims[-1]], last_size, dims[-1], g),)


def _mirror_weights(m, n, dim, like):
    """2 for the entries of a one-sided spectrum (length m) that stand for a mirrored pair in
    the full spectrum of length n, 1 for X[0] and the Nyquist entry; shaped to broadcast along
    `dim`."""
    from .._creation import tensor

    weights = np.ones(m, dtype=like.dtype.np)
    weights[1:(n - 1) // 2 + 1] = 2
    shape = [1] * like.ndim
    shape[dim] = m
    return tensor(weights.reshape(shape), device=like.device)


# name | promotion | forward | backward (torch's node names)
fft_c2c = defop("fft_c2c", "none", _c2c_kernel, _c2c_rule, node_name="FftC2CBackward0")
fft_r2c = defop("fft_r2c", "none", _r2c_kernel, _r2c_rule, node_name="FftR2CBackward0")
fft_c2r = defop("fft_c2r", "none", _c2r_kernel, _c2r_rule, node_name="FftC2RBackward0")

"""Rows for ember/ops/fft.py: the three FFT primitives, through the public functions that run
them (tests/test_fft.py covers every public function, its arguments and its errors)."""
from ._spec import C, Spec, T

SPECS = [
    Spec("fft_c2c", lambda m, a: (m.fft.fft(a), m.fft.ifft2(a, norm="ortho")),
         [(C(3, 4),), (C(4, 3, t=True),), (C(2, 5, dtype="complex128"),)], ops=["fft_c2c"]),
    Spec("fft_r2c", lambda m, a: (m.fft.rfft(a), m.fft.fft(a, norm="forward"),
                                  m.fft.rfftn(a, s=(2, 6))),
         [(T(3, 4),), (T(4, 3, t=True),), (T(2, 5, dtype="float64"),)], ops=["fft_r2c"]),
    Spec("fft_c2r", lambda m, a: (m.fft.irfft(a), m.fft.irfft2(a, s=(3, 5), norm="ortho")),
         [(C(3, 4),), (C(4, 3, t=True),), (C(2, 5, dtype="complex128"),)], ops=["fft_c2r"]),
]

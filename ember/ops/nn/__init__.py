"""Neural-network primitives: the kernels and rules behind `ember.nn.functional`.

One module per family; each defines its ops and the public `F.*` functions (listed in the
module's `__all__`), which `ember/nn/functional.py` re-exports.

    linear.py      linear, bilinear
    conv.py        conv1d/2d/3d and transposed convolutions (im2col + GEMM)
"""
from . import conv, linear  # noqa: F401

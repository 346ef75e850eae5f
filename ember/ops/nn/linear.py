"""`F.linear` and `F.bilinear`.

`linear` is built as torch builds it, so that its graph is torch's: `addmm(bias, input,
weight.t())` for a matrix input with a bias -- one GEMM against the transposed weight (a view,
no copy), the bias added in place -- whose node is AddmmBackward0 with next_functions (bias,
input, TBackward0 of the weight); MmBackward0 without a bias; other contiguous inputs folded to
their rows and viewed back (ViewBackward0 on top), the rest through matmul (UnsafeViewBackward0)
and an in-place bias add, as torch does.

Read next: the other families in this package.
"""
import math

from .._op import export
from ..linalg import _addmm, matmul

__all__ = ["linear", "bilinear"]


def linear(input, weight, bias=None):
    """y = x @ weight.T + bias, for input (*, in_features) and weight (out, in)."""
    if input.ndim == 0 or weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): input must have at least 1 dim and weight 1 or 2 dims, "
                           f"got {input.ndim} and {weight.ndim}")
    if weight.ndim == 1 or input.shape[-1] != weight.shape[-1]:
        if weight.ndim == 2:
            rows = input.numel() // input.shape[-1] if input.shape[-1] else 0
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                               f"{input.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})")
        out = input @ weight
        return out if bias is None else out + bias
    if input.dtype is not weight.dtype or (bias is not None and bias.dtype is not input.dtype):
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{input.dtype} and {weight.dtype}")
    weight_t = weight.t()
    if bias is None:
        return matmul(input, weight_t)
    if input.ndim == 2:
        return _addmm(bias, input, weight_t, beta=1, alpha=1)
    if bias.ndim == 1 and input.is_contiguous():
        rows = input.view(math.prod(input.shape[:-1]), input.shape[-1])
        return _addmm(bias, rows, weight_t, beta=1, alpha=1).view(*input.shape[:-1],
                                                                 weight.shape[0])
    return matmul(input, weight_t).add_(bias)


@export
def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k, with weight (out, in1, in2)."""
    from ...ops.linalg import einsum

    out = einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias

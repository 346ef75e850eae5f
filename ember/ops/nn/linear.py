"""`F.linear`, `F.bilinear` and `F.grouped_mm`.

`linear` is built as torch builds it, so that its graph is torch's: `addmm(bias, input,
weight.t())` for a matrix input with a bias -- one GEMM against the transposed weight (a view,
no copy), the bias added in place -- whose node is AddmmBackward0 with next_functions (bias,
input, TBackward0 of the weight); MmBackward0 without a bias; other contiguous inputs folded to
their rows and viewed back (ViewBackward0 on top), the rest through matmul (UnsafeViewBackward0)
and an in-place bias add, as torch does.

Read next: the other families in this package.
"""
import math

from ... import _dtype as dt
from .._dispatch import autocast_args
from .._op import export
from ..linalg import _addmm, matmul

__all__ = ["linear", "bilinear", "grouped_mm"]


def linear(input, weight, bias=None):
    """y = x @ weight.T + bias, for input (*, in_features) and weight (out, in)."""
    input, weight, bias = autocast_args("linear", input, weight, bias)
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


# ----------------------------------------------------------------------------------------------
# grouped_mm: one product per group (mixture-of-experts layers), groups given by `offs`, the
# running ends of each group's rows, columns or inner dim -- built from slices, matmul and
# cat, so it differentiates as its pieces


def _group_bounds(offs, size):
    ends = [int(e) for e in offs.tolist()]
    return list(zip([0] + ends[:-1], ends)), (ends[-1] if ends else 0)


def _rest(like, rows, cols):
    return like.new_zeros((rows, cols))


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Grouped products: 2-d A with 3-d B (A's rows split by offs, group g times B[g]), 3-d A
    with 2-d B (B's columns split), 2-d with 2-d (the inner dim split: one (M, N) result per
    group) or a batched 3-d by 3-d product (no offs). Rows or columns past the last offset
    are zero (torch leaves them uninitialised)."""
    from ..shape import cat, stack

    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    two_d = mat_a.ndim == 2 or mat_b.ndim == 2
    if (offs is None) == two_d:
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None and offs.dtype is not dt.int32:
        raise RuntimeError("Offsets have to be int32")
    if out_dtype is not None:
        mat_a, mat_b = mat_a.to(out_dtype), mat_b.to(out_dtype)
    if not two_d:
        return mat_a @ mat_b
    if mat_a.ndim == 2 and mat_b.ndim == 3:
        groups, end = _group_bounds(offs, mat_a.shape[0])
        pieces = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(groups)]
        pieces.append(_rest(mat_a, mat_a.shape[0] - end, mat_b.shape[-1]))
        return cat(pieces, 0)
    if mat_a.ndim == 3 and mat_b.ndim == 2:
        groups, end = _group_bounds(offs, mat_b.shape[1])
        pieces = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(groups)]
        pieces.append(_rest(mat_a, mat_a.shape[1], mat_b.shape[1] - end))
        return cat(pieces, 1)
    groups, _ = _group_bounds(offs, mat_a.shape[1])
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in groups])

"""`F.linear`, `F.bilinear` and `F.grouped_mm`.

`linear` is one op rather than matmul + add: the forward is a single GEMM against the
transposed weight (a view, no copy) plus a broadcast bias, and the backward computes exactly
the gradients that are needed.

Read next: the other families in this package.
"""
from ... import _dtype as dt
from ..._functorch import batch_rules
from .._dispatch import autocast_args
from .._op import export, op

_HALF = (dt.float16.np, dt.bfloat16.np)
_F32 = dt.float32.np

__all__ = ["linear", "bilinear", "grouped_mm"]


@op("none", name="linear", node_name="AddmmBackward0")
def _linear(xp, x, weight, bias):
    # (*, in) folded to one (rows, in) matrix: one GEMM, not one per leading index. NumPy has
    # no BLAS for float16/bfloat16: those multiply in float32 and round once, as torch's CPU
    # kernels do (and keep their dtype: NumPy's matmul would hand bfloat16 back as float32)
    dtype = x.dtype
    half = dtype in _HALF
    if half:
        x, weight = x.astype(_F32), weight.astype(_F32)
    out = xp.matmul(x.reshape(-1, x.shape[-1]), weight.T)
    if bias is not None:
        out += bias
    if half:
        out = out.astype(dtype)
    return out.reshape(x.shape[:-1] + (weight.shape[0],))


@_linear.grad
def _linear(g, x, weight, needs_input_grad):
    grad_x = grad_w = grad_b = None
    if needs_input_grad[0]:
        grad_x = (g.reshape(-1, g.shape[-1]) @ weight.conj()).reshape(x.shape)
    if needs_input_grad[1]:
        out_features, in_features = weight.shape
        grad_w = g.reshape(-1, out_features).mT @ x.reshape(-1, in_features).conj()
    if needs_input_grad[2]:
        grad_b = g.reshape(-1, g.shape[-1]).sum(0) if g.ndim else g
    return grad_x, grad_w, grad_b


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
    return _linear(input, weight, bias)


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

# forward mode and vmap (see ops/_op.py). linear is linear in x and in the weight, plus the
# bias. Batched inputs are more leading dims (one GEMM still); per-sample weights (a vmap over
# models) make it one batched matmul.


def _linear_jvp(x_t, weight_t, bias_t, x, weight):
    total = _linear(x_t, weight, None) if x_t is not None else None
    if weight_t is not None:
        part = _linear(x, weight_t, None)
        total = part if total is None else total + part
    if bias_t is not None:
        total = bias_t if total is None else total + bias_t
    return total


def _linear_batch(op, values, batched, attrs):
    x, weight, bias = values
    if not batched[1] and not batched[2]:
        return _linear(x, weight, bias)
    from ..linalg import _product

    size = batch_rules.size_of(values, batched)
    out = _product(x, batch_rules.as_batched(weight, batched[1], size).mT, (batched[0], True))
    if bias is not None:
        out = out + (batch_rules.pad(bias, out.ndim - 1) if batched[2] else bias)
    return out


_linear.jvp(_linear_jvp).batch(_linear_batch)

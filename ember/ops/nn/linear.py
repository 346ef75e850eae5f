"""`F.linear` and `F.bilinear`.

`linear` is one op rather than matmul + add: the forward is a single GEMM against the
transposed weight (a view, no copy) plus a broadcast bias, and the backward computes exactly
the gradients that are needed.

Read next: the other families in this package.
"""
from ..._functorch import batch_rules
from .._op import export, op

__all__ = ["linear", "bilinear"]


@op("none", name="linear", node_name="AddmmBackward0")
def _linear(xp, x, weight, bias):
    # (*, in) folded to one (rows, in) matrix: one GEMM, not one per leading index
    out = xp.matmul(x.reshape(-1, x.shape[-1]), weight.T)
    if bias is not None:
        out += bias
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

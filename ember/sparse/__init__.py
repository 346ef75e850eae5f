"""`ember.sparse` (torch.sparse): products and sums of sparse COO tensors.

The tensors themselves, and what they support, are in `ember/_sparse.py`. ember has the COO
layout only (no CSR/CSC/BSR/BSC, no semi-structured sparsity).
"""
import warnings

from .. import _dtype as dt
from .._sparse import sparse_coo_tensor, sparse_mm, sparse_sum

__all__ = ["mm", "sum", "addmm", "FloatTensor", "DoubleTensor", "LongTensor"]


def mm(mat1, mat2, reduce="sum"):
    """`mat1 @ mat2` where one operand is a 2-d sparse COO tensor: a dense result; gradients
    reach the sparse operand's values (a sparse gradient with its positions) and the dense
    operand. Only `reduce="sum"` (torch's default) is supported."""
    if reduce != "sum":
        raise NotImplementedError(f"ember.sparse.mm(reduce={reduce!r}): only 'sum'")
    return sparse_mm(mat1, mat2)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's elements: a dense 0-d tensor, or over `dim` (a dense
    result when every sparse dim is summed, else a sparse one)."""
    return sparse_sum(input, dim, dtype=dtype)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """`beta * mat + alpha * (mat1 @ mat2)` with `mat1` sparse and `mat` dense."""
    return beta * mat + alpha * sparse_mm(mat1, mat2)


def _legacy(dtype, name):
    def construct(indices, values, size=None, *, device=None):
        warnings.warn(f"ember.sparse.{name}(indices, values, shape) is deprecated, as in "
                      "torch. Please use ember.sparse_coo_tensor(indices, values, shape, "
                      "dtype=, device=).", UserWarning, stacklevel=2)
        return sparse_coo_tensor(indices, values, size, dtype=dtype, device=device)
    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = (f"Legacy constructor: `sparse_coo_tensor(indices, values, size, "
                         f"dtype={dtype})`, with torch's deprecation warning.")
    return construct


FloatTensor = _legacy(dt.float32, "FloatTensor")
DoubleTensor = _legacy(dt.float64, "DoubleTensor")
LongTensor = _legacy(dt.int64, "LongTensor")

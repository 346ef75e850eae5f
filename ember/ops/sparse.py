"""The primitives behind sparse COO tensors (`ember/_sparse.py`): densifying, sparse @ dense, and
coalescing, each a kernel beside its backward rule.

A sparse COO tensor is an `indices` array (sparse_dim, nnz) of int64 positions and a `values`
array (nnz, *dense dims) of what stands there; positions that repeat add up. These ops take the
two as separate tensor inputs, so autograd flows into `values` (and into the dense operand)
like through any other op, and a sparse tensor's gradient is its values' gradient at its own
positions, as in torch.

    to_dense        zeros, then values added at their positions   backward: g at the positions
    sparse_mm       (rows, n) = sparse (rows, k) @ dense (k, n)    backward: both operands
    sparse_coalesce values summed per distinct position            backward: g spread back

Read next: `ember/_sparse.py` (the tensors themselves).
"""
import math

from ._op import defop
from .index import _add_at
from .pointwise import _conj


def _to_dense(xp, indices, values, *, size):
    sparse_dim = indices.shape[0]
    rows = math.prod(size[:sparse_dim])
    out = xp.zeros((rows,) + tuple(size[sparse_dim:]), dtype=values.dtype)
    if values.shape[0]:
        _add_at(xp, out, (_linear(xp, indices, size[:sparse_dim]),), values)
    return out.reshape(size)


def _linear(xp, indices, sizes):
    """Each column of `indices` as one position in the flattened sparse dims (row-major)."""
    position = xp.zeros(indices.shape[1], dtype=indices.dtype)
    for row, n in zip(indices, sizes):
        position *= n
        position += row
    return position


def _to_dense_rule(g, indices):
    return None, g[tuple(indices.unbind(0))]


to_dense = defop("to_dense", "none", _to_dense, _to_dense_rule)


def _sparse_mm(xp, indices, values, dense, *, rows):
    """out[r] = sum of values[k] * dense[c] over the entries k at (r, c)."""
    out = xp.zeros((rows, dense.shape[1]), dtype=dense.dtype)
    if values.shape[0]:
        _add_at(xp, out, (indices[0],), values[:, None] * dense[indices[1]])
    return out


def _sparse_mm_rule(g, indices, values, dense, needs_input_grad):
    # complex operands take conjugates, as every product's rule does (see ops/complex.py)
    rows, cols = indices.unbind(0)
    g_rows = g.index_select(0, rows)  # each entry's row of the output gradient
    g_values = None
    if needs_input_grad[1]:
        g_values = (g_rows * _conj(dense.index_select(0, cols))).sum(1)
    g_dense = None
    if needs_input_grad[2]:
        g_dense = dense.new_zeros(dense.shape).index_add(0, cols,
                                                         _conj(values).unsqueeze(1) * g_rows)
    return None, g_values, g_dense


sparse_mm = defop("sparse_mm", "none", _sparse_mm, _sparse_mm_rule)


def _sparse_coalesce(xp, values, inverse, *, count):
    out = xp.zeros((count,) + values.shape[1:], dtype=values.dtype)
    _add_at(xp, out, (inverse,), values)
    return out


sparse_coalesce = defop("sparse_coalesce", "none", _sparse_coalesce,
                        lambda g, inverse: (g.index_select(0, inverse), None))

"""Rows for ember/ops/sparse.py: sparse COO tensors built from indices and values (positions
repeat in these random cases, and add up), densified, multiplied with dense matrices and
coalesced. Gradients reach the values and the dense operand. Behaviour beyond the table
(printing, errors, sums, leaves' sparse gradients) is in tests/test_sparse.py."""
from ._spec import C, I, Spec, T


def coo(m, i, v, sparse_sizes):
    """A sparse tensor with the first i.shape[0] of `sparse_sizes` as sparse dims, and each
    value's own dims as dense ones."""
    size = tuple(sparse_sizes[:i.shape[0]]) + tuple(v.shape[1:])
    return m.sparse_coo_tensor(i, v, size)


SPECS = [
    Spec("to_dense", lambda m, i, v: coo(m, i, v, (4, 5)).to_dense(),
         [(I(2, 7, high=4), T(7)), (I(2, 0, high=4), T(0)),
          (I(2, 5, high=4), T(5, 3, dtype="float64")),  # a dense dim in each value
          (I(1, 6, high=4), T(6, 2, t=True))],
         ops=["to_dense", "sparse_coo_tensor_values"]),
    Spec("sparse_mm", lambda m, i, v, d: (m.sparse.mm(coo(m, i, v, (4, 6)), d),
                                          m.spmm(coo(m, i, v, (4, 6)), d),
                                          coo(m, i, v, (4, 6)) @ d,
                                          m.mm(d.mT[:2, :4], coo(m, i, v, (4, 6)))),
         [(I(2, 9, high=4), T(9), T(6, 3)), (I(2, 9, high=4), T(9), T(6, 3, t=True)),
          (I(2, 4, high=4), T(4, dtype="float64"), T(6, 2, dtype="float64")),
          (I(2, 5, high=4), C(5), C(6, 2))],
         ops=["sparse_mm", "sparse_coo_tensor_values"]),
    Spec("sparse_coalesce", lambda m, i, v: coo(m, i, v, (4, 4)).coalesce().values(),
         [(I(2, 12, high=4), T(12)), (I(2, 6, high=3), T(6, 2))],
         ops=["sparse_coalesce", "sparse_coo_tensor_values"]),
]

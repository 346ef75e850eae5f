"""Matrix products (matmul, mm, ...), einsum, and the decompositions behind `ember.linalg`.

Read next: `../autograd/` (how recorded graphs are run backwards).
"""
from ._op import export, op


@op("none", name="matmul", node_name="MmBackward0")
def _matmul(xp, a, b):
    """torch.matmul: 1-D operands are vectors; batch dimensions broadcast."""
    return xp.matmul(a, b)


@_matmul.grad
def _matmul(g, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return g * b, g * a
    if a.ndim == 1:  # (k) @ (..., k, n) -> (..., n)
        return (g.unsqueeze(-2) @ b.mT).squeeze(-2), a.unsqueeze(-1) * g.unsqueeze(-2)
    if b.ndim == 1:  # (..., m, k) @ (k) -> (..., m)
        return g.unsqueeze(-1) * b, (a.mT @ g.unsqueeze(-1)).squeeze(-1)
    return g @ b.mT, a.mT @ g



def _check_matmul(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp_name(a.dtype)} != {_cpp_name(b.dtype)}")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src "
                               f"[{k_b}] to have the same number of elements, but got {k_a} and "
                               f"{k_b} elements respectively")
        rows = a.shape[-2] if a.ndim > 1 else 1
        cols = b.shape[-1] if b.ndim > 1 else 1
        left = "x".join(map(str, (a.numel() // k_a if a.ndim > 2 else rows, k_a)))
        right = "x".join(map(str, (k_b, cols)))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({left} and {right})")


def _cpp_name(dtype):
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}[dtype.name]


@export(method=True)
def matmul(input, other, *, out=None):
    _check_matmul(input, other)
    return _matmul(input, other)


@export(method=True)
def mm(input, mat2, *, out=None):
    if input.ndim != 2 or mat2.ndim != 2:
        bad = input if input.ndim != 2 else mat2
        raise RuntimeError(f"{'self' if bad is input else 'mat2'} must be a matrix")
    _check_matmul(input, mat2)
    return _matmul(input, mat2)

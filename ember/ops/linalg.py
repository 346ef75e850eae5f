"""Linear algebra: matrix products, einsum, and the decompositions behind `ember.linalg`.

Sections, in reading order:

  1. products        mm, bmm, mv, dot, vdot, matmul (every rank pair, batch broadcasting) and the
                     fused `beta * input + alpha * product` family (addmm, addmv, addr, baddbmm,
                     addbmm). Each is its own primitive so its graph node carries torch's name
                     (MmBackward0, AddmmBackward0, ...).
  2. compositions    outer, inner, tensordot, kron, multi_dot, chain_matmul: products plus
                     views, so their gradients come for free; trace and cross, two small ops.
  3. einsum          parse -> normalise (ellipsis becomes letters, size-1 broadcasting is
                     squeezed away) -> one op. The kernel contracts two operands at a time,
                     cheapest pair first, each contraction one (batched) matmul, so float32
                     runs on BLAS. The rule is again an einsum per operand.
  4. decompositions  inv, det, slogdet, solve, cholesky, qr, svd, svdvals, eigh, eigvalsh,
                     pinv, lstsq, matrix_rank: kernels call `xp.linalg`; rules are the textbook
                     formulas written with ember ops (so double backward works).
  5. the public `ember.linalg` functions (norms build on reduce.py's `norm` op, which is
                     torch's linalg_vector_norm) and torch's top-level aliases (det, inverse,
                     svd, ...).

`ember/linalg.py` is the public `ember.linalg` namespace; it re-exports section 5.

Two NumPy traps shape the kernels: NumPy has no BLAS for float16/bfloat16 (bfloat16 would run a
scalar loop), so products compute them in float32 and round once, as torch's CPU kernels do;
and `xp.linalg` returns named tuples, which dispatch would take for a single result, so kernels
return plain tuples.

Read next: ../linalg.py, then ../autograd/ (how recorded graphs are run backwards).
"""
import builtins
import collections
import math
import string

import numpy as np  # shapes and NumPy's LinAlgError only: kernels use `xp`

from .. import _creation, return_types
from .. import _dtype as dt
from .._functorch import batch_rules
from .._parallel import even_slices, get_num_threads, parallel_map
from .._tensor import Tensor
from .._utils import warn, wrap_dim, wrap_dims
from ..autograd.grad_mode import no_grad
from ._dispatch import autocast_args, broadcast_error, call_binary
from ._op import LINEAR, MULTILINEAR, defop, export, op
from .reduce import _norm as _vector_norm  # torch.norm's op is linalg.vector_norm's
from .shape import _unsafe_view, cat

_HALF = frozenset((dt.float16.np, dt.bfloat16.np))  # (a set: `in` a tuple compared dtypes)
_F32 = dt.float32.np
_INF = float("inf")


class LinAlgError(RuntimeError):
    """A matrix is singular or not positive-definite (torch.linalg.LinAlgError)."""


def _return_type(name, fields):
    """A named tuple like torch's `torch.return_types.<name>` (index, unpack, attributes),
    also reachable as `ember.return_types.<name>` so it pickles by name."""
    cls = return_types._structseq(name, fields)
    setattr(return_types, name, cls)
    return cls


slogdet_result = _return_type("slogdet", ["sign", "logabsdet"])
linalg_slogdet_result = _return_type("linalg_slogdet", ["sign", "logabsdet"])
linalg_qr_result = _return_type("linalg_qr", ["Q", "R"])
qr_result = _return_type("qr", ["Q", "R"])
linalg_svd_result = _return_type("linalg_svd", ["U", "S", "Vh"])
svd_result = _return_type("svd", ["U", "S", "V"])
linalg_eigh_result = _return_type("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_lstsq_result = _return_type("linalg_lstsq",
                                   ["solution", "residuals", "rank", "singular_values"])


# ----------------------------------------------------------------------------------------------
# small helpers


def _in_float32(fn, *arrays):
    """fn(*arrays), computed in float32 when the inputs are half precision (see the docstring)."""
    dtype = arrays[0].dtype
    if dtype in _HALF:
        return fn(*(a.astype(_F32) for a in arrays)).astype(dtype)
    return fn(*arrays)


def _stacked_matmul(xp, a, b):
    """a @ b for stacks of matrices of one batch shape (attention's scores and values). On
    several threads the stack is shared out among ember's threads, each product on one BLAS
    thread: OpenBLAS threads each small product by itself, waking its threads for every one
    (GPT's (16, 4, 128, 64) heads at 2 threads, ms: causal sdpa forward 5.6 -> 4.8, attention
    written with matmul forward + backward 14.0 -> 12.1)."""
    if xp is not np or a.ndim < 3 or a.shape[:-2] != b.shape[:-2] or \
            get_num_threads() < 2 or a.shape[0] < 2 or a.dtype != b.dtype or \
            a.dtype.char not in "fd" or a.size + b.size < _STACK_SPLIT_MIN:
        return _in_float32(xp.matmul, a, b)
    out = np.empty(a.shape[:-1] + b.shape[-1:], a.dtype)

    def run(part):
        np.matmul(a[part], b[part], out=out[part])
    parallel_map(run, even_slices(a.shape[0], get_num_threads()))
    return out


_STACK_SPLIT_MIN = 1 << 16  # operand elements: below, the parallel region costs more


def _cpp_name(dtype):
    """The C++ type name torch's matmul errors use ("float != double")."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}[dtype.name]


def _expect_tensors(fn_name, **arguments):
    """torch's TypeError for an argument that is not a Tensor (a number, a list...)."""
    for position, (name, value) in enumerate(arguments.items(), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn_name}(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")


def _no_bool(kernel_name, *tensors):
    """torch has no boolean matrix products (and names its kernel when it says so)."""
    for t in tensors:  # (a loop: a generator here cost ~4k instructions a product)
        if t._dtype is dt.bool:
            raise NotImplementedError(f'"{kernel_name}" not implemented for \'Bool\'')


def _scaled(x, factor):
    return x if factor == 1 else x * factor


def _dims(shape):
    return "x".join(map(str, shape))


def _eye(n, like):
    return _creation.eye(n, dtype=like.dtype, device=like.device)


# ==============================================================================================
# 1. products
#
# Every product asks that both operands have one dtype (torch does not promote here) and works
# on integers too. Rules use `needs_input_grad` to skip the product nobody needs. Gradients
# multiply by the other operand's conjugate (transpose): `mH`, `conj()`, which are `mT` and
# the tensor itself for real operands (see ops/complex.py for torch's convention).


@op("none", name="mm", node_name="MmBackward0")
def _mm(xp, a, b):
    """(n, k) @ (k, m)"""
    return _in_float32(xp.matmul, a, b)


@_mm.grad
def _mm(g, a, b, needs_input_grad):
    ga = _mm(g, b.mH) if needs_input_grad[0] else None
    # b transposed (nn.Linear multiplies by weight.t()): its gradient computed as (g^H a)^H,
    # so that the transpose's backward hands the weight a contiguous array, where a^H g
    # reached it as a transposed view, which accumulating into .grad copied element by element
    # (18% of the mlp step, cProfile; the step 34 -> 29 ms of CPU time at 1 thread)
    gb = (_mm(g.mH, a).mH if _transposed(b) else _mm(a.mH, g)) if needs_input_grad[1] else None
    return ga, gb


def _transposed(b):
    """Whether matrix b is laid out transposed (column-major, not row-major)."""
    flags = b._data.flags
    return b._data.ndim == 2 and flags.f_contiguous and not flags.c_contiguous


@op("none", name="bmm", node_name="BmmBackward0")
def _bmm(xp, a, b):
    """(B, n, k) @ (B, k, m), no broadcasting."""
    return _stacked_matmul(xp, a, b)


@_bmm.grad
def _bmm(g, a, b, needs_input_grad):
    ga = _bmm(g, b.mH) if needs_input_grad[0] else None
    gb = _bmm(a.mH, g) if needs_input_grad[1] else None
    return ga, gb


@op("none", name="mv", node_name="MvBackward0")
def _mv(xp, a, v):
    """(n, k) @ (k,)"""
    return _in_float32(xp.matmul, a, v)


@_mv.grad
def _mv(g, a, v, needs_input_grad):
    ga = g.unsqueeze(-1) * v.conj() if needs_input_grad[0] else None
    gv = _mv(a.mH, g) if needs_input_grad[1] else None
    return ga, gv


def _dot_kernel(xp, a, b):
    return _in_float32(xp.dot, a, b)


def _vdot_kernel(xp, a, b):
    return _in_float32(xp.dot, xp.conj(a) if a.dtype.kind == "c" else a, b)


def _dot_rule(g, a, b):
    return g * b.conj(), g * a.conj()


def _vdot_rule(g, a, b):
    """vdot = sum(conj(a) b) is antiholomorphic in a: its gradient is conj(g) b."""
    return g.conj() * b, g * a


_dot = defop("dot", "none", _dot_kernel, _dot_rule)
_vdot = defop("vdot", "none", _vdot_kernel, _vdot_rule)  # = dot for real numbers


@op("none", name="matmul", node_name="UnsafeViewBackward0")
def _matmul(xp, a, b):
    """The general case of torch.matmul: a 1-D operand is a vector, batch dims broadcast.
    (torch folds this case into a view of a bmm, hence its node name UnsafeViewBackward0.)"""
    if a.ndim > 2 and b.ndim == 2:  # (..., m, k) @ (k, n): one GEMM, not one per batch entry
        folded = _in_float32(xp.matmul, a.reshape(-1, a.shape[-1]), b)
        return folded.reshape(a.shape[:-1] + (b.shape[-1],))
    return _stacked_matmul(xp, a, b)


@_matmul.grad
def _matmul(g, a, b):
    # the engine sums gradients over broadcast batch dims; only the vector cases need care
    if a.ndim == 1:  # (k) @ (..., k, n) -> (..., n)
        return (g.unsqueeze(-2) @ b.mH).squeeze(-2), a.conj().unsqueeze(-1) * g.unsqueeze(-2)
    if b.ndim == 1:  # (..., m, k) @ (k) -> (..., m)
        return g.unsqueeze(-1) * b.conj(), (a.mH @ g.unsqueeze(-1)).squeeze(-1)
    if b.ndim == 2 and a.ndim > 2:  # fold the batch: one GEMM for b's gradient
        return g @ b.mH, a.reshape(-1, a.shape[-1]).mH @ g.reshape(-1, g.shape[-1])
    return g @ b.mH, a.mH @ g


def _check_matmul(a, b):
    """torch's errors for matmul, naming the shapes the way its kernels see them."""
    # on the arrays' shape tuples: a Tensor's `shape` builds a Size at every read, and the
    # checks of a small product cost more than the product (callgrind)
    shape_a, shape_b = a._data.shape, b._data.shape
    if not shape_a or not shape_b:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    if a._dtype is not b._dtype:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{dt.scalar_name(a.dtype)} and {dt.scalar_name(b.dtype)}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp_name(a.dtype)} != {_cpp_name(b.dtype)}")
    batch_a, batch_b = shape_a[:-2], shape_b[:-2]
    message = broadcast_error([batch_a, batch_b]) if batch_a and batch_b else None
    if message:
        raise RuntimeError(message)
    k_a = shape_a[-1]
    k_b = shape_b[-2] if len(shape_b) > 1 else shape_b[0]
    if k_a == k_b:
        return
    rows = a.numel() // k_a if k_a else math.prod(a.shape[:-1])
    if a.ndim == 1 and b.ndim == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{k_a}] and src [{k_b}] "
                           f"to have the same number of elements, but got {k_a} and {k_b} "
                           f"elements respectively")
    if b.ndim == 1:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{k_a}), vec ({k_b})")
    if b.ndim == 2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k_a} and "
                           f"{k_b}x{b.shape[1]})")
    batch = math.prod(_broadcast_shape(batch_a, batch_b))
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                       f"[{batch}, {k_a}] but got: [{batch}, {k_b}].")


def _broadcast_shape(*shapes):
    ndim = builtins.max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    return tuple(builtins.max(sizes) if 0 not in sizes else 0 for sizes in zip(*padded))


@export(method=True)
def matmul(input, other):
    """Matrix product for every rank pair: 1-D x 1-D is a dot product, a 1-D operand is a
    row (left) or column (right) vector, and leading batch dims broadcast."""
    # the checks read raw shapes and the products enter dispatch through `call_binary`:
    # (8, 4) @ (4, 16) under no_grad 60.6k -> 27.4k instructions, a 16-element dot 58.6k ->
    # 24.8k (callgrind; torch: 12.2k, 8.9k)
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        _expect_tensors("matmul", input=input, other=other)
    if input.is_sparse or other.is_sparse:
        return _sparse_mm(input, other)
    input, other = autocast_args("matmul", input, other)
    _check_matmul(input, other)
    _no_bool("addmm_impl_cpu_", input)
    ndim_a, ndim_b = input._data.ndim, other._data.ndim
    if ndim_a == 2 and ndim_b == 2:
        return call_binary(_mm, input, other)
    if ndim_a == 1 and ndim_b == 1:
        return call_binary(_dot, input, other)
    if ndim_a == 2 and ndim_b == 1:
        return call_binary(_mv, input, other)
    if ndim_a == 1 and ndim_b == 2:
        return _mm(input.unsqueeze(0), other).squeeze(0)
    if other.ndim == 2:  # (..., m, k) @ (k, n): torch's one GEMM over the folded rows
        rows = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        return _unsafe_view(_mm(rows, other), shape=input.shape[:-1] + (other.shape[1],))
    return _matmul(input, other)


def _sparse_mm(a, b):
    """A product with a sparse COO operand (ember/_sparse.py, which imports this module)."""
    from .._sparse import sparse_mm

    return sparse_mm(a, b, masked_grad=False)


def _require_ndim(arg, t, ndim):
    if t._data.ndim != ndim:
        raise RuntimeError(f"{arg} must be a {'matrix' if ndim == 2 else '3D tensor'}")


@export(method=True)
def mm(input, mat2):
    """Matrix product of (n, m) `input` and (m, p) `mat2`, giving (n, p).

    No broadcasting and no other ranks (use `matmul` for those); the two dtypes must match, and
    bool is refused. Either operand may be a sparse COO matrix.
    """
    if not (isinstance(input, Tensor) and isinstance(mat2, Tensor)):
        _expect_tensors("mm", input=input, mat2=mat2)
    if input.is_sparse or mat2.is_sparse:
        return _sparse_mm(input, mat2)
    input, mat2 = autocast_args("mm", input, mat2)
    _require_ndim("self", input, 2)
    _require_ndim("mat2", mat2, 2)
    _check_matmul(input, mat2)
    _no_bool("addmm_impl_cpu_", input)
    return call_binary(_mm, input, mat2)


def _check_batches(a, b, summed=False):
    """bmm-style checks: equal batch counts and inner sizes, no broadcasting. (addbmm, which
    sums the batch, words them differently.)"""
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(a.dtype)} but found "
                           f"{dt.scalar_name(b.dtype)}")
    if summed and a.shape[0] != b.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{a.shape[0]} and {b.shape[0]}")
    if summed and a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({_dims(a.shape[1:])} and "
                           f"{_dims(b.shape[1:])})")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


@export(method=True)
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors with equal batch sizes (no broadcasting)."""
    _expect_tensors("bmm", input=input, mat2=mat2)
    input, mat2 = autocast_args("bmm", input, mat2)
    _require_ndim("batch1", input, 3)
    _require_ndim("batch2", mat2, 3)
    _check_batches(input, mat2)
    _no_bool("bmm", input)
    return _bmm(input, mat2)


def _check_mv(mat, vec, input=None):
    if mat.ndim != 2 or vec.ndim != 1:
        n_in = 1 if input is None else input.ndim
        raise RuntimeError(f"vector + matrix @ vector expected, got {n_in}, {mat.ndim}, "
                           f"{vec.ndim}")
    first = vec if input is None else input  # mv's result takes the place of addmv's input
    if first.dtype is not mat.dtype or vec.dtype is not mat.dtype:
        names = [dt.scalar_name(t.dtype) for t in (first, mat, vec)]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{names[0]}, {names[1]}, and {names[2]}")
    if mat.shape[1] != vec.shape[0]:
        rows = mat.shape[0] if input is None else input.numel()
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({_dims(mat.shape)}), "
                           f"vec ({vec.shape[0]})")


@export(method=True)
def mv(input, vec):
    """Product of the (n, m) matrix `input` and the length-m vector `vec`, giving a length-n vector.

    The dtypes must match; bool is refused.
    """
    _expect_tensors("mv", input=input, vec=vec)
    input, vec = autocast_args("mv", input, vec)
    _check_mv(input, vec)
    _no_bool("addmv_impl_cpu", input)
    return _mv(input, vec)


def _check_dot(name, a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{dt.scalar_name(a.dtype)} and {dt.scalar_name(b.dtype)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    _no_bool(name, a)


@export(method=True)
def dot(input, tensor):
    """Inner product of two 1-D tensors of one dtype and size."""
    _expect_tensors("dot", input=input, tensor=tensor)
    input, tensor = autocast_args("dot", input, tensor)
    _check_dot("dot", input, tensor)
    return _dot(input, tensor)


@export(method=True)
def vdot(input, other):
    """conj(input) . other; the same as dot for real tensors."""
    _expect_tensors("vdot", input=input, other=other)
    _check_dot("vdot", input, other)
    return _vdot(input, other)


# beta * input + alpha * product. `beta == 0` ignores `input` entirely (NaN in it does not leak
# into the result), as torch documents. Integer tensors take integer factors. The wrappers
# check that `input` broadcasts to the product's shape, so the product's shape is the result's.

def _fused(c, product, beta, alpha):
    """beta * c + alpha * product, in place on `product` (a fresh result of the kernel)."""
    if alpha != 1:
        product *= alpha
    if beta != 0:
        product += c if beta == 1 else c * beta
    return product


def _addmm_kernel(xp, c, a, b, *, beta, alpha):
    return _fused(c, _in_float32(xp.matmul, a, b), beta, alpha)


def _addmm_rule(g, a, b, beta, alpha, needs_input_grad):
    beta, alpha = beta.conjugate(), alpha.conjugate()
    gc = _scaled(g, beta) if needs_input_grad[0] else None
    ga = _scaled(_mm(g, b.mH), alpha) if needs_input_grad[1] else None
    gb = (_scaled(_mm(g.mH, a).mH if _transposed(b) else _mm(a.mH, g), alpha)  # (as mm's)
          if needs_input_grad[2] else None)
    return gc, ga, gb


def _addmv_rule(g, a, b, beta, alpha, needs_input_grad):
    beta, alpha = beta.conjugate(), alpha.conjugate()
    gc = _scaled(g, beta) if needs_input_grad[0] else None
    ga = _scaled(g.unsqueeze(-1) * b.conj(), alpha) if needs_input_grad[1] else None
    gv = _scaled(_mv(a.mH, g), alpha) if needs_input_grad[2] else None
    return gc, ga, gv


def _addr_kernel(xp, c, u, v, *, beta, alpha):
    return _fused(c, _in_float32(lambda u, v: u[:, None] * v, u, v), beta, alpha)


def _addr_rule(g, u, v, beta, alpha, needs_input_grad):
    beta, alpha = beta.conjugate(), alpha.conjugate()
    gc = _scaled(g, beta) if needs_input_grad[0] else None
    gu = _scaled(_mv(g, v.conj()), alpha) if needs_input_grad[1] else None
    gv = _scaled(_mv(g.mT, u.conj()), alpha) if needs_input_grad[2] else None
    return gc, gu, gv


def _baddbmm_rule(g, a, b, beta, alpha, needs_input_grad):
    beta, alpha = beta.conjugate(), alpha.conjugate()
    gc = _scaled(g, beta) if needs_input_grad[0] else None
    ga = _scaled(_bmm(g, b.mH), alpha) if needs_input_grad[1] else None
    gb = _scaled(_bmm(a.mH, g), alpha) if needs_input_grad[2] else None
    return gc, ga, gb


def _addbmm_kernel(xp, c, a, b, *, beta, alpha):
    """sum_i a[i] @ b[i] is one product: (n, B*k) @ (B*k, m)."""
    batch, n, k = a.shape
    a2 = xp.transpose(a, (1, 0, 2)).reshape(n, batch * k)
    return _fused(c, _in_float32(xp.matmul, a2, b.reshape(batch * k, -1)), beta, alpha)


def _addbmm_rule(g, a, b, beta, alpha, needs_input_grad):
    beta, alpha = beta.conjugate(), alpha.conjugate()
    gc = _scaled(g, beta) if needs_input_grad[0] else None
    ga = _scaled(_matmul(g, b.mH), alpha) if needs_input_grad[1] else None  # (B, n, k)
    gb = _scaled(_matmul(a.mH, g), alpha) if needs_input_grad[2] else None  # (B, k, m)
    return gc, ga, gb


#                     name       promotion  forward          backward
_addmm = defop("addmm", "none", _addmm_kernel, _addmm_rule)
_addmv = defop("addmv", "none", _addmm_kernel, _addmv_rule)
_addr = defop("addr", "none", _addr_kernel, _addr_rule)
_baddbmm = defop("baddbmm", "none", _addmm_kernel, _baddbmm_rule)
_addbmm = defop("addbmm", "none", _addbmm_kernel, _addbmm_rule)


def _factors(input, beta, alpha):
    """torch casts alpha and beta to an integer tensor's type."""
    if input.dtype.category < dt.FLOATING:
        return int(beta), int(alpha)
    return beta, alpha


def _check_same_dtype(input, other, other_name="mat2"):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"self and {other_name} must have the same dtype, but got "
                           f"{dt.scalar_name(input.dtype)} and {dt.scalar_name(other.dtype)}")


def _check_addmm(input, mat1, mat2):
    _require_ndim("mat1", mat1, 2)
    _require_ndim("mat2", mat2, 2)
    _check_matmul(mat1, mat2)
    _check_same_dtype(input, mat2)
    _check_expandable(input, (mat1.shape[0], mat2.shape[1]))
    _no_bool("addmm_impl_cpu_", mat1)


def _check_expandable(input, shape):
    """`input` must broadcast to the product's shape (it is never the other way round)."""
    lead = len(shape) - input.ndim
    bad = lead < 0 or builtins.any(n != s and n != 1 for n, s in zip(input.shape, shape[lead:]))
    if bad:
        dim = next((lead + i for i, (n, s) in enumerate(zip(input.shape, shape[lead:]))
                    if n != s and n != 1), 0)
        raise RuntimeError(f"The expanded size of the tensor ({shape[dim]}) must match the "
                           f"existing size ({input.shape[dim - lead]}) at non-singleton "
                           f"dimension {dim}.  Target sizes: {list(shape)}.  Tensor sizes: "
                           f"{list(input.shape)}")


@export(method=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    _expect_tensors("addmm", input=input, mat1=mat1, mat2=mat2)
    if mat1.is_sparse or mat2.is_sparse:
        return beta * input + alpha * _sparse_mm(mat1, mat2)
    input, mat1, mat2 = autocast_args("addmm", input, mat1, mat2)
    _check_addmm(input, mat1, mat2)
    beta, alpha = _factors(input, beta, alpha)
    return _addmm(input, mat1, mat2, beta=beta, alpha=alpha)


@export(function=False, method=True)
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    """In-place `addmm`: self = beta * self + alpha * (mat1 @ mat2); returns self, which must have
    the product's shape (as in every `add*_` here).
    """
    _check_addmm(self, mat1, mat2)
    beta, alpha = _factors(self, beta, alpha)
    return _addmm.inplace(self, mat1, mat2, beta=beta, alpha=alpha)


def _check_addmv(input, mat, vec):
    _check_mv(mat, vec, input)
    _check_expandable(input, (mat.shape[0],))
    _no_bool("addmv_impl_cpu", mat)


@export(method=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    _expect_tensors("addmv", input=input, mat=mat, vec=vec)
    input, mat, vec = autocast_args("addmv", input, mat, vec)
    _check_addmv(input, mat, vec)
    beta, alpha = _factors(input, beta, alpha)
    return _addmv(input, mat, vec, beta=beta, alpha=alpha)


@export(function=False, method=True)
def addmv_(self, mat, vec, *, beta=1, alpha=1):
    """In-place `addmv`: self = beta * self + alpha * (mat @ vec); returns self."""
    _check_addmv(self, mat, vec)
    beta, alpha = _factors(self, beta, alpha)
    return _addmv.inplace(self, mat, vec, beta=beta, alpha=alpha)


def _check_addr(input, vec1, vec2):
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    _check_same_dtype(input, vec1, "vec1")
    _check_same_dtype(vec1, vec2, "vec2")
    _check_expandable(input, (vec1.shape[0], vec2.shape[0]))


@export(method=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    _expect_tensors("addr", input=input, vec1=vec1, vec2=vec2)
    input, vec1, vec2 = autocast_args("addr", input, vec1, vec2)
    _check_addr(input, vec1, vec2)
    beta, alpha = _factors(input, beta, alpha)
    return _addr(input, vec1, vec2, beta=beta, alpha=alpha)


@export(function=False, method=True)
def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place `addr`: self = beta * self + alpha * outer(vec1, vec2); returns self."""
    _check_addr(self, vec1, vec2)
    beta, alpha = _factors(self, beta, alpha)
    return _addr.inplace(self, vec1, vec2, beta=beta, alpha=alpha)


def _check_batched(input, batch1, batch2, shape):
    _require_ndim("batch1", batch1, 3)
    _require_ndim("batch2", batch2, 3)
    _check_batches(batch1, batch2, summed=len(shape) == 2)
    _check_same_dtype(input, batch2, "batch2")
    _check_expandable(input, shape)
    _no_bool("bmm", batch1)


@export(method=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    _expect_tensors("baddbmm", input=input, batch1=batch1, batch2=batch2)
    input, batch1, batch2 = autocast_args("baddbmm", input, batch1, batch2)
    _check_batched(input, batch1, batch2, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    beta, alpha = _factors(input, beta, alpha)
    return _baddbmm(input, batch1, batch2, beta=beta, alpha=alpha)


@export(function=False, method=True)
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place `baddbmm`: self = beta * self + alpha * (batch1 @ batch2), batch by batch; returns
    self.
    """
    _check_batched(self, batch1, batch2, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    beta, alpha = _factors(self, beta, alpha)
    return _baddbmm.inplace(self, batch1, batch2, beta=beta, alpha=alpha)


@export(method=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_i batch1[i] @ batch2[i]."""
    _expect_tensors("addbmm", input=input, batch1=batch1, batch2=batch2)
    input, batch1, batch2 = autocast_args("addbmm", input, batch1, batch2)
    _check_batched(input, batch1, batch2, (batch1.shape[1], batch2.shape[2]))
    beta, alpha = _factors(input, beta, alpha)
    return _addbmm(input, batch1, batch2, beta=beta, alpha=alpha)


@export(function=False, method=True)
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    """In-place `addbmm`: self = beta * self + alpha * sum_i batch1[i] @ batch2[i]; returns self."""
    _check_batched(self, batch1, batch2, (batch1.shape[1], batch2.shape[2]))
    beta, alpha = _factors(self, beta, alpha)
    return _addbmm.inplace(self, batch1, batch2, beta=beta, alpha=alpha)


# ==============================================================================================
# 2. compositions: products plus views, differentiable through their parts


@export(method=True)
def outer(input, vec2):
    """input[i] * vec2[j] (torch.ger is the old name)."""
    _expect_tensors("outer", input=input, vec2=vec2)
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.unsqueeze(-1) * vec2


export(outer, name="ger", method=True)


@export(method=True)
def inner(input, other):
    """Sum over the last dim of both (a 0-d operand multiplies)."""
    _expect_tensors("inner", input=input, other=other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, dims=([-1], [-1]))


@export
def tensordot(a, b, dims=2):
    """Contract `dims` (the last n of a with the first n of b, or two lists of dims); runs as
    one mm of the two operands reshaped to matrices."""
    _expect_tensors("tensordot", a=a, b=b)
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[da]} in dim {da} and second has size {b.shape[db]} "
                               f"in dim {db}")
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    k = math.prod(a.shape[d] for d in dims_a)
    left = a.permute(free_a + dims_a).reshape(-1, k) if a.ndim else a.reshape(1, 1)
    right = b.permute(dims_b + free_b).reshape(k, -1) if b.ndim else b.reshape(1, 1)
    shape = [a.shape[d] for d in free_a] + [b.shape[d] for d in free_b]
    return _mm(left, right).reshape(shape)


def _tensordot_dims(a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    dims_a, dims_b = dims
    dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
    dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    return [wrap_dim(d, a.ndim) for d in dims_a], [wrap_dim(d, b.ndim) for d in dims_b]


@export(method=True)
def kron(input, other):
    """Kronecker product: block (i, j) of the result is input[i, j] * other."""
    _expect_tensors("kron", input=input, other=other)
    ndim = builtins.max(input.ndim, other.ndim)
    a_shape = (1,) * (ndim - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (ndim - other.ndim) + tuple(other.shape)
    # interleave: a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...), then merge each pair
    a = input.reshape([n for s in a_shape for n in (s, 1)])
    b = other.reshape([n for s in b_shape for n in (1, s)])
    return (a * b).reshape([x * y for x, y in zip(a_shape, b_shape)])


def multi_dot(tensors):
    """A chain of matrix products in the cheapest order (dynamic programming over the sizes).
    The first / last tensor may be 1-D: a row / column vector."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    ends = {0: "the first tensor", len(tensors) - 1: "the last tensor"}
    for i, t in enumerate(tensors):
        if t.ndim != 2 and not (i in ends and t.ndim == 1):
            want = "1D or 2D" if i in ends else "2D"
            raise RuntimeError(f"multi_dot(): {ends.get(i, f'tensor {i}')} must be {want} but "
                               f"got {t.ndim}D")
        if t.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_cpp_name(first.dtype)} and tensor {i} "
                               f"{_cpp_name(t.dtype)}")
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = first.unsqueeze(0)
    if last.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                               f"cannot be multiplied")
    result = _chain(mats, _chain_order(mats), 0, len(mats) - 1)
    if first.ndim == 1:
        result = result.squeeze(0)
    if last.ndim == 1:
        result = result.squeeze(-1)
    return result


def _chain_order(mats):
    """split[i][j]: where the cheapest product of mats[i..j] splits (textbook matrix chain)."""
    sizes = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    n = len(mats)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = _INF
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + sizes[i] * sizes[s + 1] * sizes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    s = split[i][j]
    return _mm(_chain(mats, split, i, s), _chain(mats, split, s + 1, j))


@export
def chain_matmul(*matrices):
    """Deprecated spelling of linalg.multi_dot for 2-D tensors."""
    warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
         "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather "
         "than multiple parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def _trace_kernel(xp, a):
    integer = a.dtype.kind in "biu"
    return xp.trace(a, dtype=dt.int64.np if integer else _F32 if a.dtype in _HALF else None
                    ).astype(dt.int64.np if integer else a.dtype)


_trace = defop("trace", "none", _trace_kernel,
               lambda g, a_shape: (g * _creation.eye(*a_shape, dtype=g.dtype, device=g.device),))


@export(method=True)
def trace(input):
    """Sum of the main diagonal of a matrix (integers sum to int64, as torch.sum)."""
    _expect_tensors("trace", input=input)
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    _no_bool("trace", input)
    return _trace(input)


_cross = defop("linalg_cross", "none", lambda xp, a, b, *, dim: xp.cross(a, b, axis=dim),
               lambda g, a, b, dim: (_cross(b.conj(), g, dim=dim), _cross(g, a.conj(), dim=dim)))


def cross(input, other, *, dim=-1):
    """torch.linalg.cross: the 3-vector cross product along `dim`; batch dims broadcast."""
    _expect_tensors("linalg_cross", input=input, other=other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {dt.scalar_name(input.dtype)} but found "
                           f"{dt.scalar_name(other.dtype)}")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    message = broadcast_error([tuple(input.shape), tuple(other.shape)])
    if message:
        raise RuntimeError(message)
    shape = _broadcast_shape(input.shape, other.shape)
    if input.shape != shape:
        input = input.expand(shape)
    if other.shape != shape:
        other = other.expand(shape)
    return _cross(input, other, dim=d)


@export(name="cross", method=True)
def _legacy_cross(input, other, dim=None):
    """torch.cross: as linalg.cross, but without `dim` it takes the first dim of size 3."""
    if dim is None:
        warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
             "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
             "dim will change to agree with that of linalg.cross in a future release.")
        dim = next((d for d, n in enumerate(_broadcast_shape(input.shape, other.shape))
                    if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim)


# ==============================================================================================
# 3. einsum
#
# The public function turns any valid equation into a normal form the op works on:
#   * the ellipsis becomes explicit letters (right-aligned, as broadcasting aligns dims);
#   * the output is explicit (implicit mode: ellipsis dims, then the labels seen once, sorted);
#   * a size-1 dim broadcast against a larger one is squeezed away (a view), so every label has
#     one size -- the squeeze's own backward restores the dim, the engine sums the gradient.
# The op then sees e.g. "bhqd,bhkd->bhqk": letters only, one size per letter, no repeated
# output letters.

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # torch's label order: A-Z, a-z


@export
def einsum(*args):
    """torch.einsum(equation, *operands), operands also as one list, or the sublist form
    einsum(op1, [0, 1], op2, [1, 2], [0, 2])."""
    equation, operands = _einsum_args(args)
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got "
                            f"{type(t).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for t in operands[1:]:
        if t.dtype is not operands[0].dtype:
            raise RuntimeError(f"expected scalar type {dt.scalar_name(operands[0].dtype)} but "
                               f"found {dt.scalar_name(t.dtype)}")
    terms, output, ellipsis = _einsum_normalise(equation, operands)
    sizes = _label_sizes(terms, operands, ellipsis)
    pairs = [_squeeze_broadcast(t, labels, sizes) for t, labels in zip(operands, terms)]
    equation = ",".join(labels for _, labels in pairs) + "->" + output
    return _einsum(*(t for t, _ in pairs), equation=equation)


def _squeeze_broadcast(t, labels, sizes):
    """Drop the size-1 dims that broadcast against a larger size of the same label."""
    drop = [i for i, c in enumerate(labels) if t.shape[i] == 1 and sizes[c] > 1]
    if not drop:
        return t, labels
    return t.squeeze(drop), "".join(c for i, c in enumerate(labels) if i not in drop)


def _einsum_args(args):
    if not args or isinstance(args[0], str) and len(args) == 1:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
        return args[0], list(operands)
    # sublist form: operand, sublist, operand, sublist, ..., [output sublist]
    operands, sublists = list(args[0::2]), list(args[1::2])
    output = operands.pop() if len(args) % 2 else None
    equation = ",".join(_sublist_letters(s) for s in sublists)
    if output is not None:
        equation += "->" + _sublist_letters(output)
    return equation, operands


def _sublist_letters(sublist):
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and 0 <= s < len(_LETTERS):
            out.append(_LETTERS[s])
        else:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
    return "".join(out)


def _parse_term(term, what):
    """'ab...c' -> ('ab', True, 'c'); checks the characters."""
    has_ellipsis = "..." in term
    before, _, after = term.partition("...")
    for c in before + after:
        if c == ".":
            raise RuntimeError(f"einsum(): found '.' for {what} that is not part of any "
                               "ellipsis")
        if c not in _LETTERS:
            raise RuntimeError(f"einsum(): invalid subscript given at index "
                               f"{term.index(c)} in the equation string, subscripts must be in "
                               "[a-zA-Z]")
    return before, has_ellipsis, after


def _einsum_normalise(equation, operands):
    """(one letter string per operand, output letters), ellipsis spelled out as letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    raw = lhs.split(",")
    if len(raw) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                           "equation")
    if len(raw) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    parsed = [_parse_term(term, f"operand {k}") for k, term in enumerate(raw)]
    ellipsis_ndim = 0
    for k, ((before, has_ellipsis, after), t) in enumerate(zip(parsed, operands)):
        n = len(before) + len(after)
        if not has_ellipsis and n != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does "
                               f"not match the number of dimensions ({t.ndim}) for operand {k} "
                               "and no ellipsis was given")
        if has_ellipsis and n > t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is "
                               f"more than the number of dimensions ({t.ndim}) for operand {k}")
        if has_ellipsis:
            ellipsis_ndim = builtins.max(ellipsis_ndim, t.ndim - n)
    used = set(lhs + rhs)
    spare = [c for c in _LETTERS if c not in used]
    if ellipsis_ndim > len(spare):
        raise NotImplementedError("einsum(): the equation leaves too few unused letters for "
                                  "its ellipsis dims")
    ellipsis = "".join(spare[:ellipsis_ndim])
    terms = []
    for (before, has_ellipsis, after), t in zip(parsed, operands):
        e = t.ndim - len(before) - len(after) if has_ellipsis else 0
        terms.append(before + ellipsis[ellipsis_ndim - e:] + after)
    if arrow:
        output = _einsum_output(rhs, ellipsis, terms)
    else:
        counts = collections.Counter("".join(raw).replace(".", ""))
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    return terms, output, ellipsis


def _einsum_output(rhs, ellipsis, terms):
    before, has_ellipsis, after = _parse_term(rhs, "the output")
    output = before + (ellipsis if has_ellipsis else "") + after
    seen = set("".join(terms))
    for c in before + after:
        if output.count(c) > 1:
            raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the "
                               "output")
        if c not in seen:
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               "equation for any input operand")
    return output


def _label_sizes(terms, operands, ellipsis):
    """One size per letter; sizes of 1 broadcast, anything else must agree."""
    sizes = {}
    for k, (labels, t) in enumerate(zip(terms, operands)):
        mine = {}
        for c, n in zip(labels, t.shape):
            if c in mine and mine[c] != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but "
                                   f"the sizes don't match, {mine[c]} != {n}")
            mine[c] = n
        for c, n in mine.items():
            old = sizes.get(c, 1)
            if old != n and old != 1 and n != 1:
                raise RuntimeError(_broadcast_message(c, n, old, k, labels, ellipsis))
            sizes[c] = n if old == 1 else old
    return sizes


def _broadcast_message(c, n, old, k, labels, ellipsis):
    if c not in ellipsis:
        return (f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                f"with previously seen size {old}")
    position = [x for x in labels if x in ellipsis].index(c)
    return (f"einsum(): dimension {position} covered by ellipsis in operand {k} has size {n} "
            f"which does not broadcast with previously seen ellipsis with size {old} for the "
            "respective dimension")


def _split_equation(equation):
    lhs, output = equation.split("->")
    return lhs.split(","), output


@op("none", name="einsum")
def _einsum(xp, *arrays, equation):
    """Contract a normalised equation: reduce each operand's private labels, then contract
    the cheapest pair (smallest result) until one operand is left."""
    inputs, output = _split_equation(equation)
    dtype = arrays[0].dtype
    if dtype in _HALF:
        arrays = [a.astype(_F32) for a in arrays]
    sizes = {c: n for a, labels in zip(arrays, inputs) for c, n in zip(labels, a.shape)}
    terms = list(zip(arrays, inputs))
    while len(terms) > 1:
        i, j = _cheapest_pair(terms, output, sizes)
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = set(output).union(*(labels for _, labels in rest))
        terms = rest + [_contract_pair(xp, *terms[i], *terms[j], keep, sizes)]
    a, labels = _reduce_term(xp, *terms[0], set(output))
    result = xp.transpose(a, [labels.index(c) for c in output])
    if len(arrays) == 1 and xp.may_share_memory(result, arrays[0]):
        result = result.copy()  # a transpose or diagonal of the input: never alias it
    return result.astype(dtype) if dtype in _HALF else result


def _cheapest_pair(terms, output, sizes):
    best = None
    for i in range(len(terms)):
        for j in range(i + 1, len(terms)):
            others = set(output).union(*(terms[k][1] for k in range(len(terms))
                                         if k not in (i, j)))
            kept = (set(terms[i][1]) | set(terms[j][1])) & others
            cost = math.prod(sizes[c] for c in kept)
            if best is None or cost < best[0]:
                best = (cost, i, j)
    return best[1], best[2]


def _reduce_term(xp, a, labels, keep):
    """Take the diagonal of repeated labels, then sum the labels nobody else needs (integers
    sum to int64, as torch.sum)."""
    unique = "".join(dict.fromkeys(labels))
    if len(unique) < len(labels):
        a = xp.einsum(f"{labels}->{unique}", a)
        labels = unique
    summed = tuple(i for i, c in enumerate(labels) if c not in keep)
    if summed:
        a = xp.sum(a, axis=summed, dtype=dt.int64.np if a.dtype.kind in "biu" else None)
        labels = "".join(c for c in labels if c in keep)
    return a, labels


def _contract_pair(xp, a, la, b, lb, keep, sizes):
    """One contraction as a (batched) matrix product:
        a -> (batch, left, summed), b -> (batch, summed, right), result (batch, left, right)."""
    a, la = _reduce_term(xp, a, la, keep | set(lb))
    b, lb = _reduce_term(xp, b, lb, keep | set(la))
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    a2 = _as_matrix(xp, a, la, batch, left, summed, sizes)
    b2 = _as_matrix(xp, b, lb, batch, summed, right, sizes)
    out = xp.matmul(a2, b2)
    return out.reshape([sizes[c] for c in batch + left + right]), "".join(batch + left + right)


def _as_matrix(xp, x, labels, batch, rows, cols, sizes):
    """x as (B, R, C) -- or (R, C) without batch labels. When x's dims already run
    (batch, cols, rows), reshape that and swap the last two: a strided view BLAS takes as
    a transposed operand, where the direct permutation would copy."""
    lead = (math.prod(sizes[c] for c in batch),) if batch else ()
    n_rows, n_cols = math.prod(sizes[c] for c in rows), math.prod(sizes[c] for c in cols)
    wanted = "".join(batch + rows + cols)
    if wanted != labels and "".join(batch + cols + rows) == labels:
        return xp.swapaxes(x.reshape(lead + (n_cols, n_rows)), -1, -2)
    perm = [labels.index(c) for c in wanted]
    return xp.transpose(x, perm).reshape(lead + (n_rows, n_cols))


@_einsum.grad
def _einsum(g, inputs, needs_input_grad, equation):
    terms, output = _split_equation(equation)
    return tuple(_einsum_operand_grad(g, inputs, terms, output, k, equation)
                 if needs_input_grad[k] else None for k in range(len(inputs)))


def _einsum_operand_grad(g, inputs, terms, output, k, equation):
    """d/d(operand k) is the einsum of g (labels `output`) with the other operands, producing
    operand k's labels. Two extra operands make that a valid einsum:
      * a label only operand k has (summed inside it) gets a ones(n) operand -- the gradient
        is constant along it;
      * a repeated label (a diagonal, 'ii') gets a fresh letter joined to it by eye(n) -- the
        gradient lives on the diagonal, zero elsewhere."""
    others = [j for j in range(len(inputs)) if j != k]
    operands = [g] + [inputs[j].conj() for j in others]  # einsum is linear in each operand
    subs = [output] + [terms[j] for j in others]
    seen = set("".join(subs))
    spare = iter(c for c in _LETTERS if c not in equation)
    target, result = terms[k], ""
    for position, (c, n) in enumerate(zip(target, inputs[k].shape)):
        if c in target[:position]:
            fresh = next(spare)
            operands.append(_eye(n, g))
            subs.append(c + fresh)
            result += fresh
            continue
        if c not in seen:
            operands.append(_creation.ones(n, dtype=g.dtype, device=g.device))
            subs.append(c)
            seen.add(c)
        result += c
    return _einsum(*operands, equation=",".join(subs) + "->" + result)


# ==============================================================================================
# 4. decompositions


def _check_matrix(name, A, square=True, low_precision_ok=False, complex_ok=False):
    """The checks torch.linalg functions share: >= 2 dims, square, a supported float dtype
    (complex ones only where ember's rule handles them: `complex_ok`)."""
    _expect_tensors(name.replace(".", "_"), A=A)
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    _check_float(name, A, low_precision_ok, complex_ok)


def _check_float(name, A, low_precision_ok=False, complex_ok=False):
    if A.dtype.is_complex and not complex_ok:
        raise NotImplementedError(f"{name}: ember's decompositions do not support complex "
                                  f"matrices yet (got {dt.scalar_name(A.dtype)})")
    if A.dtype.category < dt.FLOATING:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dt.scalar_name(A.dtype)}")
    if A.dtype.np in _HALF and not low_precision_ok:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{dt.scalar_name(A.dtype)}")


def _batch_prefix(xp, a, bad):
    """'(Batch element k): ' for the first failing matrix of a batch (`bad`: one bool per
    matrix), or '' for a single matrix."""
    if a.ndim == 2:
        return ""
    k = int(xp.argmax(bad.reshape(-1)))
    return f"(Batch element {k}): "


# --- inv, det, slogdet, solve --------------------------------------------------------------


def _inv_kernel(xp, a):
    try:
        return xp.linalg.inv(a)
    except ValueError:  # numpy's LinAlgError is a ValueError (cupy raises numpy's)
        prefix = _batch_prefix(xp, a, xp.linalg.det(a) == 0)
        raise LinAlgError(f"linalg.inv: {prefix}The inversion could not be completed because "
                          "the input matrix is singular.") from None


_inv = defop("linalg_inv", "none", _inv_kernel,
             lambda g, out: (-(out.mH @ g @ out.mH),),  # d(A^-1) = -A^-1 dA A^-1
             node_name="LinalgInvExBackward0")


def _det_rule(g, a, out):
    # d det(A) = det(A) tr(A^-1 dA)  ->  grad = g conj(det(A)) A^-H (A must be invertible)
    return ((g * out.conj()).unsqueeze(-1).unsqueeze(-1) * _inv(a).mH,)


_det = defop("linalg_det", "none", lambda xp, a: xp.linalg.det(a), _det_rule,
             node_name="LinalgDetBackward0")


def _slogdet_rule(g, a):
    # the sign is piecewise constant; d log|det A| = tr(A^-1 dA)
    return (g[1].unsqueeze(-1).unsqueeze(-1) * _inv(a).mT,)


_slogdet = defop("linalg_slogdet", "none", lambda xp, a: tuple(xp.linalg.slogdet(a)),
                 _slogdet_rule, node_name="LinalgSlogdetBackward0")


def _solve_kernel(xp, a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])  # CuPy's solve does not broadcast
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    try:
        return xp.linalg.solve(a, b)
    except np.linalg.LinAlgError:  # (CuPy raises NumPy's)
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is "
                          "singular.") from None


def _solve_rule(g, a, out, needs_input_grad):
    # X = A^-1 B:  gB = A^-H g,  gA = -gB X^H  (the engine sums broadcast batch dims)
    gb = _solve(a.mH, g)
    ga = -(gb @ out.mH) if needs_input_grad[0] else None
    return ga, gb


_solve = defop("linalg_solve", "none", _solve_kernel, _solve_rule,
               node_name="LinalgSolveExBackward0")


# --- cholesky ------------------------------------------------------------------------------


def _cholesky_kernel(xp, a, *, upper):
    try:
        L = xp.linalg.cholesky(a)
    except ValueError:  # numpy's LinAlgError: find what torch reports (error path only)
        raise LinAlgError(_not_positive_definite(xp, a)) from None
    return xp.swapaxes(L, -1, -2).copy() if upper else L


def _not_positive_definite(xp, a):
    """torch's message names the batch element and the order of the first leading minor that
    is not positive-definite; LAPACK stops there, so try the leading minors in turn."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for k, m in enumerate(flat):
        for order in range(1, m.shape[-1] + 1):
            try:
                xp.linalg.cholesky(m[:order, :order])
            except ValueError:
                prefix = f"(Batch element {k}): " if a.ndim > 2 else ""
                return (f"linalg.cholesky: {prefix}The factorization could not be completed "
                        f"because the input is not positive-definite (the leading minor of "
                        f"order {order} is not positive-definite).")
    return "linalg.cholesky: The input is not positive-definite."


def _cholesky_rule(g, out, upper):
    """A = L L^T:  dL = L Phi(L^-1 dA L^-T), Phi = lower triangle with the diagonal halved, so
    gA = L^-T Phi(L^T gL) L^-1, symmetrised (A is symmetric: only that part is seen)."""
    L, gL = (out.mT, g.mT) if upper else (out, g)
    phi = (L.mT @ gL).tril()
    phi = phi - 0.5 * phi.diagonal(0, -2, -1).diag_embed()
    L_inv = _inv(L)
    gA = L_inv.mT @ phi @ L_inv
    return (0.5 * (gA + gA.mT),)


_cholesky = defop("linalg_cholesky", "none", _cholesky_kernel, _cholesky_rule,
                  node_name="LinalgCholeskyExBackward0")


# --- qr ------------------------------------------------------------------------------------


def _qr_kernel(xp, a, *, mode):
    if mode == "r":
        return xp.empty((0,), dtype=a.dtype), xp.linalg.qr(a, mode="r")
    return tuple(xp.linalg.qr(a, mode=mode))


def _qr_rule(g, out, a_shape, mode):
    gQ, gR = g
    Q, R = out
    m, n = a_shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    if m >= n:
        return (_qr_tall_grad(Q, R, gQ, gR),)
    # wide A = [X | Y] with X = Q R1 square and Y = Q R2: Q depends on X only
    R1, R2, gR1, gR2 = R[..., :m], R[..., m:], gR[..., :m], gR[..., m:]
    Y = Q @ R2
    gX = _qr_tall_grad(Q, R1, gQ + Y @ gR2.mT, gR1)
    return (cat([gX, Q @ gR2], -1),)


def _qr_tall_grad(Q, R, gQ, gR):
    """A = QR with m >= n: with K = gR R^T - Q^T gQ and S = K's upper triangle mirrored to the
    lower one, gA = (gQ + Q S) R^-T."""
    K = gR @ R.mT - Q.mT @ gQ
    S = K.triu() + K.triu(1).mT
    return _solve(R, (gQ + Q @ S).mT).mT


_qr = defop("linalg_qr", "none", _qr_kernel, _qr_rule, node_name="LinalgQrBackward0")


# --- svd, eigh -----------------------------------------------------------------------------


def _off_diagonal_inverse(d):
    """F[i, j] = 1 / d[i, j] off the diagonal, 0 on it (d has zeros on its diagonal)."""
    eye = _eye(d.shape[-1], d)
    return (1 - eye) / (d + eye)


def _svd_rule(g, out, a_shape, full_matrices):
    """A = U S V^T (distinct singular values). With F[i,j] = 1/(s_j^2 - s_i^2):
        gA = U [ (F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V)) ] V^T
             + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)
    The last two terms only exist for non-square A (U or V not square)."""
    gU, gS, gVh = g
    U, S, Vh = out
    m, n = a_shape[-2:]
    k = builtins.min(m, n)
    if full_matrices and m != n:  # the extra columns of U or rows of Vh are arbitrary
        U, gU, Vh, gVh = U[..., :k], gU[..., :k], Vh[..., :k, :], gVh[..., :k, :]
    V, gV = Vh.mT, gVh.mT
    s_row = S.unsqueeze(-2)
    s_col = S.unsqueeze(-1)
    F = _off_diagonal_inverse(s_row * s_row - s_col * s_col)
    UtgU = U.mT @ gU
    VtgV = V.mT @ gV
    inner = (F * (UtgU - UtgU.mT)) * s_row + gS.diag_embed() + s_col * (F * (VtgV - VtgV.mT))
    gA = U @ inner @ Vh
    if m > k:
        gA = gA + ((gU - U @ UtgU) / s_row) @ Vh
    if n > k:
        gA = gA + U @ ((gV - V @ VtgV) / s_row).mT
    return (gA,)


_svd = defop("linalg_svd", "none",
             lambda xp, a, *, full_matrices: tuple(xp.linalg.svd(a, full_matrices=full_matrices)),
             _svd_rule, node_name="LinalgSvdBackward0")


def _svdvals_rule(g, a):
    # only the values are wanted: gA = U diag(g) V^T needs no distinct singular values
    U, _, Vh = _svd(a, full_matrices=False)
    return ((U * g.unsqueeze(-2)) @ Vh,)


_svdvals = defop("linalg_svdvals", "none", lambda xp, a: xp.linalg.svd(a, compute_uv=False),
                 _svdvals_rule, node_name="LinalgSvdBackward0")


def _eigh_rule(g, out):
    """A = V diag(w) V^T (distinct eigenvalues). With F[i,j] = 1/(w_j - w_i):
        gA = V (diag(gw) + F o (V^T gV - gV^T V) / 2) V^T   (symmetric, as A is)."""
    gw, gV = g
    w, V = out
    F = _off_diagonal_inverse(w.unsqueeze(-2) - w.unsqueeze(-1))
    VtgV = V.mT @ gV
    return (V @ (gw.diag_embed() + F * (VtgV - VtgV.mT) * 0.5) @ V.mT,)


_eigh = defop("linalg_eigh", "none", lambda xp, a, *, UPLO: tuple(xp.linalg.eigh(a, UPLO=UPLO)),
              _eigh_rule, node_name="LinalgEighBackward0")


def _eigvalsh_rule(g, a, UPLO):
    _, V = _eigh(a, UPLO=UPLO)
    return ((V * g.unsqueeze(-2)) @ V.mT,)


_eigvalsh = defop("linalg_eigvalsh", "none",
                  lambda xp, a, *, UPLO: xp.linalg.eigvalsh(a, UPLO=UPLO), _eigvalsh_rule,
                  node_name="LinalgEighBackward0")


# --- pinv, lstsq ---------------------------------------------------------------------------


def _pinv_kernel(xp, a, *, atol, rtol, hermitian):
    """Invert the singular values (eigenvalues if hermitian) above max(atol, rtol * largest)."""
    if hermitian:
        w, V = xp.linalg.eigh(a)
        _, inverse = _inverted(xp, w, xp.abs(w), atol, rtol)
        return (V * inverse[..., None, :]) @ xp.swapaxes(V, -1, -2)
    U, S, Vh = xp.linalg.svd(a, full_matrices=False)
    _, inverse = _inverted(xp, S, S, atol, rtol)
    return xp.swapaxes(Vh, -1, -2) @ (inverse[..., :, None] * xp.swapaxes(U, -1, -2))


def _inverted(xp, values, magnitudes, atol, rtol):
    """(mask of values kept, 1/value where kept else 0)."""
    if values.shape[-1] == 0:  # empty matrices: nothing to invert (max would fail)
        return values > 0, values
    largest = magnitudes.max(axis=-1, keepdims=True)
    keep = magnitudes > xp.maximum(atol, rtol * largest)
    return keep, xp.where(keep, 1 / xp.where(keep, values, 1), 0).astype(values.dtype)


def _pinv_backward(g, P, A):
    """gA for P = pinv(A) at constant rank (Golub & Pereyra):
        gA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A)"""
    gT = g.mT
    term1 = -(P.mT @ g @ P.mT)
    X = gT @ (P @ P.mT)
    term2 = X - A @ (P @ X)
    Y = (P.mT @ P) @ gT
    term3 = Y - (Y @ P) @ A
    return term1 + term2 + term3


_pinv = defop("linalg_pinv", "none", _pinv_kernel,
              lambda g, a, out: (_pinv_backward(g, out, a),), node_name="LinalgPinvBackward0")


def _lstsq_kernel(xp, a, b, *, rcond, residuals):
    """Minimum-norm least squares through the SVD (gelsy's answer for any rank); the rank
    counts singular values above rcond * largest."""
    U, S, Vh = xp.linalg.svd(a, full_matrices=False)
    keep, inverse = _inverted(xp, S, S, 0.0, rcond)
    X = xp.swapaxes(Vh, -1, -2) @ (inverse[..., :, None] * (xp.swapaxes(U, -1, -2) @ b))
    rank = keep.sum(axis=-1).astype(dt.int64.np)
    if residuals and bool(xp.all(rank == a.shape[-1])):
        r = a @ X - b
        res = (r * r).sum(axis=-2)
    else:
        res = xp.empty((0,), dtype=a.dtype)
    return X, res, rank


def _lstsq_rule(g, a, b, out, rcond, needs_input_grad):
    """X = pinv(A) B: gB = pinv(A)^T gX, gA = pinv-backward of gX B^T. A computed residual
    r = |AX - B|^2 (a minimum over X) adds 2 (AX - B) gr X^T and -2 (AX - B) gr."""
    gX, gres = g[0], g[1]
    X, res = out[0], out[1]
    P = _pinv(a, atol=0.0, rtol=rcond, hermitian=False)
    ga = _pinv_backward(gX @ b.mT, P, a) if needs_input_grad[0] else None
    gb = P.mT @ gX if needs_input_grad[1] else None
    if res.numel():
        weighted = (a @ X - b) * (2 * gres.unsqueeze(-2))
        ga = None if ga is None else ga + weighted @ X.mT
        gb = None if gb is None else gb - weighted
    return ga, gb


_lstsq = defop("linalg_lstsq", "none", _lstsq_kernel, _lstsq_rule,
               node_name="LinalgLstsqBackward0")


def _matrix_rank_kernel(xp, a, *, atol, rtol, hermitian):
    values = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    keep, _ = _inverted(xp, values, values, atol, rtol)
    return keep.sum(axis=-1).astype(dt.int64.np)


_matrix_rank = defop("linalg_matrix_rank", "none", _matrix_rank_kernel, differentiable=False)


# ==============================================================================================
# 5. the public ember.linalg functions (see ../linalg.py), and torch's top-level aliases


def inv(A):
    """A^-1; raises LinAlgError for a singular matrix."""
    A, = autocast_args("linalg_inv", A)  # float32 under CPU autocast
    _check_matrix("linalg.inv", A, complex_ok=True)
    return _inv(A)


@export(method=True)
def inverse(input):
    """The inverse of each (batched) square matrix: `linalg.inv` under torch's older name.

    Raises LinAlgError for a singular matrix.
    """
    return inv(input)


def det(A):
    """The determinant of each (batched) square matrix."""
    _check_matrix("linalg.det", A, complex_ok=True)
    return _det(A)


@export(name="det", method=True)
def _legacy_det(input):
    """torch.det: linalg.det under torch's older parameter name."""
    return det(input)


def slogdet(A):
    """(sign, log|det A|): no overflow where det itself would."""
    _check_matrix("linalg.slogdet", A)
    return linalg_slogdet_result(*_slogdet(A))


@export(name="slogdet", method=True)
def _legacy_slogdet(input):
    """torch.slogdet: (sign, logabsdet) of each (batched) square matrix, as `linalg.slogdet`
    computes them, in torch's older result type (fields `sign` and `logabsdet`).
    """
    return slogdet_result(*slogdet(input))


@export(method=True)
def logdet(input):
    """log det(A): nan for a negative determinant, -inf for a singular matrix."""
    sign, logabsdet = slogdet(input)
    return logabsdet + sign.log()


def solve(A, B, *, left=True):
    """X with A X = B (left=True) or X A = B; B may be a (batch of) vector(s)."""
    A, B = autocast_args("linalg_solve", A, B)  # float32 under CPU autocast
    A, B2, vector = _solve_operands("linalg.solve", A, B, left)
    return _solve_result(_solve(A, B2), vector, left)


def _solve_operands(name, A, B, left):
    """solve's checks, and its operands as one left-hand problem A X = B2: (A, B2, vector)."""
    _expect_tensors(name.replace(".", "_"), A=A, B=B)
    _check_matrix(name, A, complex_ok=True)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found "
                           f"A of type {dt.scalar_name(A.dtype)} and B of type "
                           f"{dt.scalar_name(B.dtype)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    B2 = B.unsqueeze(-1) if vector else B
    if not left:
        A, B2 = A.mT, (B2.mT if not vector else B2)
    if B2.shape[-2] != A.shape[-1]:
        equation = "AX = B" if left else "XA = B"
        shape = (B2.shape[-2], B2.shape[-1]) if left else (B2.shape[-1], B2.shape[-2])
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{equation} ({_dims(A.shape[-2:])} and {_dims(shape)})")
    message = broadcast_error([tuple(A.shape[:-2]), tuple(B2.shape[:-2])])
    if message:
        raise RuntimeError(message)
    return A, B2, vector


def _solve_result(X, vector, left):
    """The solution of `_solve_operands`' problem in the shape the caller's B had."""
    if vector:
        return X.squeeze(-1)
    return X if left else X.mT


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """solve() with A's other triangle taken as zero (and its diagonal as ones when
    unitriangular); the gradient w.r.t. A lands on that triangle only, as torch's."""
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    _check_matrix("linalg.solve_triangular", A)
    T = A.triu(1 if unitriangular else 0) if upper else A.tril(-1 if unitriangular else 0)
    if unitriangular:
        T = T + _eye(A.shape[-1], A)
    return solve(T, B, left=left)


def cholesky(A, *, upper=False):
    """L (lower, A = L L^T) or U = L^T (upper=True) of a symmetric positive-definite A."""
    A, = autocast_args("linalg_cholesky", A)  # float32 under CPU autocast
    _check_matrix("linalg.cholesky", A)
    return _cholesky(A, upper=upper)


@export(name="cholesky", method=True)
def _legacy_cholesky(input, upper=False):
    """torch.cholesky (deprecated; warns): `linalg.cholesky` with `upper` a positional argument.

    Returns the lower factor L with A = L L^T, or U = L^T when `upper`. Complex matrices are
    not supported yet (NotImplementedError).
    """
    warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
         "a future PyTorch release.")
    return cholesky(input, upper=upper)


def qr(A, mode="reduced"):
    """(Q, R) with A = QR; mode 'reduced' (k = min(m, n) columns), 'complete' or 'r' (Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    A, = autocast_args("linalg_qr", A)  # float32 under CPU autocast
    _check_matrix("linalg.qr", A, square=False)
    return linalg_qr_result(*_qr(A, mode=mode))


@export(name="qr", method=True)
def _legacy_qr(input, some=True):
    """torch.qr: (Q, R) with A = QR, the reduced factors when `some` (the default), the complete
    ones otherwise; `linalg.qr` with torch's older `some` flag. Unlike torch, it does not warn
    that it is deprecated.
    """
    return qr_result(*qr(input, "reduced" if some else "complete"))


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh, S descending."""
    _check_driver("torch.linalg.svd", driver)
    A, = autocast_args("linalg_svd", A)  # float32 under CPU autocast
    _check_matrix("linalg.svd", A, square=False)
    return linalg_svd_result(*_svd(A, full_matrices=full_matrices))


@export(name="svd", method=True)
def _legacy_svd(input, some=True, compute_uv=True):
    """torch.svd: returns V (not Vh); compute_uv=False gives zero-filled U and V."""
    U, S, Vh = svd(input, full_matrices=not some)
    if not compute_uv:
        return svd_result(U.detach() * 0, S, Vh.mT.detach() * 0)
    return svd_result(U, S, Vh.mT)


def _check_driver(name, driver):
    if driver is not None:  # what torch says on the CPU (ember has no cuSOLVER path yet)
        raise RuntimeError(f"{name}: keyword argument `driver=` is only supported on CUDA "
                           "inputs with cuSOLVER backend.")


def svdvals(A, *, driver=None):
    """The singular values of A, in descending order."""
    _check_driver("torch.linalg.svdvals", driver)
    A, = autocast_args("linalg_svdvals", A)  # float32 under CPU autocast
    _check_matrix("linalg.svdvals", A, square=False)
    return _svdvals(A)


def _check_uplo(name, UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L"):
    """(eigenvalues ascending, eigenvectors) of a symmetric A, read from its UPLO triangle."""
    A, = autocast_args("linalg_eigh", A)  # float32 under CPU autocast
    _check_matrix("linalg.eigh", A)
    _check_uplo("linalg.eigh", UPLO)
    return linalg_eigh_result(*_eigh(A, UPLO=UPLO))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of a symmetric A, read from its UPLO triangle."""
    A, = autocast_args("linalg_eigvalsh", A)  # float32 under CPU autocast
    _check_matrix("linalg.eigvalsh", A)
    _check_uplo("linalg.eigvalsh", UPLO)
    return _eigvalsh(A, UPLO=UPLO)


def _tolerances(A, atol, rtol):
    """torch's defaults: rtol = eps * max(m, n) when neither is given, 0 when only atol is."""
    for name, value in (("atol", atol), ("rtol", rtol)):
        if isinstance(value, Tensor):
            raise NotImplementedError(f"{name} as a Tensor is not supported; pass a float")
    if rtol is None:
        rtol = dt.finfo(A.dtype).eps * builtins.max(A.shape[-2:]) if not atol else 0.0
    return float(atol or 0.0), float(rtol)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse; singular values below max(atol, rtol * largest) count
    as zero."""
    if A.ndim < 2 or not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.pinv({dt.scalar_name(A.dtype)}{{{list(A.shape)}}}): expected "
                           "a tensor with 2 or more dimensions of float, double, cfloat or "
                           "cdouble types")
    A, = autocast_args("linalg_pinv", A)  # float32 under CPU autocast
    _check_matrix("linalg.pinv", A, square=hermitian)
    atol, rtol = _tolerances(A, atol, rtol)
    return _pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


@export(method=True)
def pinverse(input, rcond=1e-15):
    """Moore-Penrose pseudo-inverse: `linalg.pinv` with relative tolerance `rcond` (singular values
    below rcond times the largest count as zero).
    """
    return pinv(input, rtol=rcond)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares X minimising |AX - B|, as torch's CPU drivers report it: gelsy (default)
    gives the rank, gelsd/gelss also the singular values, and every driver but gelsy the
    squared residuals when m > n and A has full rank."""
    _expect_tensors("linalg_lstsq", A=A, B=B)
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    A, B = autocast_args("linalg_lstsq", A, B)  # float32 under CPU autocast
    _check_matrix("torch.linalg.lstsq", A, square=False)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {dt.scalar_name(A.dtype)} and "
                           f"other's dtype {dt.scalar_name(B.dtype)}")
    vector = B.ndim == A.ndim - 1
    B2 = B.unsqueeze(-1) if vector else B
    if B2.shape[-2] != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    rcond = dt.finfo(A.dtype).eps * builtins.max(m, n) if rcond is None else float(rcond)
    X, residuals, rank = _lstsq(A, B2, rcond=rcond, residuals=driver != "gelsy" and m > n)
    if driver == "gels":
        rank = _creation.zeros(0, dtype=dt.int64, device=A.device)
    if driver in ("gelsd", "gelss"):
        with no_grad():
            values = _svdvals(A)
    else:
        values = _creation.zeros(0, dtype=A.dtype, device=A.device)
    return linalg_lstsq_result(X.squeeze(-1) if vector else X, residuals, rank, values)


def matrix_power(A, n):
    """A^n by repeated squaring; n < 0 inverts first, n == 0 gives the identity."""
    _expect_tensors("linalg_matrix_power", A=A)
    _check_square_only("linalg.matrix_power", A)
    if n < 0:
        _check_float("linalg.inv", A)
    if n == 0:
        eye = _eye(A.shape[-1], A).expand(A.shape)
        return A.clone().copy_(eye)  # torch's result still hangs off A (zero gradient)
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    result, power = None, A
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


@export(name="matrix_power", method=True)
def _legacy_matrix_power(input, n):
    """torch.matrix_power: linalg.matrix_power under torch's older parameter name."""
    return matrix_power(input, n)


def _check_square_only(name, A):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """How many singular values exceed max(atol, rtol * largest); int64, no gradient."""
    A, = autocast_args("linalg_matrix_rank", A)  # float32 under CPU autocast
    _check_matrix("linalg.matrix_rank", A, square=hermitian)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    return _matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """(sum |x|^ord)^(1/ord) over `dim` (all dims when None); ord may be inf, -inf or 0."""
    _expect_tensors("linalg_vector_norm", x=x)
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    _check_float("linalg.vector_norm", x, low_precision_ok=True, complex_ok=True)
    dims = wrap_dims(None if dim == () or dim == [] else dim, x.ndim)
    if ord < 0 and x.numel() == 0 or ord == _INF and x.numel() == 0:
        empty = [d for d in dims if x.shape[d] == 0]
        if dim is None or not dims or len(dims) == x.ndim:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                               "tensor because the operation does not have an identity")
        if empty:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on the "
                               f"dimension {empty[0]}because this dimension is empty and the "
                               "operation does not have an identity")
    return _vector_norm(x, ord=float(ord), dims=dims, keepdim=keepdim)  # reduce.py's norm op


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, _INF, -_INF)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """Frobenius ('fro'), nuclear ('nuc'), max column sum (1), max row sum (inf), largest
    singular value (2) and their minimum versions (-1, -inf, -2) over the two dims `dim`."""
    _expect_tensors("linalg_matrix_norm", A=A)
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    _check_float("linalg.matrix_norm", A, low_precision_ok=ord not in ("nuc", 2, -2))
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d0, d1 = (wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in (1, -1, _INF, -_INF):
        summed, extreme = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = vector_norm(A, 1, summed, keepdim=True)
        result = vector_norm(sums, _INF if ord > 0 else -_INF, extreme, keepdim=True)
        return result if keepdim else result.squeeze((d0, d1))
    # nuc and +-2 work on the singular values of the matrices in dims (d0, d1)
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    values = svdvals(A.permute(rest + [d0, d1]))
    if ord == "nuc":
        result = values.sum(-1)
    else:
        result = vector_norm(values, _INF if ord == 2 else -_INF, -1)
    if keepdim:
        for d in sorted((d0, d1)):
            result = result.unsqueeze(d)
    return result


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """linalg.norm: a vector norm over one dim (or the flattened input when ord is None), a
    matrix norm over two dims."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def cond(A, p=None):
    """Condition number: largest / smallest singular value (p None, 2), the reverse (-2), or
    matrix_norm(A, p) * matrix_norm(inv(A), p)."""
    A, = autocast_args("linalg_cond", A)  # float32 under CPU autocast
    _check_matrix("linalg.cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        values = svdvals(A)
        largest, smallest = values[..., 0], values[..., -1]
        return largest / smallest if p != -2 else smallest / largest
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def vecdot(x, y, *, dim=-1):
    """sum(x * y, dim) with broadcasting (the dot product of vectors along `dim`)."""
    _expect_tensors("linalg_vecdot", x=x, y=y)
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {dt.scalar_name(x.dtype)} and y of type "
                           f"{dt.scalar_name(y.dtype)} instead")
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """torch.diagonal with the last two dims as default."""
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


# ----------------------------------------------------------------------------------------------
# tensor equations, Vandermonde matrices, torch's older norm names, and the functions torch
# removed in 1.9 (they raise, as torch's do, saying what replaces them)


def tensorinv(input, ind=2):
    """The tensor X with tensordot(input, X, ind) = identity: inv of input reshaped to
    (prod(shape[:ind]), prod(shape[ind:])), given the shape shape[ind:] + shape[:ind]."""
    _expect_tensors("linalg_tensorinv", input=input)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(input.shape[:ind]), math.prod(input.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(input.reshape(rows, cols)).reshape(input.shape[ind:] + input.shape[:ind])


def tensorsolve(input, other, dims=None):
    """X with tensordot(input, X, X.ndim) = other; `dims` are moved to input's end first."""
    _expect_tensors("linalg_tensorsolve", input=input, other=other)
    if dims is not None:
        dims = [wrap_dim(d, input.ndim) for d in dims]
        kept = [d for d in range(input.ndim) if d not in dims]
        input = input.permute(kept + dims)
    rows = math.prod(input.shape[:other.ndim])
    cols = math.prod(input.shape[other.ndim:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    result = solve(input.reshape(rows, cols), other.reshape(rows))
    return result.reshape(input.shape[other.ndim:])


def _powers(x, N):
    """[1, x, x^2, ..., x^(N-1)] along a new last dim, as a running product (so x = 0 has the
    derivative of x^k, not the nan of k x^(k-1) at k = 0)."""
    ones = _creation.ones(x.shape + (1,), dtype=x.dtype, device=x.device)
    if N == 1:
        return ones
    return cat([ones, x.unsqueeze(-1).expand(x.shape + (N - 1,)).cumprod(-1)], -1)


def vander(x, N=None):
    """linalg.vander: x[..., i] ** j for j = 0 .. N-1 (increasing powers; N defaults to x's
    last size), batched."""
    _expect_tensors("linalg_vander", x=x)
    if x.dtype is dt.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    N = x.shape[-1] if N is None and x.ndim else N
    if x.ndim == 0 or N is None or N <= 1:
        raise RuntimeError("N must be greater than 1.")
    return _powers(x, N)


@export(name="vander")
def _legacy_vander(x, N=None, increasing=False):
    """torch.vander: a 1-D x's powers, decreasing unless `increasing`; bools count as int64."""
    _expect_tensors("vander", x=x)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype is dt.bool:
        x = x.long()
    if N == 0:
        return _creation.empty((x.shape[0], 0), dtype=x.dtype, device=x.device)
    result = _powers(x, N)
    return result if increasing else result.flip(-1)


@export(method=True)
def dist(input, other, p=2):
    """The p-norm of input - other (broadcast): vector_norm(input - other, p)."""
    _expect_tensors("dist", input=input, other=other)
    difference = input - other
    if not difference.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {dt.scalar_name(difference.dtype)} instead.")
    return vector_norm(difference, p)


@export
def frobenius_norm(input, dim, keepdim=False):
    """sqrt(sum x^2) over `dim` (torch keeps it for TorchScript; use linalg.vector_norm)."""
    warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will "
         "be removed in a future PyTorch release. Please use "
         "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    return vector_norm(input, 2, dim, keepdim)


@export
def nuclear_norm(input, dim=None, keepdim=False, *, dtype=None):
    """The sum of singular values over the two dims `dim` (the last two when None); torch
    keeps it for TorchScript: use linalg.matrix_norm(A, 'nuc')."""
    warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
         "removed in a future PyTorch release. Please use "
         "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if dim is None:
        if input.ndim != 2:
            raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.ndim} dimension{'s' if input.ndim != 1 else ''} instead.")
        dim = (-2, -1)
    return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)


_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_REMOVED_HOW = {
    "lstsq": "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq`"
             " has reversed arguments and does not return the QR decomposition in the returned "
             "tuple (although it returns other information about the problem).\n\nTo get the QR "
             "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
             "`torch.lstsq` stored the residuals of the solution in the last m - n columns of "
             "the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in "
             "the field 'residuals' of the returned named tuple.\n\nThe unpacking of the "
             "solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be "
             "replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    "symeig": "The default behavior has changed from using the upper triangular portion of the "
              "matrix by default to using the lower triangular portion.\n\nL, _ = "
              "torch.symeig(A, upper=upper)\nshould be replaced with:\nL = "
              "torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
              "torch.symeig(A, eigenvectors=True)\nshould be replaced with:\nL, V = "
              "torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    "eig": "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
           "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A)\nshould be "
           "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
           "eigenvectors=True)\nshould be replaced with:\nL_complex, V_complex = "
           "torch.linalg.eig(A)",
    "solve": "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve`"
             " has its arguments reversed and does not return the LU factorization.\n\nTo get "
             "the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
             "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
             "torch.linalg.solve(A, B)",
    "matrix_rank": "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
                   "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.",
}


def _removed(name, method):
    def removed(*args, **kwargs):
        raise RuntimeError(_REMOVED + _REMOVED_HOW[name])
    removed.__name__ = name
    removed.__doc__ = (f"Removed in torch 1.9 (raises, as torch's does): "
                       f"{_REMOVED_HOW[name].strip().splitlines()[0]}")
    export(removed, name=name, method=method)


for _name in ("lstsq", "symeig", "eig", "solve", "matrix_rank"):
    _removed(_name, method=_name != "matrix_rank")
# forward mode and vmap (see ops/_op.py). Products are linear in each operand (MULTILINEAR);
# `beta * c + alpha * product` adds c's part; the decompositions take their tangents from
# their backward rules. Batching: a product becomes one matmul, whose batch dims broadcast
# (vector operands as one-row or one-column matrices); decompositions of the last two dims
# batch as any leading dim does.


def _product(a, b, batched, conj_a=False):
    """a @ b on batched values (a or b a vector when 1-D per sample)."""
    (fa, fb) = batched
    vector_a = batch_rules.logical_ndim(a, fa) == 1
    vector_b = batch_rules.logical_ndim(b, fb) == 1
    if conj_a:
        a = a.conj()
    if vector_a:
        a = a.unsqueeze(-2)
    if vector_b:
        b = b.unsqueeze(-1)
    ndim = builtins.max(batch_rules.logical_ndim(a, fa), batch_rules.logical_ndim(b, fb))
    out = _matmul(batch_rules.pad(a, ndim) if fa else a, batch_rules.pad(b, ndim) if fb else b)
    if vector_b:
        out = out.squeeze(-1)
    if vector_a:
        out = out.squeeze(-1 if vector_b else -2)
    return out


def _product_batch(op, values, batched, attrs):
    return _product(values[0], values[1], batched, conj_a=op is _vdot)


def _addmm_batch(op, values, batched, attrs):
    """beta * c + alpha * product, the product taken as _product_batch takes it."""
    c, a, b = values
    if op is _addr:
        product = batch_rules.pointwise(_mul_op(), [a.unsqueeze(-1), b.unsqueeze(-2)],
                                        batched[1:], {})
    else:
        product = _product(a, b, batched[1:])
        if op is _addbmm:
            product = product.sum(1 if builtins.any(batched[1:]) else 0)
    alpha, beta = attrs["alpha"], attrs["beta"]
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    if beta != 1:
        c = c * beta
    return batch_rules.pointwise(_add_op(), [c, product], (batched[0], True), {})


def _mul_op():
    from .pointwise import _mul

    return _mul


def _add_op():
    from .pointwise import _add

    return _add


def _affine_jvp(c_t, a_t, b_t, c, a, b, beta, alpha, op):
    """d(beta * c + alpha * product(a, b)): the op itself with beta = 0 gives alpha *
    product, and `product` is linear in each operand. c's tangent is scaled by beta even
    when beta is 0 (so inf becomes nan, as in torch's formula)."""
    total = None
    if c_t is not None:
        total = c_t if beta == 1 else c_t * beta
    for part in (op(c, a_t, b, beta=0, alpha=alpha) if a_t is not None else None,
                 op(c, a, b_t, beta=0, alpha=alpha) if b_t is not None else None):
        if part is not None:
            total = part if total is None else total + part
    return total


def _affine_jvp_for(op):
    if op is _addr:
        return lambda c_t, u_t, v_t, c, u, v, beta, alpha: _affine_jvp(
            c_t, u_t, v_t, c, u, v, beta, alpha, op)
    return lambda c_t, a_t, b_t, c, a, b, beta, alpha: _affine_jvp(
        c_t, a_t, b_t, c, a, b, beta, alpha, op)


def _trace_batch(op, values, batched, attrs):
    return _trace_of(values[0])


def _trace_of(a):
    return a.diagonal(0, 1, 2).sum(-1)


def _cross_batch(op, values, batched, attrs):
    ndim = builtins.max(batch_rules.logical_ndim(v, f) for v, f in zip(values, batched))
    a, b = (batch_rules.pad(v, ndim) if f else v for v, f in zip(values, batched))
    return _cross(*batch_rules.all_batched([a, b], batched), dim=attrs["dim"] + 1)


def _einsum_batch(op, values, batched, attrs):
    """A new label for the batch, in front of every batched operand and of the result."""
    inputs, output = _split_equation(attrs["equation"])
    label = next(c for c in string.ascii_letters if c not in attrs["equation"])
    terms = [label + t if b else t for t, b in zip(inputs, batched)]
    return _einsum(*values, equation=",".join(terms) + "->" + label + output)


for _op in (_mm, _bmm, _mv, _dot, _vdot, _matmul, _cross, _einsum):
    _op.jvp(MULTILINEAR)
for _op in (_addmm, _addmv, _addr, _baddbmm, _addbmm):
    _op.jvp(_affine_jvp_for(_op)).batch(_addmm_batch)
for _op in (_mm, _bmm, _mv, _dot, _vdot, _matmul):
    _op.batch(_product_batch)
for _op in (_inv, _det, _slogdet, _cholesky, _qr, _svd, _svdvals, _eigh, _eigvalsh, _pinv,
            _matrix_rank):
    _op.batch(batch_rules.leading)
_trace.jvp(LINEAR).batch(_trace_batch)
_cross.batch(_cross_batch)
_einsum.batch(_einsum_batch)
del _op

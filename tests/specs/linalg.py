"""Rows for ember/ops/linalg.py: products, einsum, and ember.linalg's decompositions.

Decompositions get well-conditioned inputs built inside the lambda from a random B, so the
gradient flows back to B: `spd(m, B)` = B B^T + n I (symmetric positive-definite, distinct
eigenvalues), `shifted(m, A)` = A + n I (comfortably invertible). Singular and eigenvectors are
only defined up to sign, so rows return sign-free functions of them (U * U, U diag(c) Vh);
the rules still see gradients for U and Vh.
"""
from ._spec import I, Spec, T


def spd(m, b):
    n = b.shape[-1]
    return b @ b.mT + n * m.eye(n, dtype=b.dtype)


def shifted(m, a):
    n = a.shape[-1]
    return a + n * m.eye(n, dtype=a.dtype)


def _svd_parts(m, a, full_matrices=False):
    U, S, Vh = m.linalg.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    weights = m.arange(1, k + 1, dtype=a.dtype)
    return S, U * U, Vh * Vh, (U * weights) @ Vh


def _eigh_parts(m, a, uplo="L"):
    w, V = m.linalg.eigh(a, UPLO=uplo)
    weights = m.arange(1, w.shape[-1] + 1, dtype=a.dtype)
    return w, V * V, (V * weights) @ V.mT


EINSUM = [  # (equation, operand makers)
    ("ij,jk->ik", (T(3, 4), T(4, 5))),                       # matrix product
    ("ij,jk", (T(3, 4, t=True), T(4, 5))),                   # implicit output, transposed input
    ("bij,bjk->bik", (T(2, 3, 4), T(2, 4, 5))),              # batch
    ("ii", (T(4, 4),)),                                      # trace
    ("ii->i", (T(4, 4),)),                                   # diagonal
    ("i,j->ij", (T(3), T(4))),                               # outer
    ("ij->ji", (T(3, 4),)),                                  # transpose
    ("ba", (T(3, 4),)),                                      # implicit transpose
    ("...ij,...jk", (T(2, 3, 4), T(4, 5))),                  # ellipsis, broadcast batch
    ("...ij,...jk->...ik", (T(2, 1, 3, 4), T(5, 4, 2))),    # ellipsis with size-1 broadcast
    ("bhqd,bhkd->bhqk", (T(2, 3, 4, 5), T(2, 3, 6, 5))),     # attention scores
    ("ij->", (T(3, 4),)),                                    # sum of everything
    ("ij,ij->", (T(3, 4), T(3, 4))),                         # Frobenius inner product
    ("i,i->i", (T(4), T(4))),                                # elementwise
    ("ij,jk,kl->il", (T(2, 3), T(3, 4), T(4, 5))),           # chain, contraction order
    ("iij->j", (T(3, 3, 4),)),                               # diagonal summed
    ("iji->j", (T(3, 4, 3),)),                               # repeated label apart
    ("bn,anm,bm->ba", (T(2, 3), T(5, 3, 4), T(2, 4))),       # bilinear
    ("i,i->", (T(1), T(4))),                                 # size-1 label broadcast
    ("ij,k->ik", (T(2, 3), T(4))),                           # label summed inside one operand
    ("...i->...", (T(2, 3, 4),)),                            # ellipsis kept, label summed
    ("i...->...", (T(3, 2, 2),)),                            # leading label summed
    ("a...b,b...c->...ac", (T(2, 3, 4), T(4, 3, 5))),        # ellipsis in the middle
    ("ijk,jil->kl", (T(2, 3, 4), T(3, 2, 5))),               # two labels contracted
]

SPECS = [
    # ---------------------------------------------------------------- products
    Spec("matmul", lambda m, a, b: a @ b,
         [(T(3, 4), T(4, 5)), (T(4), T(4)), (T(4), T(2, 4, 3)), (T(2, 3, 4), T(4)),
          (T(2, 1, 3, 4), T(5, 4, 2)), (T(3, 4, t=True), T(4, 5)), (T(3, 4), T(4)),
          (T(4), T(4, 3)), (T(2, 3, 4), T(4, 5)), (T(3, 4), T(2, 4, 5)), (T(4), T(2, 2, 4, 3)),
          (T(2, 2, 3, 4), T(4)), (T(0, 3), T(3, 2)), (T(2, 0), T(0, 3)),
          (I(3, 4), I(4, 2)), (I(2, 3, dtype="int32"), I(3, dtype="int32")),
          (T(3, 4, dtype="float64"), T(4, 2, dtype="float64")),
          (T(3, 4, dtype="float16"), T(4, 2, dtype="float16")),
          (T(3, 4, dtype="bfloat16"), T(4, 2, dtype="bfloat16"))],
         ops=["matmul", "mm", "mv", "dot"]),
    Spec("mm", lambda m, a, b: m.mm(a, b), [(T(3, 4), T(4, 5)), (T(4, 3, t=True), T(3, 2))]),
    Spec("bmm", lambda m, a, b: m.bmm(a, b), [(T(2, 3, 4), T(2, 4, 5)), (I(2, 2, 3), I(2, 3, 1))]),
    Spec("mv", lambda m, a, b: a.mv(b), [(T(3, 4), T(4)), (T(4, 3, t=True), T(3))]),
    Spec("dot", lambda m, a, b: m.dot(a, b), [(T(5), T(5)), (I(4), I(4)), (T(0), T(0))]),
    Spec("vdot", lambda m, a, b: m.vdot(a, b), [(T(5), T(5))]),
    Spec("addmm", lambda m, c, a, b: m.addmm(c, a, b),
         [(T(3, 5), T(3, 4), T(4, 5)), (T(5), T(3, 4), T(4, 5)), (I(3, 2), I(3, 4), I(4, 2))]),
    Spec("addmm_scaled", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=-2.0),
         [(T(3, 5), T(3, 4), T(4, 5)), (T(1, 5), T(3, 4), T(4, 5))], ops=["addmm"]),
    Spec("addmm_beta0", lambda m, c, a, b: m.addmm(c / 0.0, a, b, beta=0),
         [(T(3, 5), T(3, 4), T(4, 5))], ops=["addmm"], gradcheck=False),
    Spec("addmm_", lambda m, c, a, b: c.clone().addmm_(a, b, beta=2, alpha=0.5),
         [(T(3, 5), T(3, 4), T(4, 5))], ops=["addmm"]),
    Spec("addmv", lambda m, c, a, v: m.addmv(c, a, v, beta=2, alpha=3),
         [(T(3), T(3, 4), T(4)), (T(), T(3, 4), T(4))]),
    Spec("addmv_", lambda m, c, a, v: c.clone().addmv_(a, v), [(T(3), T(3, 4), T(4))],
         ops=["addmv"]),
    Spec("addr", lambda m, c, u, v: m.addr(c, u, v, beta=0.5, alpha=2),
         [(T(3, 4), T(3), T(4)), (T(4), T(3), T(4))]),
    Spec("addr_", lambda m, c, u, v: c.clone().addr_(u, v), [(T(3, 4), T(3), T(4))],
         ops=["addr"]),
    Spec("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b, beta=-1, alpha=2),
         [(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)), (T(3, 5), T(2, 3, 4), T(2, 4, 5))]),
    Spec("baddbmm_", lambda m, c, a, b: c.clone().baddbmm_(a, b),
         [(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5))], ops=["baddbmm"]),
    Spec("addbmm", lambda m, c, a, b: m.addbmm(c, a, b, beta=0.5, alpha=2),
         [(T(3, 5), T(2, 3, 4), T(2, 4, 5)), (T(5), T(2, 3, 4), T(2, 4, 5))]),
    Spec("addbmm_", lambda m, c, a, b: c.clone().addbmm_(a, b),
         [(T(3, 5), T(2, 3, 4), T(2, 4, 5))], ops=["addbmm"]),
    # ---------------------------------------------------------------- compositions
    Spec("outer", lambda m, a, b: (m.outer(a, b), a.ger(b)), [(T(3), T(4)), (T(3), I(2))],
         ops=[]),
    Spec("inner", lambda m, a, b: m.inner(a, b),
         [(T(3), T(3)), (T(2, 3), T(4, 3)), (T(2, 3, 4), T(5, 4)), (T(), T(2, 3))], ops=[]),
    Spec("tensordot", lambda m, a, b: (m.tensordot(a, b, dims=2), m.tensordot(a, b, 1 - 1)),
         [(T(2, 3, 4), T(3, 4, 5))], ops=["mm"]),
    Spec("tensordot_lists", lambda m, a, b: m.tensordot(a, b, dims=([0, 2], [2, 0])),
         [(T(2, 3, 4), T(4, 5, 2))], ops=["mm"]),
    Spec("kron", lambda m, a, b: m.kron(a, b),
         [(T(2, 3), T(4, 5)), (T(3), T(2, 2)), (T(2, 1, 3), T(2, 2))], ops=[]),
    Spec("multi_dot", lambda m, a, b, c, d: m.linalg.multi_dot([a, b, c, d]),
         [(T(2, 10), T(10, 3), T(3, 8), T(8, 1)), (T(4), T(4, 3), T(3, 5), T(5))], ops=["mm"]),
    Spec("chain_matmul", lambda m, a, b, c: m.chain_matmul(a, b, c),
         [(T(5, 2), T(2, 6), T(6, 3))], ops=["mm"]),
    Spec("trace", lambda m, a: m.trace(a), [(T(3, 3),), (T(2, 4),), (I(3, 3, dtype="int32"),)]),
    Spec("linalg_cross", lambda m, a, b: (m.linalg.cross(a, b), m.cross(a, b, dim=0)),
         [(T(3, 3), T(3, 3)), (I(3, 3), I(3, 3))]),
    Spec("cross_broadcast", lambda m, a, b: m.linalg.cross(a, b, dim=1),
         [(T(4, 3), T(1, 3)), (T(2, 3, 2), T(2, 3, 2))], ops=["linalg_cross"]),
    # ---------------------------------------------------------------- einsum
    *[Spec(f"einsum '{eq}'", lambda m, *ops, eq=eq: m.einsum(eq, *ops), [case], ops=["einsum"])
      for eq, case in EINSUM],
    Spec("einsum_forms", lambda m, a, b: (m.einsum("ij,jk->ik", [a, b]),
                                          m.einsum(a, [0, 1], b, [1, 2], [0, 2]),
                                          m.einsum(a, [Ellipsis, 1], b, [1, 2])),
         [(T(3, 4), T(4, 5))], ops=["einsum"]),
    Spec("einsum_repeated_operand", lambda m, a: m.einsum("ij,ij,jk->ik", a, a, a.mT),
         [(T(3, 3),)], ops=["einsum"]),
    Spec("einsum_dtypes", lambda m, a, b: (m.einsum("ij,jk", a, b), m.einsum("ij->j", a)),
         [(I(2, 3), I(3, 2)), (I(2, 3, dtype="int32"), I(3, 2, dtype="int32")),
          (T(2, 3, dtype="float16"), T(3, 2, dtype="float16")),
          (T(2, 3, dtype="float64"), T(3, 2, dtype="float64"))], ops=["einsum"]),
    # ---------------------------------------------------------------- decompositions
    Spec("linalg_inv", lambda m, a: m.linalg.inv(shifted(m, a)),
         [(T(3, 3),), (T(2, 4, 4),), (T(0, 0),)]),
    Spec("inverse", lambda m, a: m.inverse(shifted(m, a)), [(T(3, 3, t=True),)],
         ops=["linalg_inv"]),
    Spec("linalg_det", lambda m, a: (m.linalg.det(shifted(m, a)), a.det()),
         [(T(3, 3),), (T(2, 4, 4),)]),
    Spec("linalg_slogdet", lambda m, a: tuple(m.linalg.slogdet(a - 2 * m.eye(3))),
         [(T(3, 3),), (T(2, 3, 3),)]),
    Spec("logdet", lambda m, a: (m.logdet(spd(m, a)), m.slogdet(spd(m, a)).logabsdet),
         [(T(3, 3),)], ops=["linalg_slogdet"]),
    Spec("linalg_solve", lambda m, a, b: m.linalg.solve(shifted(m, a), b),
         [(T(3, 3), T(3, 2)), (T(3, 3), T(3)), (T(2, 3, 3), T(3, 4)), (T(2, 3, 3), T(2, 3)),
          (T(1, 3, 3), T(2, 3, 1))]),
    Spec("linalg_solve_right", lambda m, a, b: m.linalg.solve(shifted(m, a), b, left=False),
         [(T(3, 3), T(2, 3))], ops=["linalg_solve"]),
    Spec("solve_triangular", lambda m, a, b: (
        m.linalg.solve_triangular(shifted(m, a), b, upper=True),
        m.linalg.solve_triangular(shifted(m, a), b, upper=False, unitriangular=True),
        m.linalg.solve_triangular(shifted(m, a), b.mT, upper=True, left=False)),
         [(T(3, 3), T(3, 2)), (T(2, 3, 3), T(3, 4))], ops=["linalg_solve"]),
    Spec("linalg_cholesky", lambda m, b: (m.linalg.cholesky(spd(m, b)),
                                          m.linalg.cholesky(spd(m, b), upper=True)),
         [(T(4, 4),), (T(2, 3, 3),)]),
    Spec("linalg_qr", lambda m, a: tuple(m.linalg.qr(a)),
         [(T(4, 3),), (T(3, 3),), (T(2, 5, 3),), (T(3, 5),)]),
    Spec("linalg_qr_complete", lambda m, a: tuple(m.linalg.qr(a, mode="complete")),
         [(T(3, 4),), (T(4, 3),)], ops=["linalg_qr"], grad=False),
    Spec("linalg_qr_complete_grad", lambda m, a: tuple(m.linalg.qr(a, mode="complete")),
         [(T(3, 4),)], ops=["linalg_qr"]),
    Spec("linalg_qr_r", lambda m, a: m.linalg.qr(a, mode="r").R, [(T(4, 3),), (T(3, 4),)],
         ops=["linalg_qr"], grad=False),
    Spec("linalg_svd", lambda m, a: _svd_parts(m, a),
         [(T(4, 3),), (T(3, 3),), (T(3, 5),), (T(2, 4, 3),)]),
    Spec("linalg_svd_full", lambda m, a: _svd_parts(m, a, full_matrices=True),
         [(T(4, 3),), (T(3, 5),)], ops=["linalg_svd"]),
    Spec("linalg_svdvals", lambda m, a: m.linalg.svdvals(a),
         [(T(4, 3),), (T(2, 3, 5),)]),
    Spec("linalg_eigh", lambda m, b: _eigh_parts(m, spd(m, b)), [(T(4, 4),), (T(2, 3, 3),)]),
    Spec("linalg_eigh_upper", lambda m, b: _eigh_parts(m, spd(m, b), "U"), [(T(3, 3),)],
         ops=["linalg_eigh"]),
    # only one triangle is read; the gradient is symmetrised, as torch's
    Spec("linalg_eigh_triangle", lambda m, a: _eigh_parts(m, a, "U"), [(T(3, 3),)],
         ops=["linalg_eigh"], gradcheck=False),
    Spec("linalg_eigvalsh", lambda m, b: m.linalg.eigvalsh(spd(m, b)),
         [(T(4, 4),), (T(2, 3, 3),)]),
    Spec("linalg_pinv", lambda m, a: m.linalg.pinv(a), [(T(4, 3),), (T(3, 5),), (T(2, 3, 3),)]),
    Spec("pinv_rank_deficient", lambda m, a, b: m.linalg.pinv(a @ b),
         [(T(4, 2), T(2, 3))], ops=["linalg_pinv", "mm"]),
    Spec("pinv_hermitian", lambda m, b: m.linalg.pinv(spd(m, b), hermitian=True),
         [(T(3, 3),)], ops=["linalg_pinv"]),
    Spec("linalg_lstsq", lambda m, a, b: tuple(m.linalg.lstsq(a, b)),
         [(T(5, 3), T(5, 2)), (T(3, 3), T(3)), (T(2, 4, 3), T(1, 4, 2)), (T(3, 5), T(3, 2))]),
    Spec("lstsq_gelsd", lambda m, a, b: tuple(m.linalg.lstsq(a, b, driver="gelsd")),
         [(T(5, 3), T(5, 2))], ops=["linalg_lstsq", "linalg_svdvals"]),
    Spec("linalg_matrix_rank", lambda m, a, b: (m.linalg.matrix_rank(a @ b),
                                                m.linalg.matrix_rank(a @ a.mT, hermitian=True),
                                                m.linalg.matrix_rank(a, atol=1.0, rtol=0.0)),
         [(T(4, 2), T(2, 3)), (T(2, 4, 2), T(2, 2, 3))], grad=False),
    Spec("matrix_power", lambda m, a: tuple(m.linalg.matrix_power(shifted(m, a), n)
                                            for n in (0, 1, 2, 3, 5, -1, -2)),
         [(T(3, 3),), (T(2, 3, 3),)], ops=[]),
    Spec("matrix_power_int", lambda m, a: m.matrix_power(a, 3), [(I(3, 3),)], ops=[]),
    # ---------------------------------------------------------------- norms
    Spec("norm", lambda m, a: tuple(m.linalg.vector_norm(a, ord)
                                                  for ord in (2, 1, 3, 0.5, float("inf"),
                                                              -float("inf"), 0, -1)),
         [(T(3, 4),), (T(5),), (T(),)]),
    Spec("vector_norm_dims", lambda m, a: (m.linalg.vector_norm(a, dim=1, keepdim=True),
                                           m.linalg.vector_norm(a, 3, dim=(0, 2)),
                                           m.linalg.vector_norm(a, float("inf"), dim=-1)),
         [(T(2, 3, 4),), (T(2, 3, 4, dtype="float16"),)], ops=["norm"],
         grad_rtol=1e-2, grad_atol=1e-3),  # float16 gradients differ from torch's by an ulp
    Spec("vector_norm_zeros", lambda m, a: (m.linalg.vector_norm(a * 0),
                                            m.linalg.vector_norm(a * 0, 3),
                                            m.linalg.vector_norm(a * 0, 0.5)),
         [(T(3),)], ops=["norm"], gradcheck=False),
    Spec("vector_norm_ties", lambda m, a: (m.linalg.vector_norm(a.expand(2, 3), float("inf")),
                                           m.linalg.vector_norm(a.expand(2, 3), -float("inf"))),
         [(T(3),)], ops=["norm"]),
    Spec("matrix_norm", lambda m, a: tuple(m.linalg.matrix_norm(a, ord)
                                           for ord in ("fro", "nuc", 1, -1, 2, -2, float("inf"),
                                                       -float("inf"))),
         [(T(3, 4),), (T(2, 3, 3),)], ops=["norm", "linalg_svdvals"]),
    Spec("matrix_norm_dims", lambda m, a: (m.linalg.matrix_norm(a, 1, dim=(0, 2)),
                                           m.linalg.matrix_norm(a, "nuc", dim=(2, 0),
                                                                keepdim=True),
                                           m.linalg.matrix_norm(a, float("inf"), dim=(-1, 0),
                                                                keepdim=True)),
         [(T(3, 2, 4),)], ops=["norm", "linalg_svdvals"]),
    Spec("linalg_norm", lambda m, a: (m.linalg.norm(a), m.linalg.norm(a, 2), m.linalg.norm(a, 1),
                                      m.linalg.norm(a, "fro"), m.linalg.norm(a, dim=0),
                                      m.linalg.norm(a, 3, dim=1, keepdim=True)),
         [(T(3, 4),)], ops=["norm", "linalg_svdvals"]),
    Spec("cond", lambda m, a: tuple(m.linalg.cond(shifted(m, a), p) for p in (None, 2, -2)),
         [(T(3, 3),)], ops=["linalg_svdvals"]),
    # torch's own backward fails for these orders (it reuses an inverse it modified in place)
    Spec("cond_norms", lambda m, a: tuple(m.linalg.cond(shifted(m, a), p)
                                          for p in ("fro", "nuc", 1, float("inf"))),
         [(T(3, 3),)], ops=["linalg_inv"], grad=False),
    Spec("vecdot", lambda m, a, b: (m.linalg.vecdot(a, b), m.linalg.vecdot(a, b, dim=0)),
         [(T(3, 4), T(3, 4)), (T(3, 4), T(4))], ops=[]),
    Spec("top_level_aliases", lambda m, a: (m.pinverse(a), a.pinverse(), m.qr(a).R, a.qr()[1],
                                            m.svd(a).S, (a.svd().V * a.svd().V)[:, :3]),
         [(T(4, 3),)], ops=["linalg_pinv", "linalg_qr", "linalg_svd"]),
    Spec("matrix_power_method", lambda m, a: shifted(m, a).matrix_power(-3), [(T(3, 3),)],
         ops=[]),
    Spec("linalg_diagonal", lambda m, a: (m.linalg.diagonal(a),
                                          m.linalg.diagonal(a, offset=1, dim1=0, dim2=2)),
         [(T(3, 4, 4),)], ops=[]),
    Spec("linalg_matmul", lambda m, a, b: m.linalg.matmul(a, b), [(T(2, 3, 4), T(4, 2))],
         ops=["matmul"]),
]

SPECS += [
    # ---------------------------------------------------------------- tensor equations, vander
    Spec("tensorinv", lambda m, a: (m.linalg.tensorinv(shifted(m, a).reshape(2, 3, 6), ind=2),
                                    m.linalg.tensorinv(shifted(m, a).reshape(6, 2, 3), ind=1)),
         [(T(6, 6),)], ops=["linalg_inv"]),
    Spec("tensorsolve", lambda m, a, b: (
        m.linalg.tensorsolve(shifted(m, a).reshape(2, 3, 6), b.reshape(2, 3)),
        m.linalg.tensorsolve(shifted(m, a), b, dims=(0,))),
         [(T(6, 6), T(6))], ops=["linalg_solve"]),
    Spec("linalg_vander", lambda m, x: (m.linalg.vander(x), m.linalg.vander(x, N=2)),
         [(T(2, 3),), (T(1, 4, t=True),)], ops=[]),
    Spec("vander_zeros_and_ints", lambda m, x, i: (m.linalg.vander(x * 0), m.linalg.vander(i),
                                                   m.vander(i, N=0), m.vander(i > 2)),
         [(T(3,), I(3))], ops=[]),
    # torch.vander's own backward fails (an in-place cumprod on a view): forward only here,
    # the gradient is checked against linalg.vander's in tests/test_linalg_extra.py
    Spec("vander", lambda m, x: (m.vander(x), m.vander(x, N=4, increasing=True)),
         [(T(3,),), (I(4),)], ops=[], grad=False),
    Spec("dist", lambda m, a, b: (m.dist(a, b), a.dist(b, p=1), m.dist(a, b, float("inf")),
                                  m.dist(a, b, 3.5)),
         [(T(3, 4), T(4)), (T(2, 3), T(2, 3, dtype="float64"))], ops=["norm"]),
    Spec("dist_zero_norm", lambda m, a, b: (m.dist(a, b, 0), m.dist(a, b, p=2)),
         [(T(3, 4), T(4)), (T(0, 3), T(3))], ops=["norm"], grad=False),
    Spec("frobenius_nuclear_norm", lambda m, a: (m.frobenius_norm(a, dim=(0, 1)),
                                                 m.frobenius_norm(a, dim=1, keepdim=True),
                                                 m.nuclear_norm(a),
                                                 m.nuclear_norm(a, keepdim=True)),
         [(T(3, 4),)], ops=["norm", "linalg_svdvals"]),
]

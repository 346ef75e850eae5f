"""One sample call for each function torch accepts `out=` for, run in torch and in ember.

`CALLS[name](m, d)` returns `(function, args, kwargs)`; `d` holds the inputs below as the
library's tensors. tests/test_calling_conventions.py calls `function(*args, **kwargs, out=...)`
with outs of the right size, of no elements, of a wrong size and of another dtype, in both
libraries, and compares.
"""
import numpy as np

_rng = np.random.default_rng(7)
_spd = _rng.uniform(-1, 1, (3, 3))
INPUTS = {
    "x": _rng.uniform(0.1, 0.9, (2, 3)).astype(np.float32),
    "y": _rng.uniform(0.5, 1.5, (2, 3)).astype(np.float32),
    "z": _rng.uniform(0.5, 1.5, (2, 3)).astype(np.float32),
    "big": _rng.uniform(1.5, 3.0, (2, 3)).astype(np.float32),
    "v": _rng.uniform(-1, 1, 3).astype(np.float32),
    "w": _rng.uniform(-1, 1, 3).astype(np.float32),
    "u": _rng.uniform(-1, 1, 2).astype(np.float32),
    "sq": (_spd @ _spd.T + 3 * np.eye(3)).astype(np.float32),
    "b3": _rng.uniform(-1, 1, (2, 3, 3)).astype(np.float32),
    "b34": _rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32),
    "m34": _rng.uniform(-1, 1, (3, 4)).astype(np.float32),
    "n": _rng.integers(0, 5, (2, 3)).astype(np.int64),
    "k": _rng.integers(1, 4, (2, 3)).astype(np.int64),
    "idx": np.array([0, 2], dtype=np.int64),
    "gidx": np.array([[0, 1, 0], [1, 0, 1]], dtype=np.int64),
    "mask": np.array([[True, False, True], [False, True, True]]),
    "sorted": np.array([0.2, 0.4, 0.6, 0.8], dtype=np.float32),
    "probs": np.array([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]], dtype=np.float32),
}

UNARY = """abs absolute acos arccos asin arcsin asinh arcsinh atan arctan atanh arctanh ceil cos
cosh deg2rad erf erfc erfinv exp exp2 expm1 fix floor frac log log10 log1p log2 neg negative
rad2deg reciprocal round rsqrt sgn sigmoid sign signbit sin sinh sqrt square tan tanh trunc
logit nan_to_num isneginf isposinf logical_not""".split()
BINARY = """add sub mul div divide multiply subtract true_divide floor_divide remainder fmod pow
atan2 arctan2 copysign hypot maximum minimum fmax fmin logaddexp logaddexp2 nextafter
float_power xlogy eq ne lt le gt ge greater greater_equal less less_equal not_equal
logical_and logical_or logical_xor""".split()
INTEGER_BINARY = """bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift
gcd lcm""".split()
REDUCTIONS = """all any amax amin argmax argmin mean sum nansum nanmean prod std var logsumexp
cumsum cumprod logcumsumexp softmax log_softmax""".split()   # (input, dim)
PAIRED = """max min median nanmedian mode cummax cummin sort""".split()  # (input, dim) -> 2


def _call(name, *args, **kwargs):
    return lambda m, d: (getattr(m, name), args(d) if callable(args) else (), kwargs)


CALLS = {}
for _name in UNARY:
    CALLS[_name] = lambda m, d, _n=_name: (getattr(m, _n), (d["x"],), {})
CALLS["acosh"] = CALLS["arccosh"] = lambda m, d: (m.acosh, (d["big"],), {})
CALLS["bitwise_not"] = lambda m, d: (m.bitwise_not, (d["n"],), {})
for _name in BINARY:
    CALLS[_name] = lambda m, d, _n=_name: (getattr(m, _n), (d["x"], d["y"]), {})
CALLS["heaviside"] = lambda m, d: (m.heaviside, (d["x"] - 0.5, d["y"]), {})
for _name in INTEGER_BINARY:
    CALLS[_name] = lambda m, d, _n=_name: (getattr(m, _n), (d["n"], d["k"]), {})
for _name in REDUCTIONS + PAIRED:
    CALLS[_name] = lambda m, d, _n=_name: (getattr(m, _n), (d["x"], 1), {})
CALLS.update({
    "addcdiv": lambda m, d: (m.addcdiv, (d["x"], d["y"], d["z"]), {"value": 0.5}),
    "addcmul": lambda m, d: (m.addcmul, (d["x"], d["y"], d["z"]), {"value": 0.5}),
    "lerp": lambda m, d: (m.lerp, (d["x"], d["y"], 0.3), {}),
    "where": lambda m, d: (m.where, (d["mask"], d["x"], d["y"]), {}),
    "clamp": lambda m, d: (m.clamp, (d["x"], 0.3, 0.6), {}),
    "clip": lambda m, d: (m.clip, (d["x"], 0.3, 0.6), {}),
    "clamp_min": lambda m, d: (m.clamp_min, (d["x"], 0.4), {}),
    "clamp_max": lambda m, d: (m.clamp_max, (d["x"], 0.4), {}),
    "threshold": lambda m, d: (m.threshold, (d["x"], 0.5, -1.0), {}),
    "hardshrink": lambda m, d: (m.hardshrink, (d["x"] - 0.5,), {"lambd": 0.2}),
    "nn.functional.hardshrink": lambda m, d: (m.nn.functional.hardshrink, (d["x"] - 0.5,),
                                              {"lambd": 0.2}),
    "aminmax": lambda m, d: (m.aminmax, (d["x"],), {"dim": 1}),
    "kthvalue": lambda m, d: (m.kthvalue, (d["x"], 2, 1), {}),
    "topk": lambda m, d: (m.topk, (d["x"], 2), {}),
    "argsort": lambda m, d: (m.argsort, (d["x"],), {"stable": True, "dim": 1}),
    "msort": lambda m, d: (m.msort, (d["x"],), {}),
    "norm": lambda m, d: (m.norm, (d["x"],), {"dim": 1}),
    "histc": lambda m, d: (m.histc, (d["x"],), {"bins": 4, "min": 0, "max": 1}),
    "diff": lambda m, d: (m.diff, (d["x"],), {}),
    # matrix products
    "mm": lambda m, d: (m.mm, (d["x"], d["sq"]), {}),
    "matmul": lambda m, d: (m.matmul, (d["b3"], d["sq"]), {}),
    "bmm": lambda m, d: (m.bmm, (d["b3"], d["b34"]), {}),
    "mv": lambda m, d: (m.mv, (d["x"], d["v"]), {}),
    "dot": lambda m, d: (m.dot, (d["v"], d["w"]), {}),
    "vdot": lambda m, d: (m.vdot, (d["v"], d["w"]), {}),
    "outer": lambda m, d: (m.outer, (d["u"], d["v"]), {}),
    "ger": lambda m, d: (m.ger, (d["u"], d["v"]), {}),
    "inner": lambda m, d: (m.inner, (d["x"], d["y"]), {}),
    "kron": lambda m, d: (m.kron, (d["x"], d["y"]), {}),
    "cross": lambda m, d: (m.cross, (d["x"], d["y"]), {"dim": 1}),
    "addmm": lambda m, d: (m.addmm, (d["y"], d["x"], d["sq"]), {"beta": 0.5}),
    "addmv": lambda m, d: (m.addmv, (d["u"], d["x"], d["v"]), {"alpha": 2}),
    "addr": lambda m, d: (m.addr, (d["x"], d["u"], d["v"]), {}),
    "baddbmm": lambda m, d: (m.baddbmm, (d["b34"], d["b3"], d["b34"]), {}),
    "addbmm": lambda m, d: (m.addbmm, (d["m34"], d["b3"], d["b34"]), {}),
    "chain_matmul": lambda m, d: (m.chain_matmul, (d["x"], d["sq"], d["sq"]), {}),
    "tensordot": lambda m, d: (m.tensordot, (d["x"], d["y"]), {"dims": ([1], [1])}),
    "matrix_power": lambda m, d: (m.matrix_power, (d["sq"], 3), {}),
    "cholesky": lambda m, d: (m.cholesky, (d["sq"],), {}),
    "inverse": lambda m, d: (m.inverse, (d["sq"],), {}),
    "qr": lambda m, d: (m.qr, (d["sq"],), {}),
    "slogdet": lambda m, d: (m.slogdet, (d["sq"],), {}),
    "svd": lambda m, d: (m.svd, (d["sq"],), {}),
    # joining, selecting, scattering
    "cat": lambda m, d: (m.cat, ([d["x"], d["y"]],), {}),
    "concat": lambda m, d: (m.concat, ([d["x"], d["y"]], 1), {}),
    "concatenate": lambda m, d: (m.concatenate, ([d["x"], d["y"]],), {}),
    "stack": lambda m, d: (m.stack, ([d["x"], d["y"]],), {}),
    "hstack": lambda m, d: (m.hstack, ([d["x"], d["y"]],), {}),
    "vstack": lambda m, d: (m.vstack, ([d["x"], d["y"]],), {}),
    "row_stack": lambda m, d: (m.row_stack, ([d["x"], d["y"]],), {}),
    "dstack": lambda m, d: (m.dstack, ([d["x"], d["y"]],), {}),
    "column_stack": lambda m, d: (m.column_stack, ([d["x"], d["y"]],), {}),
    "diag": lambda m, d: (m.diag, (d["v"],), {}),
    "tril": lambda m, d: (m.tril, (d["sq"],), {}),
    "triu": lambda m, d: (m.triu, (d["sq"], 1), {}),
    "narrow_copy": lambda m, d: (m.narrow_copy, (d["x"], 1, 0, 2), {}),
    "take": lambda m, d: (m.take, (d["x"], d["idx"]), {}),
    "take_along_dim": lambda m, d: (m.take_along_dim, (d["x"], d["gidx"], 1), {}),
    "gather": lambda m, d: (m.gather, (d["x"], 1, d["gidx"]), {}),
    "index_select": lambda m, d: (m.index_select, (d["x"], 1, d["idx"]), {}),
    "index_add": lambda m, d: (m.index_add, (d["x"], 1, d["idx"], d["y"][:, :2]), {}),
    "index_copy": lambda m, d: (m.index_copy, (d["x"], 1, d["idx"], d["y"][:, :2]), {}),
    "scatter": lambda m, d: (m.scatter, (d["x"], 1, d["gidx"], d["y"]), {}),
    "scatter_add": lambda m, d: (m.scatter_add, (d["x"], 1, d["gidx"], d["y"]), {}),
    "scatter_reduce": lambda m, d: (m.scatter_reduce, (d["x"], 1, d["gidx"], d["y"], "amax"),
                                    {}),
    "slice_scatter": lambda m, d: (m.slice_scatter, (d["x"], d["y"][:, :1]),
                                   {"dim": 1, "start": 1, "end": 2}),
    "masked_select": lambda m, d: (m.masked_select, (d["x"], d["mask"]), {}),
    "nonzero": lambda m, d: (m.nonzero, (d["mask"],), {}),
    "searchsorted": lambda m, d: (m.searchsorted, (d["sorted"], d["x"]), {}),
    "bucketize": lambda m, d: (m.bucketize, (d["x"], d["sorted"]), {}),
    "isin": lambda m, d: (m.isin, (d["n"], d["k"]), {}),
    # factories and random draws
    "zeros": lambda m, d: (m.zeros, (2, 3), {}),
    "ones": lambda m, d: (m.ones, ((2, 3),), {}),
    "empty": lambda m, d: (m.empty, (0,), {}),
    "full": lambda m, d: (m.full, ((2, 3), 1.5), {}),
    "eye": lambda m, d: (m.eye, (3,), {}),
    "arange": lambda m, d: (m.arange, (5,), {}),
    "range": lambda m, d: (m.range, (0, 4), {}),
    "linspace": lambda m, d: (m.linspace, (0, 1, 5), {}),
    "logspace": lambda m, d: (m.logspace, (0, 1, 5), {}),
})
CALLS.update({
    # functions other helpers add (exercised once ember has them)
    "angle": lambda m, d: (m.angle, (d["x"],), {}),
    "sinc": lambda m, d: (m.sinc, (d["x"],), {}),
    "i0": lambda m, d: (m.i0, (d["x"],), {}),
    "digamma": lambda m, d: (m.digamma, (d["y"],), {}),
    "lgamma": lambda m, d: (m.lgamma, (d["y"],), {}),
    "polygamma": lambda m, d: (m.polygamma, (1, d["y"]), {}),
    "mvlgamma": lambda m, d: (m.mvlgamma, (d["big"], 2), {}),
    "igamma": lambda m, d: (m.igamma, (d["x"], d["y"]), {}),
    "igammac": lambda m, d: (m.igammac, (d["x"], d["y"]), {}),
    "ldexp": lambda m, d: (m.ldexp, (d["x"], d["k"]), {}),
    "frexp": lambda m, d: (m.frexp, (d["big"],), {}),
    "conj_physical": lambda m, d: (m.conj_physical, (d["x"],), {}),
    "complex": lambda m, d: (m.complex, (d["x"], d["y"]), {}),
    "polar": lambda m, d: (m.polar, (d["y"], d["x"]), {}),
    "renorm": lambda m, d: (m.renorm, (d["x"], 2, 0, 0.5), {}),
    "quantile": lambda m, d: (m.quantile, (d["x"], 0.3), {"dim": 1}),
    "nanquantile": lambda m, d: (m.nanquantile, (d["x"], 0.3), {"dim": 1}),
    "histogram": lambda m, d: (m.histogram, (d["x"], 4), {}),
    "index_reduce": lambda m, d: (m.index_reduce, (d["x"], 1, d["idx"], d["y"][:, :2], "prod"),
                                  {}),
    "nonzero_static": lambda m, d: (m.nonzero_static, (d["mask"],), {"size": 5}),
    "cholesky_inverse": lambda m, d: (m.cholesky_inverse, (m.linalg.cholesky(d["sq"]),), {}),
    "cholesky_solve": lambda m, d: (m.cholesky_solve, (d["sq"], m.linalg.cholesky(d["sq"])),
                                    {}),
    "triangular_solve": lambda m, d: (m.triangular_solve, (d["sq"], d["sq"].triu()), {}),
    "geqrf": lambda m, d: (m.geqrf, (d["sq"],), {}),
    "orgqr": lambda m, d: (m.orgqr, m.geqrf(d["sq"]), {}),
    "ormqr": lambda m, d: (m.ormqr, m.geqrf(d["sq"]) + (d["sq"],), {}),
    "lu_unpack": lambda m, d: (m.lu_unpack, m.linalg.lu_factor(d["sq"]), {}),
    "lu_solve": lambda m, d: (m.lu_solve, (d["sq"],) + m.linalg.lu_factor(d["sq"]), {}),
})
_COPIES = {  # the *_copy functions: a view op's result as a new tensor
    "alias_copy": lambda d: (), "detach_copy": lambda d: (), "t_copy": lambda d: (),
    "expand_copy": lambda d: ((3, 2, 3),), "permute_copy": lambda d: ((1, 0),),
    "select_copy": lambda d: (0, 1), "slice_copy": lambda d: (1, 0, 2),
    "split_copy": lambda d: (1,), "split_with_sizes_copy": lambda d: ([1, 1],),
    "squeeze_copy": lambda d: (), "unsqueeze_copy": lambda d: (0,),
    "transpose_copy": lambda d: (0, 1), "unbind_copy": lambda d: (),
    "unfold_copy": lambda d: (1, 2, 1), "view_copy": lambda d: ((3, 2),),
    "diagonal_copy": lambda d: (), "as_strided_copy": lambda d: ((2, 2), (1, 2)),
}
for _name, _rest in _COPIES.items():
    CALLS[_name] = lambda m, d, _n=_name, _r=_rest: (getattr(m, _n), (d["x"],) + _r(d), {})
CALLS.update({
    "linalg.cholesky": lambda m, d: (m.linalg.cholesky, (d["sq"],), {}),
    "linalg.cholesky_ex": lambda m, d: (m.linalg.cholesky_ex, (d["sq"],), {}),
    "linalg.cond": lambda m, d: (m.linalg.cond, (d["sq"],), {}),
    "linalg.cross": lambda m, d: (m.linalg.cross, (d["x"], d["y"]), {}),
    "linalg.det": lambda m, d: (m.linalg.det, (d["sq"],), {}),
    "linalg.eigh": lambda m, d: (m.linalg.eigh, (d["sq"],), {}),
    "linalg.eigvalsh": lambda m, d: (m.linalg.eigvalsh, (d["sq"],), {}),
    "linalg.eig": lambda m, d: (m.linalg.eig, (m.diag(d["v"]),), {}),  # diagonal: e_i
    "linalg.eigvals": lambda m, d: (m.linalg.eigvals, (d["sq"],), {}),
    "linalg.householder_product": lambda m, d: (m.linalg.householder_product,
                                                m.geqrf(d["sq"]), {}),
    "linalg.inv": lambda m, d: (m.linalg.inv, (d["sq"],), {}),
    "linalg.inv_ex": lambda m, d: (m.linalg.inv_ex, (d["sq"],), {}),
    "linalg.ldl_factor": lambda m, d: (m.linalg.ldl_factor, (d["sq"],), {}),
    "linalg.ldl_factor_ex": lambda m, d: (m.linalg.ldl_factor_ex, (d["sq"],), {}),
    "linalg.ldl_solve": lambda m, d: (m.linalg.ldl_solve, m.linalg.ldl_factor(d["sq"])
                                      + (d["sq"],), {}),
    "linalg.lu": lambda m, d: (m.linalg.lu, (d["sq"],), {}),
    "linalg.lu_factor": lambda m, d: (m.linalg.lu_factor, (d["sq"],), {}),
    "linalg.lu_factor_ex": lambda m, d: (m.linalg.lu_factor_ex, (d["sq"],), {}),
    "linalg.lu_solve": lambda m, d: (m.linalg.lu_solve, m.linalg.lu_factor(d["sq"])
                                     + (d["sq"],), {}),
    "linalg.matmul": lambda m, d: (m.linalg.matmul, (d["x"], d["sq"]), {}),
    "linalg.matrix_norm": lambda m, d: (m.linalg.matrix_norm, (d["sq"],), {}),
    "linalg.matrix_power": lambda m, d: (m.linalg.matrix_power, (d["sq"], 2), {}),
    "linalg.matrix_rank": lambda m, d: (m.linalg.matrix_rank, (d["sq"],), {}),
    "linalg.multi_dot": lambda m, d: (m.linalg.multi_dot, ([d["x"], d["sq"], d["sq"]],), {}),
    "linalg.norm": lambda m, d: (m.linalg.norm, (d["x"],), {}),
    "linalg.pinv": lambda m, d: (m.linalg.pinv, (d["x"],), {}),
    "linalg.qr": lambda m, d: (m.linalg.qr, (d["sq"],), {}),
    "linalg.slogdet": lambda m, d: (m.linalg.slogdet, (d["sq"],), {}),
    "linalg.solve": lambda m, d: (m.linalg.solve, (d["sq"], d["sq"]), {}),
    "linalg.solve_ex": lambda m, d: (m.linalg.solve_ex, (d["sq"], d["sq"]), {}),
    "linalg.solve_triangular": lambda m, d: (m.linalg.solve_triangular,
                                             (d["sq"].triu(), d["sq"]), {"upper": True}),
    "linalg.svd": lambda m, d: (m.linalg.svd, (d["sq"],), {}),
    "linalg.svdvals": lambda m, d: (m.linalg.svdvals, (d["sq"],), {}),
    "linalg.tensorinv": lambda m, d: (m.linalg.tensorinv, (d["sq"],), {"ind": 1}),
    "linalg.tensorsolve": lambda m, d: (m.linalg.tensorsolve, (d["sq"], d["v"]), {}),
    "linalg.vecdot": lambda m, d: (m.linalg.vecdot, (d["x"], d["y"]), {}),
    "linalg.vector_norm": lambda m, d: (m.linalg.vector_norm, (d["x"],), {}),
})
CALLS.update({
    "frobenius_norm": lambda m, d: (m.frobenius_norm, (d["x"], (0, 1)), {}),
    "nuclear_norm": lambda m, d: (m.nuclear_norm, (d["sq"],), {}),
    "hash_tensor": lambda m, d: (m.hash_tensor, (d["x"],), {}),
})
SPECIAL_UNARY = """airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 digamma entr erf erfc erfcx
erfinv exp2 expit expm1 gammaln i0 i0e i1 i1e log1p log_ndtr logit modified_bessel_i0
modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 ndtr ndtri psi round
scaled_modified_bessel_k0 scaled_modified_bessel_k1 sinc spherical_bessel_j0""".split()
SPECIAL_BINARY = "gammainc gammaincc xlog1py xlogy zeta".split()
SPECIAL_POLYNOMIALS = """chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v
chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l
legendre_polynomial_p shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w""".split()  # (input, n)
for _name in SPECIAL_UNARY:
    CALLS["special." + _name] = lambda m, d, _n=_name: (getattr(m.special, _n), (d["x"],), {})
for _name in SPECIAL_BINARY:
    CALLS["special." + _name] = lambda m, d, _n=_name: (getattr(m.special, _n),
                                                        (d["big"], d["y"]), {})
for _name in SPECIAL_POLYNOMIALS:
    CALLS["special." + _name] = lambda m, d, _n=_name: (getattr(m.special, _n),
                                                        (d["x"], d["k"]), {})
CALLS.update({
    "special.polygamma": lambda m, d: (m.special.polygamma, (1, d["y"]), {}),
    "special.multigammaln": lambda m, d: (m.special.multigammaln, (d["big"], 2), {}),
    "special.logsumexp": lambda m, d: (m.special.logsumexp, (d["x"], 1), {}),
    "fft.fftfreq": lambda m, d: (m.fft.fftfreq, (5,), {}),
    "fft.rfftfreq": lambda m, d: (m.fft.rfftfreq, (5, 0.5), {}),
})
FFT = """fft fft2 fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2 irfftn
rfft rfft2 rfftn""".split()
for _name in FFT:
    CALLS["fft." + _name] = lambda m, d, _n=_name: (getattr(m.fft, _n), (d["x"],), {})

"""The ATen-like op layer: every primitive declared once, forward kernel beside backward rule.

Modules, in reading order:
    _op.py        Op, defop(), @op / @x.grad, export()
    _dispatch.py  device check -> promotion -> kernel -> graph node (the hot path)
    copy.py       casts, device moves, clone, copy_, fill_
    pointwise.py  elementwise math, comparisons, logical and bitwise ops
    complex.py    complex numbers: real, imag, conj, angle, view_as_real, polar, ...
    reduce.py     sum, mean, max, var, sort, cumsum, ...
    shape.py      views and reshaping: view, transpose, cat, split, ...
    index.py      indexing, gather/scatter, masked ops, nonzero
    statistics.py quantile, cov, corrcoef, histograms, trapezoid, gradient
    tensor_info.py  what is not math: numel, is_nonzero, resize_, set_, apply_, storage, ...
    linalg.py     matmul family, einsum, and ember.linalg's decompositions
    factorizations.py  LU, LDL, Householder QR in LAPACK's packed form; matrix_exp
    lowrank.py    randomized low-rank SVD and PCA
    sparse.py     the primitives of sparse COO tensors (densify, sparse @ dense, coalesce)
    fft.py        the FFT primitives behind ember.fft (c2c, r2c, c2r)
    spectral.py   stft and istft, built from the FFT ops
    special.py    torch.special's functions (numerics in _special_math.py)
    sampling.py   the gamma, Dirichlet and binomial samplers behind ember.distributions
    nn/           the primitives behind ember.nn.functional (linear, conv, pooling, ...)
"""
# ruff: noqa: F401
from . import (
    _op,
    complex,
    copy,
    factorizations,
    fft,
    index,
    linalg,
    lowrank,
    nn,
    pointwise,
    reduce,
    sampling,
    shape,
    sparse,
    special,
    spectral,
    statistics,
    tensor_info,
)
from ._op import EXPORTS, REGISTRY

"""Which ops autocast casts, and to what: torch's per-device op lists.

Read a row as: name | policy. The policies are torch's (see the "Autocast Op Reference" of
torch.amp's documentation, whose CPU and CUDA lists this file transcribes for what ember has):

    lower    cast every eligible input to the region's dtype (CPU: bfloat16 by default,
             CUDA: float16) -- the matrix products and convolutions
    fp32     cast every eligible input to float32 -- ops that need float32's range/precision
    promote  cast every eligible input to the widest of their dtypes (cat, stack, ...)
    banned   refuse (CUDA's binary_cross_entropy: its backward overflows in float16)

An input is eligible when it is a floating tensor on the region's device type and not float64.
The CPU and CUDA lists differ: on the CPU only the linear algebra, the 3-d pools, some pads and
the losses are kept in float32, while CUDA also keeps exp, log, softmax, sums, norms ... there.

A name is either an ember op's (dispatch casts its inputs: `mse_loss`, `cat`, `convolution`
-- which is every conv and transposed conv) or a torch function that ember composes from
other ops (`l1_loss`, `linalg_inv`, `max_pool3d`, `reflection_pad2d`, ...): those public
functions cast their inputs by name (`_dispatch.autocast_args`), as do the matrix products,
whose dtype checks must see the casts. A few CUDA entries that ember composes without such a
call (cosine_similarity, dist, normalize, softmin, renorm, ...) are missing: there the ops they
are made of follow their own rows.

Read next: autocast_mode.py (the regions and the dispatch hook that reads these tables).
"""
__all__ = ["CPU", "CUDA"]

_MATMULS = ("addbmm", "addmm", "baddbmm", "bmm", "linear", "matmul", "mm", "convolution",
            "prelu")
_LOSSES = ("binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy",
           "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss",
           "mse_loss", "multi_margin_loss", "multilabel_margin_loss", "nll_loss",
           "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss")

CPU = {
    **dict.fromkeys(_MATMULS, "lower"),
    **dict.fromkeys(_LOSSES + ("binary_cross_entropy", "ctc_loss"), "fp32"),
    **dict.fromkeys(("prod", "prod_dim", "cdist", "trace", "max_pool3d", "max_unpool2d",
                     "max_unpool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
                     "reflection_pad1d", "reflection_pad2d", "replication_pad1d",
                     "replication_pad2d", "replication_pad3d", "linalg_cholesky", "linalg_cond",
                     "linalg_eigh", "linalg_eigvalsh", "linalg_inv", "linalg_lstsq",
                     "linalg_matrix_rank", "linalg_pinv", "linalg_qr", "linalg_solve",
                     "linalg_svd", "linalg_svdvals"), "fp32"),
    **dict.fromkeys(("cat", "stack", "index_copy"), "promote"),
}

CUDA = {
    **dict.fromkeys(_MATMULS + ("addmv", "addr", "mv"), "lower"),
    **dict.fromkeys(_LOSSES, "fp32"),
    **dict.fromkeys(("pow_scalar_tensor", "pow_tensor_scalar", "pow_tensor_tensor", "acos",
                     "asin", "cosh", "cdist", "cumprod", "cumsum", "erfinv", "exp", "expm1",
                     "group_norm", "layer_norm", "log", "log_softmax", "log10", "log1p", "log2",
                     "norm", "pdist", "prod", "prod_dim", "reciprocal", "rsqrt", "sinh",
                     "softmax", "softplus", "sum", "sum_dim", "tan"), "fp32"),
    **dict.fromkeys(("addcdiv", "addcmul", "atan2", "linalg_cross", "dot", "index_put",
                     "scatter_add"), "promote"),
    "binary_cross_entropy": "banned",
}

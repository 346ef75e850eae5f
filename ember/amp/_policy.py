"""Which ops autocast casts, and to what: torch's per-device op lists, in ember's op names.

Read a row as: op | policy. The policies are torch's (see the "Autocast Op Reference" of
torch.amp's documentation, whose lists this file transcribes for the ops ember has):

    lower    cast every eligible input to the region's dtype (CPU: bfloat16 by default,
             CUDA: float16) -- the matrix products and convolutions
    fp32     cast every eligible input to float32 -- ops that need float32's range/precision
    promote  cast every eligible input to the widest of their dtypes (cat, stack, ...)
    banned   refuse (CUDA's binary_cross_entropy: its backward overflows in float16)

An input is eligible when it is a floating tensor on the region's device type and not float64.
The CPU and CUDA lists differ: on the CPU only the linear algebra, a few pools/pads and the
losses are kept in float32, while CUDA also keeps exp, log, softmax, sums, norms ... in float32.

One ember op can stand for several torch ops: `convolution` is conv1d/2d/3d and the
transposed ones, `max_pool` is max_pool1d/2d/3d, `window_sum` is the sum inside avg_pool. For
those the row is a function of the op's attributes (on the CPU only the 3-d pools are float32).
Where torch lists a function that ember composes from other ops (l1_loss, kl_div,
cosine_similarity, the reflection/replication pads, ...) there is no row: the ops it is made
of follow their own rows and promotion, so a mix of float32 and bfloat16 inputs still gives a
float32 result, but bfloat16-only inputs stay bfloat16 where torch would compute in float32.

Read next: autocast_mode.py (the regions and the dispatch hook that reads these tables).
"""
__all__ = ["CPU", "CUDA"]


def _spatial_3d(attrs):
    """fp32 for the 3-d variant of a pooling op (torch's CPU list names only those)."""
    return "fp32" if len(attrs.get("kernel", attrs.get("output_size", ()))) == 3 else None


_MATMULS = ("addbmm", "addmm", "baddbmm", "bmm", "linear", "matmul", "mm", "convolution",
            "prelu")

CPU = {
    **dict.fromkeys(_MATMULS, "lower"),
    **dict.fromkeys(("binary_cross_entropy", "binary_cross_entropy_with_logits", "cdist",
                     "cross_entropy", "ctc_loss", "huber_loss", "mse_loss", "nll_loss",
                     "prod", "prod_dim", "trace", "max_unpool", "linalg_cholesky",
                     "linalg_eigh", "linalg_eigvalsh", "linalg_inv", "linalg_lstsq",
                     "linalg_matrix_rank", "linalg_pinv", "linalg_qr", "linalg_solve",
                     "linalg_svd", "linalg_svdvals"), "fp32"),
    **dict.fromkeys(("cat", "stack", "index_copy"), "promote"),
    "max_pool": _spatial_3d,
    "window_sum": _spatial_3d,
    "adaptive_max_pool": _spatial_3d,
}

CUDA = {
    **dict.fromkeys(_MATMULS + ("addmv", "addr", "mv"), "lower"),
    **dict.fromkeys(("pow_scalar_tensor", "pow_tensor_scalar", "pow_tensor_tensor",
                     "acos", "asin", "binary_cross_entropy_with_logits", "cosh",
                     "cdist", "cross_entropy", "cumprod", "cumsum", "erfinv", "exp", "expm1",
                     "group_norm", "layer_norm", "log", "log_softmax", "log10", "log1p", "log2",
                     "mse_loss", "nll_loss", "norm", "pdist", "prod", "prod_dim",
                     "reciprocal", "rsqrt", "sinh", "smooth_l1_loss", "huber_loss", "softmax",
                     "softplus", "sum", "sum_dim", "tan"), "fp32"),
    **dict.fromkeys(("addcdiv", "addcmul", "atan2", "linalg_cross", "dot", "index_put",
                     "scatter_add"), "promote"),
    "binary_cross_entropy": "banned",
}

"""Neural-network primitives: the kernels and rules behind `ember.nn.functional`.

One module per family; each defines its ops and the public `F.*` functions (listed in the
module's `__all__`), which `ember/nn/functional.py` re-exports.

    linear.py      linear, bilinear
    conv.py        conv1d/2d/3d and transposed convolutions (im2col + GEMM)
    padding.py     pad (constant, reflect, replicate, circular)
    pool.py        max/avg/adaptive/lp pooling, max_unpool (strided window views)
    attention.py   scaled_dot_product_attention, multi_head_attention_forward
    rnn.py         the recurrence of RNN / LSTM / GRU layers (one op per layer and direction)
    sampling.py    interpolate, grid_sample, affine_grid, pixel/channel shuffle, fold/unfold
    activation.py  relu ... gelu, silu, prelu, glu, softmax, log_softmax, softmin
    norm.py        batch/instance/layer/group/rms norm, local_response_norm
    dropout.py     dropout, dropout1d/2d/3d, alpha and feature-alpha dropout
    embedding.py   embedding, embedding_bag
    distance.py    cosine_similarity, pairwise_distance, pdist, cdist, normalize, one_hot
    loss.py        mse_loss ... cross_entropy (fused log-softmax + NLL), ctc_loss
"""
from . import (  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401
    activation,
    attention,
    conv,
    distance,
    dropout,
    embedding,
    linear,
    loss,
    norm,
    padding,
    pool,
    rnn,
    sampling,
)

"""Rows for ember/ops/nn/attention.py (more in tests/test_nn_attention.py)."""
from ._spec import B, Spec, T


def _sdpa(m):
    return m.nn.functional.scaled_dot_product_attention


SPECS = [
    Spec("scaled_dot_product_attention", lambda m, q, k, v: _sdpa(m)(q, k, v),
         [(T(2, 3, 4, 8), T(2, 3, 5, 8), T(2, 3, 5, 6)),  # batch and heads
          (T(4, 8), T(5, 8), T(5, 3)),                     # no leading dims
          (T(1, 3, 4, 8), T(2, 1, 5, 8), T(2, 1, 5, 6)),   # broadcast leading dims
          (T(2, 0, 8), T(2, 5, 8), T(2, 5, 6))],           # no queries
         ops=["safe_softmax"]),
    Spec("scaled_dot_product_attention_bool_mask",
         lambda m, q, k, v, mask: _sdpa(m)(q, k, v, attn_mask=mask),
         [(T(2, 4, 8), T(2, 5, 8), T(2, 5, 6), B(4, 5))], ops=["safe_softmax"]),
    Spec("scaled_dot_product_attention_causal",
         lambda m, q, k, v: _sdpa(m)(q, k, v, is_causal=True, scale=0.5),
         [(T(2, 6, 8), T(2, 4, 8), T(2, 4, 6))], ops=["safe_softmax"]),
]

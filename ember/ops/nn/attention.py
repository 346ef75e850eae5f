"""Attention: `F.scaled_dot_product_attention` and `F.multi_head_attention_forward`.

    attention(Q, K, V) = softmax(Q K^T * scale + mask) V          scale = 1 / sqrt(E)

over all leading (batch, head) dims at once: one batched matmul for the scores, one for the
values. The softmax subtracts each row's max; a row whose every key is masked out gives zeros
(torch's "safe softmax"), not nan, so padding rows cannot poison the gradients of the others.

When the score tensor of all heads would exceed `CHUNK_BYTES`, queries are processed a block
of rows at a time (each query row's softmax only needs its own scores), which bounds the
temporary memory of the forward pass and gives the same results. Causal attention of many
queries runs in blocks of rows too, each with only the keys its rows may see.

`multi_head_attention_forward` is torch's functional MultiheadAttention: input projections,
optional bias_k / bias_v / zero-attention columns, masks merged into one additive mask, heads
split, attention, heads merged, output projection.

Read next: `ember/nn/modules/activation.py` (MultiheadAttention), `ember/nn/modules/transformer.py`.
"""
import math
import warnings

from ... import _dtype as dt
from ..._functorch import batch_rules
from ..._parallel import by_rows
from ...autograd.forward_ad import rules_must_differentiate
from .._op import op
from .activation import _softmax_backward, _sum_along

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

CHUNK_BYTES = 64 * 2**20  # above this, scores are computed one block of query rows at a time
# Causal attention of at least CAUSAL_SPLIT_ROWS queries runs in CAUSAL_BLOCKS blocks of rows,
# each with only the keys its last row may see: 2 blocks do 3/4 of the products and softmax
# (GPT's (16, 4, 128, 64), 1 thread, ms, 1 -> 2 -> 4 blocks: forward 5.9 -> 5.4 -> 5.4,
# forward + backward 15.2 -> 13.5 -> 14.8; more blocks pay more calls and padded gradients).
CAUSAL_SPLIT_ROWS = 64
CAUSAL_BLOCKS = 2


@op("same", name="safe_softmax", node_name="SafeSoftmaxBackward0")
def _safe_softmax(xp, a, hide, *, scale=1.0):
    """softmax over the last dim of `a * scale` with the positions where the bool `hide`
    (which broadcasts) is True set to -inf first; a row that is entirely -inf (fully masked)
    gives zeros. Masking here rather than by masked_fill saves that op's backward pass: the
    softmax's gradient is already 0 where its output is. Scaling here rather than the query
    spares attention a scaled copy of the query, which its product would keep for backward
    (GPT: 2 MiB a layer). Like softmax's kernel, it writes one new array, in row blocks on
    the thread pool, with its sums as matrix-vector products."""
    shape = a.shape if hide is None else xp.broadcast(a, hide).shape
    if a.shape != shape:
        a = xp.broadcast_to(a, shape)
    out = xp.empty(shape, a.dtype)
    if shape[-1] == 0:
        return out
    return by_rows(_safe_softmax_into, xp, (out,), a, hide, scale=scale)[0]


def _safe_softmax_into(xp, outs, a, hide, *, scale):
    (e,) = outs
    xp.multiply(a, scale, out=e)
    if hide is not None:
        xp.copyto(e, -xp.inf, where=hide)  # half the time of where(hide, -inf, a)
    top = e.max(axis=-1, keepdims=True)
    top[top == -xp.inf] = 0  # keeps exp(-inf - top) = 0 instead of nan for masked rows
    e -= top
    xp.exp(e, out=e)
    total = _sum_along(xp, e, e.ndim - 1)
    total[total == 0] = 1
    e *= 1 / total


@_safe_softmax.grad
def _safe_softmax(g, out, scale):
    # softmax's gradient, which gives fully masked rows (out = 0) a zero gradient as it is
    if rules_must_differentiate():
        grad = out * (g - (g * out).sum(-1, keepdim=True))
        return (grad if scale == 1 else grad * scale), None
    grad = _softmax_backward(g, out, dim=out.ndim - 1)
    return (grad if scale == 1 else grad.mul_(scale)), None


# ----------------------------------------------------------------------------------------------
# scaled dot-product attention


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, for (..., L, E) queries and (..., S, E)
    keys / (..., S, Ev) values. A bool attn_mask marks the pairs that *take part* (True);
    a float one is added to the scores. is_causal masks key j > query i (top-left aligned)."""
    _check_attention_args(query, key, value, attn_mask, dropout_p, is_causal)
    if enable_gqa:
        key, value = _repeat_heads(query, key), _repeat_heads(query, value)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    hide = None
    if attn_mask is not None and attn_mask.dtype is dt.bool:
        hide, attn_mask = attn_mask.logical_not(), None
    elif attn_mask is not None:
        attn_mask = attn_mask.to(query.dtype)  # a float32 mask is accepted for any query
    rows = query.shape[-2]
    block = _rows_per_block(query, key)
    causal_keys = is_causal and rows >= CAUSAL_SPLIT_ROWS  # each block: keys to its last row
    if causal_keys:
        block = min(block, -(-rows // CAUSAL_BLOCKS))
    if block >= rows:
        return _attend(query, key, value, hide, attn_mask, is_causal, scale, dropout_p, 0)
    from ..shape import cat

    outs = []
    for start in range(0, rows, block):
        stop = min(start + block, rows)
        k, v = (key[..., :stop, :], value[..., :stop, :]) if causal_keys else (key, value)
        outs.append(_attend(query[..., start:stop, :], k, v, _mask_rows(hide, start, stop),
                            _mask_rows(attn_mask, start, stop), is_causal, scale, dropout_p,
                            start))
    return cat(outs, -2)


def _attend(query, key, value, hide, add, causal, scale, dropout_p, first_row):
    """Attention for query rows [first_row, first_row + L) of the full problem."""
    from ... import ones

    if add is not None:  # (never together with hide: a bool mask or causal gives hide)
        weights = _safe_softmax((query * scale) @ key.mT + add, None)
    else:  # the softmax scales the scores
        scores = query @ key.mT
        if causal:  # key j is hidden from query row r when j > r
            rows, cols = scores.shape[-2:]
            hide = ones((rows, cols), dtype=dt.bool, device=scores.device).triu(first_row + 1)
        weights = _safe_softmax(scores, hide, scale=scale)
    if dropout_p > 0:
        from .dropout import dropout

        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _rows_per_block(query, key):
    """How many query rows fit in CHUNK_BYTES of scores, for all (broadcast) batch dims."""
    batch = 1
    for q, k in zip(_padded_lead(query, key), _padded_lead(key, query)):
        batch *= max(q, k)
    per_row = batch * key.shape[-2] * query.dtype.itemsize
    return max(1, CHUNK_BYTES // per_row) if per_row else query.shape[-2]


def _padded_lead(t, other):
    lead = list(t.shape[:-2])
    return [1] * (max(other.ndim - 2, 0) - len(lead)) + lead


def _mask_rows(mask, start, stop):
    """The block of a (broadcastable) mask that belongs to query rows [start, stop)."""
    if mask is None or mask.ndim < 2 or mask.shape[-2] == 1:
        return mask
    return mask[..., start:stop, :]


def _repeat_heads(query, kv):
    """Grouped-query attention: each key/value head serves q_heads / kv_heads query heads."""
    if query.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-query.ndim}, {query.ndim - 1}], but got -3)")
    q_heads, kv_heads = query.shape[-3], kv.shape[-3]
    if kv_heads == 0 or q_heads % kv_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads "
                           f"in query ({kv_heads} does not divide {q_heads})")
    return kv if kv_heads == q_heads else kv.repeat_interleave(q_heads // kv_heads, dim=-3)


def _check_attention_args(query, key, value, attn_mask, dropout_p, is_causal):
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and "
                           f"value.dim: {value.ndim} instead.")
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_c_name(query)} key.dtype: {_c_name(key)} and "
                           f"value.dtype: {_c_name(value)} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"scaled_dot_product_attention: expected floating-point query, key "
                           f"and value, but got {query.dtype}")
    if attn_mask is not None and attn_mask.dtype not in (dt.bool, dt.float32, query.dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_c_name(attn_mask)} and  "
                           f"query.dtype: {_c_name(query)} instead.")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if not 0 <= dropout_p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p}")
    batch = query.shape[:-2] if query.ndim > 2 else ()
    flat = math.prod(batch)
    if key.shape[-1] != query.shape[-1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{flat}, {query.shape[-1]}] but got: [{flat}, {key.shape[-1]}].")
    if value.shape[-2] != key.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{flat}, {key.shape[-2]}] but got: [{flat}, {value.shape[-2]}].")


def _c_name(t):
    """torch's C++ spelling of a dtype in attention errors: float, double, int, ..."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int32": "int", "int64": "long int",
            "bool": "bool"}.get(str(t.dtype).split(".")[-1], str(t.dtype))


# ----------------------------------------------------------------------------------------------
# multi-head attention


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Sequence-first (L, N, E) multi-head attention; returns (output, weights or None).

    key_padding_mask (N, S): True (or -inf) hides a key; attn_mask (L, S) or (N*heads, L, S):
    True (or -inf) hides a pair. Weights are averaged over heads unless
    average_attn_weights=False."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone suffices: attention builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    head_dim = _check_mha_dims(query, key, value, embed_dim_to_check, num_heads,
                               use_separate_proj_weight)
    q, k, v = _in_projections(query, key, value, in_proj_weight, in_proj_bias,
                              use_separate_proj_weight, q_proj_weight, k_proj_weight,
                              v_proj_weight)
    attn_mask = _check_attn_mask(attn_mask, tgt_len, key.shape[0], bsz, num_heads)
    k, v, attn_mask, key_padding_mask = _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v,
                                                        attn_mask, key_padding_mask, bsz)

    # heads: (L, N, E) -> (N * heads, L, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        k, v, attn_mask, key_padding_mask = _append_zero_attn(k, v, attn_mask,
                                                              key_padding_mask)
    src_len = k.shape[1]
    attn_mask = _merge_padding_mask(attn_mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0

    if need_weights:
        out, weights = _attention_with_weights(q, k, v, attn_mask, is_causal, dropout_p)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    else:
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 and \
                attn_mask.ndim == 3 else attn_mask.reshape(bsz, num_heads, -1, src_len)
        out = scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len,
                                                                     head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal)
        out = out.permute(2, 0, 1, 3)  # (L, N, heads, head_dim)
        weights = None
    out = out.reshape(tgt_len * bsz, embed_dim)
    from .linear import linear

    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _attention_with_weights(q, k, v, attn_mask, is_causal, dropout_p):
    """The need_weights path: plain softmax (as torch's), weights kept for the caller.
    Returns (output as (L, N*heads, head_dim), weights (N*heads, L, S))."""
    from ... import baddbmm, bmm
    from .activation import softmax

    if is_causal and attn_mask is None:
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
    if attn_mask is not None:
        scores = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
    else:
        scores = bmm(q_scaled, k.transpose(-2, -1))
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        from .dropout import dropout

        weights = dropout(weights, p=dropout_p)
    return bmm(weights, v).transpose(0, 1), weights


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Batched (3-D) or unbatched (2-D) query; the other arguments must agree (torch raises
    AssertionError for these)."""
    if query.ndim == 3:
        kind, want, mask_dims = "batched (3-D)", 3, 2
    elif query.ndim == 2:
        kind, want, mask_dims = "unbatched (2-D)", 2, 1
    else:
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    if key.ndim != want or value.ndim != want:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {want}-D "
                             f"but found {key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != mask_dims:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{mask_dims}-D but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.ndim}-D tensor instead")
        if want == 2 and attn_mask.ndim == 3:
            expected = (num_heads, query.shape[0], key.shape[0])
            if tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    return want == 3


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = hide) becomes an additive float mask (-inf = hide)."""
    if mask is None:
        return None
    if mask.dtype is not dt.bool and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    if mask.dtype is dt.bool:
        from ... import zeros_like

        return zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    return input.dtype


def _check_mha_dims(query, key, value, embed_dim_to_check, num_heads, separate):
    embed_dim = query.shape[2]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if separate:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return head_dim


def _in_projections(query, key, value, in_proj_weight, in_proj_bias, separate, q_proj_weight,
                    k_proj_weight, v_proj_weight):
    """q, k, v = the three input projections; self-attention (query is key is value) does
    them as one GEMM."""
    from .linear import linear

    if separate:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:
            return linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        weights = in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _check_attn_mask(attn_mask, tgt_len, src_len, bsz, num_heads):
    """A 2-D mask gains a leading dim; both forms are checked against the expected shape."""
    if attn_mask is None:
        return None
    if attn_mask.ndim == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should "
                               f"be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.ndim == 3:
        if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(bsz * num_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _pad_last(mask):
    """One more key column that every query may attend to (0 in an additive mask)."""
    if mask is None:
        return None
    from .padding import pad

    return pad(mask, (0, 1))


def _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v, attn_mask, key_padding_mask,
                    bsz):
    """bias_k / bias_v add one learned key/value position to every sequence."""
    if bias_k is None and bias_v is None:
        return k, v, attn_mask, key_padding_mask
    if bias_k is None or bias_v is None:
        raise AssertionError(f"{'bias_k' if bias_v is None else 'bias_v'} is set but "
                             f"{'bias_v' if bias_v is None else 'bias_k'} is None")
    if static_k is not None:
        raise AssertionError("bias cannot be added to static key.")
    if static_v is not None:
        raise AssertionError("bias cannot be added to static value.")
    from ..shape import cat

    k = cat([k, bias_k.repeat(1, bsz, 1)])
    v = cat([v, bias_v.repeat(1, bsz, 1)])
    return k, v, _pad_last(attn_mask), _pad_last(key_padding_mask)


def _heads(x, static, name, batch_heads, head_dim):
    """(S, N, E) -> (N * heads, S, head_dim), or a given static_k / static_v."""
    if static is None:
        return x.reshape(x.shape[0], batch_heads, head_dim).transpose(0, 1)
    if static.shape[0] != batch_heads:
        raise AssertionError(f"expecting {name}.size(0) of {batch_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static


def _append_zero_attn(k, v, attn_mask, key_padding_mask):
    """add_zero_attn: one more all-zero key/value position."""
    from ... import zeros
    from ..shape import cat

    shape = (k.shape[0], 1, k.shape[2])
    k = cat([k, zeros(shape, dtype=k.dtype, device=k.device)], dim=1)
    v = cat([v, zeros(shape, dtype=v.dtype, device=v.device)], dim=1)
    return k, v, _pad_last(attn_mask), _pad_last(key_padding_mask)


def _merge_padding_mask(attn_mask, key_padding_mask, bsz, num_heads, src_len):
    """Fold the (N, S) key padding mask into the additive attention mask, per head."""
    if key_padding_mask is None:
        return attn_mask
    if tuple(key_padding_mask.shape) != (bsz, src_len):
        dim, want = (0, bsz) if key_padding_mask.shape[0] != bsz else (1, src_len)
        raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {want}, but got "
                             f"{key_padding_mask.shape[dim]}")
    padding = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
        .reshape(bsz * num_heads, 1, src_len)
    return padding if attn_mask is None else attn_mask + padding


# vmap (see ops/_op.py): a softmax over the last dim with a broadcast mask -- elementwise
# alignment does; the tangent comes from the backward rule
_safe_softmax.batch(batch_rules.same_shape)

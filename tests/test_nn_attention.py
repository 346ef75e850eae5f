"""scaled_dot_product_attention, multi_head_attention_forward and MultiheadAttention vs torch.

MultiheadAttention is built in torch with a seed and its state_dict copied into ember; outputs,
attention weights and the gradients w.r.t. query/key/value and every parameter are compared in
float64, for every option and mask kind.
"""
import itertools
import math

import numpy as np
import pytest

import ember
from ember.ops.nn import attention

from .oracle import check, check_raises, on_test_device

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def T(*shape):
    return rng.standard_normal(shape)


def sdpa(m):
    return m.nn.functional.scaled_dot_product_attention


# ----------------------------------------------------------------------------------------------
# scaled dot-product attention


def bool_mask(*shape, full_row=None):
    mask = rng.random(shape) < 0.6
    mask[..., 0] = True
    if full_row is not None:
        mask[..., full_row, :] = False  # a query that may attend to nothing
    return mask


SDPA_CASES = [
    ("plain", lambda m, q, k, v: sdpa(m)(q, k, v), [T(2, 3, 4, 8), T(2, 3, 5, 8), T(2, 3, 5, 6)]),
    ("bool_mask", lambda m, q, k, v, mask: sdpa(m)(q, k, v, attn_mask=mask),
     [T(2, 3, 4, 8), T(2, 3, 5, 8), T(2, 3, 5, 6), bool_mask(4, 5)]),
    ("bool_mask_fully_masked_row", lambda m, q, k, v, mask: sdpa(m)(q, k, v, attn_mask=mask),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6), bool_mask(2, 4, 5, full_row=1)]),
    ("float_mask", lambda m, q, k, v, mask: sdpa(m)(q, k, v, attn_mask=mask),
     [T(2, 3, 4, 8), T(2, 3, 5, 8), T(2, 3, 5, 6), T(2, 1, 4, 5)]),
    ("float_mask_1d", lambda m, q, k, v, mask: sdpa(m)(q, k, v, attn_mask=mask),
     [T(3, 4, 8), T(3, 5, 8), T(3, 5, 6), T(5)]),
    ("float32_mask_float64_query",
     lambda m, q, k, v, mask: sdpa(m)(q, k, v, attn_mask=mask.float()),
     [T(3, 4, 8), T(3, 5, 8), T(3, 5, 6), T(4, 5)]),
    ("causal_square", lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True),
     [T(2, 2, 5, 8), T(2, 2, 5, 8), T(2, 2, 5, 8)]),
    ("causal_more_queries", lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True),
     [T(2, 6, 8), T(2, 4, 8), T(2, 4, 6)]),
    ("causal_fewer_queries", lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True),
     [T(2, 3, 8), T(2, 6, 8), T(2, 6, 6)]),
    ("scale", lambda m, q, k, v: sdpa(m)(q, k, v, scale=0.37),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    ("gqa", lambda m, q, k, v: sdpa(m)(q, k, v, enable_gqa=True),
     [T(2, 6, 4, 8), T(2, 2, 5, 8), T(2, 3, 5, 6)]),
    ("gqa_same_heads", lambda m, q, k, v: sdpa(m)(q, k, v, enable_gqa=True),
     [T(2, 4, 4, 8), T(2, 4, 5, 8), T(2, 4, 5, 6)]),
    ("unbatched", lambda m, q, k, v: sdpa(m)(q, k, v), [T(4, 8), T(5, 8), T(5, 3)]),
    ("broadcast_batch", lambda m, q, k, v: sdpa(m)(q, k, v),
     [T(1, 3, 4, 8), T(2, 1, 5, 8), T(2, 1, 5, 6)]),
]


@pytest.mark.parametrize("fn,inputs", [pytest.param(f, i, id=n) for n, f, i in SDPA_CASES])
@pytest.mark.parametrize("chunked", [False, True])
def test_sdpa_against_torch(fn, inputs, chunked, monkeypatch):
    if chunked:  # every query row in its own block: the memory-saving path, same results
        monkeypatch.setattr(attention, "CHUNK_BYTES", 1)
    check(fn, inputs, rtol=1e-10, atol=1e-10)


def test_sdpa_float32_against_torch():
    q, k, v = (T(2, 4, 16, 8).astype(np.float32) for _ in range(3))
    check(lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True), [q, k, v], rtol=1e-5, atol=1e-6)


LARGE_Q, LARGE_KV = (8, 4, 72, 16), (8, 4, 128, 16)  # scores: 2 x SPLIT_ELEMENTS and more


@pytest.mark.parametrize("mask", ["causal", "bool_per_batch", "bool_2d", "none"])
def test_sdpa_large_scores_in_row_blocks_on_threads(mask):
    """Scores this large run the masked softmax in row blocks on two threads, with the mask
    cut alike (one per batch entry) or given whole (one for all)."""
    q, k, v = (T(*shape).astype(np.float32) for shape in (LARGE_Q, LARGE_KV, LARGE_KV))
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        # forward to float32's precision; gradients (sums over 128 keys) to the suite's usual
        # backward tolerance
        tolerances = dict(rtol=1e-5, atol=1e-6, grad_rtol=1e-4, grad_atol=1e-5)
        if mask == "causal":
            check(lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True), [q, k, v], **tolerances)
        elif mask == "none":
            check(lambda m, q, k, v: sdpa(m)(q, k, v), [q, k, v], **tolerances)
        else:
            shape = (8, 1, 72, 128) if mask == "bool_per_batch" else (72, 128)
            hide = bool_mask(*shape, full_row=3)
            check(lambda m, q, k, v, a: sdpa(m)(q, k, v, attn_mask=a), [q, k, v, hide],
                  **tolerances)
    finally:
        ember.set_num_threads(before)


def test_sdpa_chunks_when_scores_are_large(monkeypatch):
    """Above CHUNK_BYTES the scores are built block by block; the results do not change."""
    q, k, v = (ember.from_numpy(T(2, 2, 16, 4)) for _ in range(3))
    whole = sdpa(ember)(q, k, v, is_causal=True)
    seen = []
    real = attention._attend

    def spy(query, *args):
        seen.append(query.shape[-2])
        return real(query, *args)
    monkeypatch.setattr(attention, "_attend", spy)
    monkeypatch.setattr(attention, "CHUNK_BYTES", 2 * 2 * 16 * 8 * 5)  # five rows per block
    blocked = sdpa(ember)(q, k, v, is_causal=True)
    assert seen == [5, 5, 5, 1]
    np.testing.assert_allclose(blocked.numpy(), whole.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("queries, keys", [(9, 9), (9, 6), (7, 12)])
def test_sdpa_causal_blocks_take_only_the_keys_they_see(monkeypatch, queries, keys):
    """Causal attention of many queries runs in CAUSAL_BLOCKS blocks of rows, each with the keys
    up to its last row; values and gradients stay torch's, with more or fewer keys than
    queries, and equal to the unsplit computation."""
    q, k, v = T(2, 3, queries, 4), T(2, 3, keys, 4), T(2, 3, keys, 5)
    plain = sdpa(ember)(*map(ember.from_numpy, (q, k, v)), is_causal=True).numpy()
    seen = []
    real = attention._attend

    def spy(query, key, *args):
        seen.append((query.shape[-2], key.shape[-2]))
        return real(query, key, *args)
    monkeypatch.setattr(attention, "_attend", spy)
    monkeypatch.setattr(attention, "CAUSAL_SPLIT_ROWS", 4)
    monkeypatch.setattr(attention, "CAUSAL_BLOCKS", 3)
    check(lambda m, q, k, v: sdpa(m)(q, k, v, is_causal=True), [q, k, v])
    first = -(-queries // 3)
    assert seen[0] == (first, min(first, keys))
    blocked = sdpa(ember)(*map(ember.from_numpy, (q, k, v)), is_causal=True).numpy()
    np.testing.assert_allclose(blocked, plain, rtol=1e-13, atol=1e-14)


def test_sdpa_fully_masked_rows_give_zeros_and_finite_grads():
    q = ember.from_numpy(T(1, 3, 4)).requires_grad_()
    k = ember.from_numpy(T(1, 5, 4)).requires_grad_()
    mask = ember.ones(3, 5, dtype=ember.bool)
    mask[1] = False
    out = sdpa(ember)(q, k, k, attn_mask=mask)
    assert np.all(out.detach().numpy()[0, 1] == 0)
    out.sum().backward()
    assert np.all(np.isfinite(k.grad.numpy())) and np.all(q.grad.numpy()[0, 1] == 0)


def test_sdpa_dropout():
    q, k, v = (ember.from_numpy(T(2, 6, 4)) for _ in range(3))
    plain = sdpa(ember)(q, k, v)
    ember.manual_seed(0)
    dropped = sdpa(ember)(q, k, v, dropout_p=0.5)
    assert dropped.shape == plain.shape and not np.allclose(dropped.numpy(), plain.numpy())
    assert np.all(sdpa(ember)(q, k, v, dropout_p=1.0).numpy() == 0)


def test_sdpa_double_backward():
    args = [ember.from_numpy(T(2, 3, 4)).requires_grad_() for _ in range(3)]
    mask = ember.from_numpy(bool_mask(3, 3, full_row=2))
    assert ember.autograd.gradgradcheck(lambda q, k, v: sdpa(ember)(q, k, v, attn_mask=mask),
                                        args)


@pytest.mark.parametrize("fn,inputs", [
    (lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=m.ones(4, 5, dtype=m.bool), is_causal=True),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v), [T(2, 4, 8), T(2, 5, 7), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v), [T(2, 4, 8), T(2, 5, 8), T(2, 4, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=m.ones(4, 5, dtype=m.int32)),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v, attn_mask=m.ones(4, 5, dtype=m.float16)),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q.float(), k.float(), v.float(), attn_mask=m.ones(4, 5).double()),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k.float(), v), [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v), [T(8), T(5, 8), T(5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v, enable_gqa=True),
     [T(2, 6, 4, 8), T(2, 4, 5, 8), T(2, 4, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v, enable_gqa=True), [T(4, 8), T(5, 8), T(5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q, k, v, dropout_p=1.5), [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
    (lambda m, q, k, v: sdpa(m)(q.long(), k.long(), v.long()),
     [T(2, 4, 8), T(2, 5, 8), T(2, 5, 6)]),
])
def test_sdpa_errors_like_torch(fn, inputs):
    check_raises(fn, inputs)


def test_sdpa_error_messages():
    q, k, v = (ember.zeros(2, 4, 8), ember.zeros(2, 5, 8), ember.zeros(2, 5, 6))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        sdpa(ember)(q, k, v, attn_mask=ember.ones(4, 5, dtype=ember.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        sdpa(ember)(q, k, v, attn_mask=ember.ones(4, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="to have the same dtype"):
        sdpa(ember)(q, k.double(), v)


# ----------------------------------------------------------------------------------------------
# MultiheadAttention


def pair(*args, dtype="float64", **kwargs):
    torch.manual_seed(0)
    t_mod = torch.nn.MultiheadAttention(*args, **kwargs).to(getattr(torch, dtype))
    e_mod = ember.nn.MultiheadAttention(*args, **kwargs).to(getattr(ember, dtype))
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    e_mod.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                           for k, v in t_mod.state_dict().items()})
    return t_mod, e_mod


def compare(t_mod, e_mod, run, arrays, rtol=1e-9, atol=1e-9):
    """run(lib, module, *tensors) -> results; compare them and all gradients with torch."""
    results = []
    for lib, mod in ((torch, t_mod), (ember, e_mod)):
        inputs = [lib.from_numpy(a.copy()) for a in arrays]
        for x in inputs:
            if x.is_floating_point():
                x.requires_grad_()
        outs = run(lib, mod, *inputs)
        tensors = [o for o in outs if o is not None]
        weights = [lib.from_numpy(np.random.default_rng(1).standard_normal(tuple(o.shape)))
                   .to(o.dtype) for o in tensors]
        sum((o * w).nan_to_num().sum() for o, w in zip(tensors, weights)).backward()
        grads = [x.grad for x in inputs] + [p.grad for p in mod.parameters()]
        results.append((outs, grads))
    (t_outs, t_grads), (e_outs, e_grads) = results
    for k, (e, t) in enumerate(zip(e_outs, t_outs)):
        if t is None:
            assert e is None, f"output {k}: torch returns None"
            continue
        assert tuple(e.shape) == tuple(t.shape), f"output {k}: {e.shape} != {t.shape}"
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"output {k}")
    for k, (e, t) in enumerate(zip(e_grads, t_grads)):
        if t is None:
            assert e is None or not np.any(e.numpy()), f"grad {k}"
            continue
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"grad {k}")


MASKS = {
    "none": (None, None),
    "padding_bool": ("bool", None),
    "padding_float": ("float", None),
    "attn_2d_bool": (None, "bool2"),
    "attn_3d_float": (None, "float3"),
    "both_float": ("float", "float2"),
    "both_bool": ("bool", "bool3"),
}


def make_masks(kind, batch, heads, tgt, src, batched=True):
    padding, attn = MASKS[kind]
    arrays = []
    if padding == "bool":
        mask = rng.random((batch, src)) < 0.3
        mask[:, 0] = False
        arrays.append(mask if batched else mask[0])
    elif padding == "float":
        mask = np.where(rng.random((batch, src)) < 0.3, -np.inf, rng.standard_normal((batch, src)))
        mask[:, 0] = 0.0
        arrays.append(mask if batched else mask[0])
    if attn is not None:
        shape = (tgt, src) if attn.endswith("2") else (batch * heads, tgt, src)
        if not batched and not attn.endswith("2"):
            shape = (heads, tgt, src)
        if attn.startswith("bool"):
            mask = rng.random(shape) < 0.3
            mask[..., 0] = False
        else:
            mask = rng.standard_normal(shape)
        arrays.append(mask)
    return padding, attn, arrays


OPTIONS = [
    {}, {"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True},
    {"kdim": 3, "vdim": 5}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3},
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(o) or "default")
@pytest.mark.parametrize("masks", list(MASKS))
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_against_torch(options, masks, need_weights, average):
    heads, embed, batch, tgt, src = 2, 4, 3, 4, 5
    t_mod, e_mod = pair(embed, heads, **options)
    kdim, vdim = options.get("kdim", embed), options.get("vdim", embed)
    padding, attn, mask_arrays = make_masks(masks, batch, heads, tgt, src)

    def run(lib, mod, q, k, v, *mask_tensors):
        found = iter(mask_tensors)
        kpm = next(found) if padding else None
        am = next(found) if attn else None
        return mod(q, k, v, key_padding_mask=kpm, need_weights=need_weights, attn_mask=am,
                   average_attn_weights=average)
    compare(t_mod, e_mod, run, [T(tgt, batch, embed), T(src, batch, kdim),
                                T(src, batch, vdim)] + mask_arrays)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["none", "both_bool", "attn_3d_float"])
def test_mha_self_attention_batch_first(need_weights, masks):
    heads, embed, batch, seq = 2, 6, 3, 5
    t_mod, e_mod = pair(embed, heads, batch_first=True)
    padding, attn, mask_arrays = make_masks(masks, batch, heads, seq, seq)

    def run(lib, mod, x, *mask_tensors):
        found = iter(mask_tensors)
        kpm = next(found) if padding else None
        am = next(found) if attn else None
        return mod(x, x, x, key_padding_mask=kpm, attn_mask=am, need_weights=need_weights)
    compare(t_mod, e_mod, run, [T(batch, seq, embed)] + mask_arrays)


@pytest.mark.parametrize("masks", ["none", "padding_bool", "attn_3d_float", "both_float"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_unbatched(masks, need_weights):
    heads, embed, tgt, src = 2, 4, 3, 5
    t_mod, e_mod = pair(embed, heads, add_bias_kv=True)
    padding, attn, mask_arrays = make_masks(masks, 1, heads, tgt, src, batched=False)

    def run(lib, mod, q, k, v, *mask_tensors):
        found = iter(mask_tensors)
        kpm = next(found) if padding else None
        am = next(found) if attn else None
        return mod(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=need_weights)
    compare(t_mod, e_mod, run, [T(tgt, embed), T(src, embed), T(src, embed)] + mask_arrays)


@pytest.mark.parametrize("need_weights,with_padding", list(itertools.product([True, False],
                                                                             repeat=2)))
def test_mha_is_causal(need_weights, with_padding):
    heads, embed, batch, seq = 2, 4, 2, 5
    t_mod, e_mod = pair(embed, heads)
    causal = np.triu(np.full((seq, seq), -np.inf), 1)
    padding = np.zeros((batch, seq))
    padding[1, -2:] = -np.inf

    def run(lib, mod, x, mask, kpm):
        return mod(x, x, x, attn_mask=mask, is_causal=True, need_weights=need_weights,
                   key_padding_mask=kpm if with_padding else None)
    compare(t_mod, e_mod, run, [T(seq, batch, embed), causal, padding])


def test_mha_float32_and_eval_dropout():
    t_mod, e_mod = pair(8, 2, dropout=0.5, dtype="float32")
    t_mod.eval()
    e_mod.eval()
    arrays = [T(4, 2, 8).astype(np.float32) for _ in range(3)]
    compare(t_mod, e_mod, lambda lib, mod, q, k, v: mod(q, k, v), arrays, rtol=1e-5, atol=1e-6)
    e_mod.train()
    q = ember.from_numpy(arrays[0])
    out_a, _ = e_mod(q, q, q)
    out_b, _ = e_mod(q, q, q)
    assert not np.allclose(out_a.detach().numpy(), out_b.detach().numpy())


def test_mha_parameters_init_and_repr():
    for options in OPTIONS:
        t_mod = torch.nn.MultiheadAttention(8, 2, **options)
        e_mod = ember.nn.MultiheadAttention(8, 2, **options)
        assert [(n, tuple(p.shape)) for n, p in e_mod.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t_mod.named_parameters()]
        assert repr(e_mod) == repr(t_mod)
        assert type(e_mod.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(e_mod.out_proj, ember.nn.Linear)
        if e_mod.in_proj_bias is not None:
            assert not np.any(e_mod.in_proj_bias.detach().numpy())
            assert not np.any(e_mod.out_proj.bias.detach().numpy())
        weights = [e_mod.in_proj_weight] if e_mod._qkv_same_embed_dim else \
            [e_mod.q_proj_weight, e_mod.k_proj_weight, e_mod.v_proj_weight]
        for w in weights:  # xavier_uniform_: bound sqrt(6 / (fan_in + fan_out))
            bound = math.sqrt(6 / (w.shape[0] + w.shape[1]))
            values = np.abs(w.detach().numpy())
            assert values.max() <= bound and values.max() > 0.8 * bound
        if options.get("add_bias_kv"):
            assert e_mod.bias_k.shape == (1, 1, 8) and np.any(e_mod.bias_k.detach().numpy())


def test_functional_mha_separate_weights_and_static_kv():
    """F.multi_head_attention_forward with separate projections and static keys/values."""
    embed, heads, batch = 4, 2, 2
    ws = [T(embed, embed) for _ in range(5)]
    b_in, b_out = T(3 * embed), T(embed)
    static = [T(batch * heads, 6, embed // heads) for _ in range(2)]

    def fn(m, q, k, v, wq, wk, wv, wo, b_in, b_out, sk, sv):
        return m.nn.functional.multi_head_attention_forward(
            q, k, v, embed, heads, None, b_in, None, None, False, 0.0, wo, b_out,
            use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk,
            v_proj_weight=wv, static_k=sk, static_v=sv)
    check(fn, [T(3, batch, embed), T(5, batch, embed), T(5, batch, embed), ws[0], ws[1], ws[2],
               ws[3], b_in, b_out] + static, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda m, mha: mha(m.zeros(2, 3, 4, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 4), m.zeros(2, 3, 4)),
    lambda m, mha: mha(m.zeros(2, 4), m.zeros(2, 4), m.zeros(2, 4),
                       key_padding_mask=m.zeros(1, 2, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4),
                       key_padding_mask=m.zeros(3, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4),
                       attn_mask=m.zeros(2, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4),
                       attn_mask=m.zeros(3, 2, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4),
                       attn_mask=m.zeros(5, 2, 2, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 4), m.zeros(2, 4), m.zeros(2, 4),
                       attn_mask=m.zeros(3, 2, 2, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4),
                       attn_mask=m.zeros(2, 2, dtype=m.int64)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4),
                       key_padding_mask=m.zeros(3, 3, dtype=m.bool)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(2, 3, 4), is_causal=True),
    lambda m, mha: mha(m.zeros(2, 3, 6), m.zeros(2, 3, 6), m.zeros(2, 3, 6)),
    lambda m, mha: mha(m.zeros(2, 3, 4), m.zeros(2, 3, 4), m.zeros(5, 3, 4)),
])
def test_mha_errors_like_torch(call):
    with on_test_device():
        mods = {torch: torch.nn.MultiheadAttention(4, 2), ember: ember.nn.MultiheadAttention(4, 2)}
    check_raises(lambda m: call(m, mods[m]))


def test_mha_constructor_errors():
    check_raises(lambda m: m.nn.MultiheadAttention(0, 2), match="must be greater than 0")
    check_raises(lambda m: m.nn.MultiheadAttention(5, 2),
                 match="embed_dim must be divisible by num_heads")


def test_mha_mask_type_mismatch_warns():
    mha = ember.nn.MultiheadAttention(4, 2)
    x = ember.zeros(3, 2, 4)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask"):
        mha(x, x, x, key_padding_mask=ember.zeros(2, 3, dtype=ember.bool),
            attn_mask=ember.zeros(3, 3))

"""Transformer layers, stacks and the full model against torch.

Modules are built in torch with a seed (dropout 0, train mode, so torch takes its ordinary
path) and their state_dict copied into ember; outputs and the gradients w.r.t. the inputs and
every parameter are compared in float64, plus float32 checks.
"""
import itertools
import math

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def T(*shape):
    return rng.standard_normal(shape)


def pair(make, dtype="float64"):
    torch.manual_seed(0)
    t_mod = make(torch).to(getattr(torch, dtype))
    e_mod = make(ember).to(getattr(ember, dtype))
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    e_mod.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                           for k, v in t_mod.state_dict().items()})
    return t_mod, e_mod


def compare(t_mod, e_mod, run, arrays, rtol=1e-9, atol=1e-9):
    """run(lib, module, *tensors) -> output; compare it and all gradients with torch."""
    results = []
    for lib, mod in ((torch, t_mod), (ember, e_mod)):
        inputs = [lib.from_numpy(a.copy()) for a in arrays]
        for x in inputs:
            if x.is_floating_point():
                x.requires_grad_()
        out = run(lib, mod, *inputs)
        weight = lib.from_numpy(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        (out * weight.to(out.dtype)).sum().backward()
        results.append((out, [x.grad for x in inputs] + [p.grad for p in mod.parameters()]))
    (t_out, t_grads), (e_out, e_grads) = results
    assert tuple(e_out.shape) == tuple(t_out.shape)
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol,
                               atol=atol, err_msg="output")
    for k, (e, t) in enumerate(zip(e_grads, t_grads)):
        if t is None:
            assert e is None or not np.any(e.numpy()), f"grad {k}"
            continue
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"grad {k}")


def causal(n):
    return np.triu(np.full((n, n), -np.inf), 1)


def padding(batch, seq, as_float=False):
    mask = np.zeros((batch, seq), dtype=bool)
    mask[1:, -2:] = True
    return np.where(mask, -np.inf, 0.0) if as_float else mask


def activation(lib, kind):
    return lib.nn.functional.silu if kind == "callable" else kind


@pytest.mark.parametrize("norm_first,batch_first", list(itertools.product([False, True],
                                                                            repeat=2)))
@pytest.mark.parametrize("act", ["relu", "gelu", "callable"])
@pytest.mark.parametrize("masks", ["none", "causal", "padding", "both"])
def test_encoder_layer_against_torch(norm_first, batch_first, act, masks):
    d_model, heads, batch, seq = 6, 2, 3, 5
    t_mod, e_mod = pair(lambda lib: lib.nn.TransformerEncoderLayer(
        d_model, heads, dim_feedforward=10, dropout=0.0, activation=activation(lib, act),
        batch_first=batch_first, norm_first=norm_first))
    shape = (batch, seq, d_model) if batch_first else (seq, batch, d_model)

    def run(lib, mod, x, src_mask, kpm):
        return mod(x, src_mask=src_mask if masks in ("causal", "both") else None,
                   src_key_padding_mask=kpm if masks in ("padding", "both") else None)
    compare(t_mod, e_mod, run, [T(*shape), causal(seq), padding(batch, seq, as_float=True)])


@pytest.mark.parametrize("norm_first,batch_first", list(itertools.product([False, True],
                                                                            repeat=2)))
@pytest.mark.parametrize("masks", ["none", "tgt_causal", "all"])
def test_decoder_layer_against_torch(norm_first, batch_first, masks):
    d_model, heads, batch, tgt, src = 6, 2, 2, 4, 5
    t_mod, e_mod = pair(lambda lib: lib.nn.TransformerDecoderLayer(
        d_model, heads, dim_feedforward=8, dropout=0.0, activation="gelu",
        batch_first=batch_first, norm_first=norm_first))

    def shape(seq):
        return (batch, seq, d_model) if batch_first else (seq, batch, d_model)
    memory_mask = rng.standard_normal((tgt, src))

    def run(lib, mod, x, memory, tgt_mask, mem_mask, tgt_kpm, mem_kpm):
        if masks == "none":
            return mod(x, memory)
        if masks == "tgt_causal":
            return mod(x, memory, tgt_mask=tgt_mask, tgt_is_causal=True)
        return mod(x, memory, tgt_mask=tgt_mask, memory_mask=mem_mask,
                   tgt_key_padding_mask=tgt_kpm, memory_key_padding_mask=mem_kpm)
    compare(t_mod, e_mod, run, [T(*shape(tgt)), T(*shape(src)), causal(tgt), memory_mask,
                                padding(batch, tgt, True), padding(batch, src, True)])


@pytest.mark.parametrize("with_norm,is_causal", [(True, None), (False, True), (True, False)])
def test_encoder_stack_against_torch(with_norm, is_causal):
    d_model, heads, batch, seq = 4, 2, 2, 5

    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(d_model, heads, 8, dropout=0.0)
        norm = lib.nn.LayerNorm(d_model) if with_norm else None
        return lib.nn.TransformerEncoder(layer, 2, norm=norm, enable_nested_tensor=False)
    t_mod, e_mod = pair(make)
    names = [n for n, _ in e_mod.named_parameters()]
    assert "layers.1.self_attn.in_proj_weight" in names and "layers.0.linear2.bias" in names

    def run(lib, mod, x, mask, kpm):
        return mod(x, mask=mask, src_key_padding_mask=kpm, is_causal=is_causal)
    compare(t_mod, e_mod, run, [T(seq, batch, d_model), causal(seq),
                                padding(batch, seq, as_float=True)])


def test_decoder_stack_against_torch():
    d_model, heads, batch = 4, 2, 2

    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(d_model, heads, 8, dropout=0.0, norm_first=True)
        return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(d_model))
    t_mod, e_mod = pair(make)

    def run(lib, mod, x, memory, mask):
        return mod(x, memory, tgt_mask=mask)
    compare(t_mod, e_mod, run, [T(4, batch, d_model), T(6, batch, d_model), causal(4)])


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_against_torch(batch_first):
    d_model, heads, batch = 4, 2, 2

    def make(lib):
        return lib.nn.Transformer(d_model, heads, num_encoder_layers=2, num_decoder_layers=1,
                                  dim_feedforward=6, dropout=0.0, batch_first=batch_first)
    t_mod, e_mod = pair(make)

    def shape(seq):
        return (batch, seq, d_model) if batch_first else (seq, batch, d_model)

    def run(lib, mod, src, tgt, src_kpm):
        mask = lib.nn.Transformer.generate_square_subsequent_mask(tgt.shape[1 if batch_first
                                                                            else 0],
                                                                   dtype=lib.float64)
        return mod(src, tgt, tgt_mask=mask, src_key_padding_mask=src_kpm,
                   memory_key_padding_mask=src_kpm)
    compare(t_mod, e_mod, run, [T(*shape(5)), T(*shape(3)), padding(batch, 5, as_float=True)])


def test_unbatched_encoder_and_float32():
    t_mod, e_mod = pair(lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                        dtype="float32")
    compare(t_mod, e_mod, lambda lib, mod, x: mod(x), [T(5, 8).astype(np.float32)],
            rtol=1e-4, atol=1e-5)
    t_mod, e_mod = pair(lambda lib: lib.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0,
                                                       norm_first=True), dtype="float32")
    compare(t_mod, e_mod, lambda lib, mod, s, t: mod(s, t),
            [T(5, 3, 8).astype(np.float32), T(4, 3, 8).astype(np.float32)],
            rtol=1e-4, atol=1e-5)


def test_generate_square_subsequent_mask():
    for sz in (1, 4):
        e = ember.nn.Transformer.generate_square_subsequent_mask(sz)
        t = torch.nn.Transformer.generate_square_subsequent_mask(sz)
        assert e.dtype is ember.float32
        np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert ember.nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64).dtype \
        is ember.float64


def test_parameter_names_init_and_repr():
    make = {lib: lib.nn.Transformer(8, 2, 2, 1, 16, bias=False) for lib in (torch, ember)}
    assert [(n, tuple(p.shape)) for n, p in make[ember].named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in make[torch].named_parameters()]
    assert repr(make[ember]) == repr(make[torch])
    for name, p in make[ember].named_parameters():
        values = p.detach().numpy()
        if p.dim() > 1:  # xavier_uniform_
            bound = math.sqrt(6 / (p.shape[0] + p.shape[1]))
            assert np.abs(values).max() <= bound, name
            assert np.abs(values).max() > 0.7 * bound, name
        else:  # LayerNorm weights stay ones
            assert np.all(values == 1), name
    layer = ember.nn.TransformerEncoderLayer(8, 2)
    assert layer.activation_relu_or_gelu == 1 and layer.self_attn.dropout == 0.1
    assert ember.nn.TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
    assert ember.nn.TransformerEncoderLayer(8, 2, activation=ember.nn.GELU()) \
        .activation_relu_or_gelu == 2
    assert ember.nn.TransformerEncoderLayer(8, 2, activation=ember.tanh) \
        .activation_relu_or_gelu == 0


def test_layers_are_independent_copies():
    enc = ember.nn.TransformerEncoder(ember.nn.TransformerEncoderLayer(4, 2, 8), 3)
    first = enc.layers[0].linear1.weight
    assert first is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(first.detach().numpy(),
                                  enc.layers[2].linear1.weight.detach().numpy())


def test_dropout_in_training_mode():
    layer = ember.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = ember.randn(5, 2, 8)
    a, b = layer(x), layer(x)
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())


def test_torch_pickled_model_loads_and_runs(tmp_path):
    """torch.save of a whole model (classes named by torch's module paths) loads into ember."""
    torch.manual_seed(0)
    model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0),
                                        2, enable_nested_tensor=False)
    torch.save(model, tmp_path / "model.pt")
    loaded = ember.load(tmp_path / "model.pt", weights_only=False)
    assert type(loaded.layers[0].self_attn.out_proj).__name__ == \
        "NonDynamicallyQuantizableLinear"
    x = T(5, 2, 4).astype(np.float32)
    np.testing.assert_allclose(loaded(ember.from_numpy(x)).detach().numpy(),
                               model(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_errors_like_torch():
    from .oracle import check_raises

    models = {lib: lib.nn.Transformer(4, 2, 1, 1, 8) for lib in (torch, ember)}
    check_raises(lambda m: models[m](m.zeros(5, 2, 4), m.zeros(3, 3, 4)),
                 match="the batch number of src and tgt must be equal")
    check_raises(lambda m: models[m](m.zeros(5, 2, 4), m.zeros(3, 2, 5)),
                 match="the feature number of src and tgt must be equal to d_model")
    check_raises(lambda m: m.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
                 match="activation should be relu/gelu, not tanh")

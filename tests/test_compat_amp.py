"""ember.amp against torch.amp: autocast's per-op dtypes on the CPU (torch's lists), regions
(nesting, enabled=False, decorators, the cast cache), the deprecated spellings and their
warnings, CUDA regions without a GPU, custom_fwd/custom_bwd, and GradScaler's whole cycle."""
import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _arrays():
    shapes = dict(m=(3, 4), n=(4, 5), v=(4,), b3=(2, 3, 4), c3=(2, 4, 5), o3=(2, 3, 5),
                  o2=(3, 5), img=(2, 3, 6, 6), w2=(4, 3, 3, 3), seq=(2, 3, 8), w1=(4, 3, 3),
                  vol=(1, 2, 4, 4, 4), p=(3, 4), sq=(4, 4), t=(3, 4))
    arrays = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    arrays["prob"] = 1 / (1 + np.exp(-arrays["p"]))
    arrays["nT"] = np.ascontiguousarray(arrays["n"].T)
    arrays["w2T"] = np.ascontiguousarray(arrays["w2"].transpose(1, 0, 2, 3))
    return arrays


A = _arrays()
TARGETS = np.array([0, 2, 1])

# name: f(lib, F, get) -- get(key) is the input in the dtype under test
CASES = {
    "linear": lambda L, F, g: F.linear(g("m"), g("nT")),
    "matmul": lambda L, F, g: g("m") @ g("n"),
    "mm": lambda L, F, g: L.mm(g("m"), g("n")),
    "bmm": lambda L, F, g: L.bmm(g("b3"), g("c3")),
    "baddbmm": lambda L, F, g: L.baddbmm(g("o3"), g("b3"), g("c3")),
    "addmm": lambda L, F, g: L.addmm(g("o2"), g("m"), g("n")),
    "addbmm": lambda L, F, g: L.addbmm(g("o2"), g("b3"), g("c3")),
    "mv": lambda L, F, g: L.mv(g("m"), g("v")),
    "conv1d": lambda L, F, g: F.conv1d(g("seq"), g("w1")),
    "conv2d": lambda L, F, g: F.conv2d(g("img"), g("w2")),
    "conv_transpose2d": lambda L, F, g: F.conv_transpose2d(g("img"), g("w2T")),
    "prelu": lambda L, F, g: F.prelu(g("img"), L.ones(1)),
    "sdpa": lambda L, F, g: F.scaled_dot_product_attention(g("b3"), g("b3"), g("b3")),
    "mse_loss": lambda L, F, g: F.mse_loss(g("p"), g("t")),
    "l1_loss": lambda L, F, g: F.l1_loss(g("p"), g("t")),
    "huber_loss": lambda L, F, g: F.huber_loss(g("p"), g("t")),
    "smooth_l1_loss": lambda L, F, g: F.smooth_l1_loss(g("p"), g("t")),
    "cross_entropy": lambda L, F, g: F.cross_entropy(g("p"), L.tensor(TARGETS)),
    "nll_loss": lambda L, F, g: F.nll_loss(g("p"), L.tensor(TARGETS)),
    "binary_cross_entropy": lambda L, F, g: F.binary_cross_entropy(g("prob"), g("prob")),
    "bce_with_logits": lambda L, F, g: F.binary_cross_entropy_with_logits(g("p"), g("prob")),
    "kl_div": lambda L, F, g: F.kl_div(g("p"), g("prob"), reduction="batchmean"),
    "soft_margin_loss": lambda L, F, g: F.soft_margin_loss(g("p"), g("t")),
    "hinge_embedding_loss": lambda L, F, g: F.hinge_embedding_loss(g("p"), g("t")),
    "poisson_nll_loss": lambda L, F, g: F.poisson_nll_loss(g("p"), g("prob")),
    "cosine_embedding_loss": lambda L, F, g: F.cosine_embedding_loss(g("p"), g("t"),
                                                                     L.ones(3)),
    "triplet_margin_loss": lambda L, F, g: F.triplet_margin_loss(g("p"), g("t"), g("m")),
    "multi_margin_loss": lambda L, F, g: F.multi_margin_loss(g("p"), L.tensor(TARGETS)),
    "prod": lambda L, F, g: L.prod(g("v")),
    "prod_dim": lambda L, F, g: g("m").prod(1),
    "cdist": lambda L, F, g: L.cdist(g("m"), g("m")),
    "trace": lambda L, F, g: L.trace(g("sq")),
    "linalg_inv": lambda L, F, g: L.linalg.inv(g("sq") + 4 * L.eye(4, dtype=g("sq").dtype)),
    "max_pool3d": lambda L, F, g: F.max_pool3d(g("vol"), 2),
    "avg_pool3d": lambda L, F, g: F.avg_pool3d(g("vol"), 2),
    "adaptive_avg_pool3d": lambda L, F, g: F.adaptive_avg_pool3d(g("vol"), 2),
    "adaptive_max_pool3d": lambda L, F, g: F.adaptive_max_pool3d(g("vol"), 2),
    "max_pool2d": lambda L, F, g: F.max_pool2d(g("img"), 2),
    "avg_pool2d": lambda L, F, g: F.avg_pool2d(g("img"), 2),
    "reflection_pad2d": lambda L, F, g: F.pad(g("img"), (1, 1, 1, 1), mode="reflect"),
    "replication_pad2d": lambda L, F, g: F.pad(g("img"), (1, 1, 1, 1), mode="replicate"),
    "exp": lambda L, F, g: L.exp(g("m")),
    "softmax": lambda L, F, g: F.softmax(g("m"), -1),
    "log_softmax": lambda L, F, g: F.log_softmax(g("m"), -1),
    "sum": lambda L, F, g: g("m").sum(),
    "layer_norm": lambda L, F, g: F.layer_norm(g("m"), (4,), L.ones(4), L.zeros(4)),
    "group_norm": lambda L, F, g: F.group_norm(g("img"), 1),
    "cat": lambda L, F, g: L.cat([g("m"), L.tensor(A["m"])]),
    "stack": lambda L, F, g: L.stack([g("m"), L.tensor(A["m"])]),
    "index_copy": lambda L, F, g: g("m").index_copy(0, L.tensor([0]), L.tensor(A["m"][:1])),
    "cosine_similarity": lambda L, F, g: F.cosine_similarity(g("m"), g("m")),
    "norm": lambda L, F, g: g("m").norm(),
    "addcmul": lambda L, F, g: L.addcmul(g("m"), g("m"), L.tensor(A["m"])),
    "pow": lambda L, F, g: g("m").pow(2),
    "cumsum": lambda L, F, g: g("m").cumsum(0),
    "embedding": lambda L, F, g: F.embedding(L.tensor(TARGETS), g("n")),
    "float64_stays": lambda L, F, g: L.mm(g("m").double(), g("n").double()),
}


def _under_autocast(lib, case, dtype_name, region_dtype=None):
    dtype = getattr(lib, dtype_name)
    get = lambda key: lib.tensor(A[key]).to(dtype)  # noqa: E731
    region = {} if region_dtype is None else {"dtype": getattr(lib, region_dtype)}
    with lib.autocast("cpu", **region):
        out = CASES[case](lib, lib.nn.functional, get)
    return out


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_cpu_autocast_runs_each_op_in_torchs_dtype(case, dtype):
    ours = _under_autocast(ember, case, dtype)
    theirs = _under_autocast(torch, case, dtype)
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    expected = theirs.float().detach().numpy()
    # bfloat16 keeps 8 significant bits: results agree to a few units of its last place,
    # scaled by the size of the values (sums of rounded products round differently)
    scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
    np.testing.assert_allclose(ours.float().detach().numpy(), expected, rtol=2e-2,
                               atol=2e-2 * scale)


@pytest.mark.parametrize("case", ["linear", "conv2d", "bmm", "mse_loss"])
def test_float16_regions_on_the_cpu(case):
    ours = _under_autocast(ember, case, "float32", "float16")
    theirs = _under_autocast(torch, case, "float32", "float16")
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]


def test_gradients_reach_float32_weights_as_in_torch():
    def run(lib):
        lib.manual_seed(0)
        w = lib.tensor(A["nT"], requires_grad=True)
        b = lib.zeros(5, requires_grad=True)
        x = lib.tensor(A["m"])
        with lib.autocast("cpu"):
            y = lib.nn.functional.linear(x, w, b)
            loss = lib.nn.functional.mse_loss(y, lib.zeros(3, 5))
        loss.backward()
        return y.dtype, loss.dtype, w.grad, b.grad

    (ey, el, ew, eb), (ty, tl, tw, tb) = run(ember), run(torch)
    assert (str(ey), str(el)) == ("ember.bfloat16", "ember.float32")
    assert (str(ty), str(tl)) == ("torch.bfloat16", "torch.float32")
    assert ew.dtype is ember.float32 and eb.dtype is ember.float32
    np.testing.assert_allclose(ew.numpy(), tw.numpy(), rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(eb.numpy(), tb.numpy(), rtol=3e-2, atol=3e-2)


def test_regions_nest_and_restore_state():
    for lib in (ember, torch):
        assert not lib.is_autocast_enabled("cpu")
        with lib.autocast("cpu") as region:
            assert isinstance(region, lib.autocast)
            assert lib.is_autocast_enabled("cpu")
            assert lib.get_autocast_dtype("cpu") is lib.bfloat16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
                assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype is lib.float32
            with lib.autocast("cpu", dtype=lib.float16):
                assert lib.get_autocast_dtype("cpu") is lib.float16
            assert lib.get_autocast_dtype("cpu") is lib.bfloat16
            assert lib.mm(lib.ones(2, 2), lib.ones(2, 2)).dtype is lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        assert not lib.is_autocast_enabled()  # without a device: CUDA's, as torch
    assert ember.ops._dispatch._autocast is None  # the hot path is back to no hook


def test_autocast_as_a_decorator():
    for lib in (ember, torch):
        @lib.autocast("cpu")
        def product(a, b):
            return a @ b
        assert product(lib.ones(2, 2), lib.ones(2, 2)).dtype is lib.bfloat16
        assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.float32


def test_in_place_ops_are_not_cast():
    for lib in (ember, torch):
        with lib.autocast("cpu"):
            a = lib.ones(2, 2)
            a.addmm_(lib.ones(2, 2), lib.ones(2, 2))
            assert a.dtype is lib.float32


def test_the_cast_of_a_weight_is_cached_inside_a_region():
    from ember.amp import autocast_mode

    w = ember.ones(4, 4, requires_grad=True)
    x = ember.ones(2, 4)
    def cast_node(y):  # linear is mm(x, weight.t()) as in torch: MmBackward0 -> TBackward0 -> cast
        return y.grad_fn.next_functions[1][0].next_functions[0][0]

    with ember.autocast("cpu"):
        first = ember.nn.functional.linear(x, w)
        second = ember.nn.functional.linear(x, w)
        # one cast node serves both products: the weight was converted once
        assert type(cast_node(first)).__name__ == "ToCopyBackward0"
        assert cast_node(first) is cast_node(second)
        assert len(autocast_mode._cache) == 1
        with ember.autocast("cpu", cache_enabled=False):
            third = ember.nn.functional.linear(x, w)
        assert cast_node(third) is not cast_node(first)
    assert len(autocast_mode._cache) == 0  # the outermost exit clears it


def test_unsupported_cpu_dtype_warns_and_disables_like_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of"):
            region = lib.autocast("cpu", dtype=lib.float64)
        with region:
            assert not lib.is_autocast_enabled("cpu")
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            lib.autocast("tpu")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(1)


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the machine without a GPU")
def test_cuda_autocast_without_a_gpu_disables_itself_like_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            region = lib.autocast("cuda")
        with region:
            assert not lib.is_autocast_enabled("cuda")
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.float32
        with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is "
                                               "deprecated"):
            lib.cuda.amp.autocast()


def test_cpu_amp_autocast_is_deprecated_but_works():
    for lib in (ember, torch):
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is "
                                               "deprecated"):
            region = lib.cpu.amp.autocast()
        with region:
            assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype is lib.bfloat16


def test_custom_fwd_and_bwd_carry_the_region():
    def make(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.inside = lib.is_autocast_enabled("cpu")
                return (x @ x.mT) * 1.0

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return (g + g.mT) @ x
        return Square

    for lib in (ember, torch):
        x = lib.ones(2, 2, requires_grad=True)
        with lib.autocast("cpu"):
            y = make(lib).apply(x.bfloat16())
        assert y.dtype is lib.float32  # forward ran with autocast off, inputs cast to float32
        y.sum().backward()
        assert x.grad.dtype is lib.float32
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.amp.custom_fwd(device_type=None)


# ----------------------------------------------------------------------------------------------
# GradScaler


def _scaler_run(lib, grads_per_step, **kwargs):
    """Run one parameter through steps whose gradients are given; returns what was seen."""
    p = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([p], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **kwargs)
    seen = []
    for g in grads_per_step:
        loss = scaler.scale((p * lib.tensor(g, dtype=lib.float32)).sum())
        loss.backward()
        scaled_grad = p.grad.clone()
        scaler.unscale_(opt)
        unscaled = p.grad.clone()
        scaler.step(opt)
        scaler.update()
        seen.append((loss.item(), scaled_grad.tolist(), unscaled.tolist(), p.tolist(),
                     scaler.get_scale(), scaler._get_growth_tracker()))
        opt.zero_grad()
    return seen, scaler.state_dict()


def test_grad_scaler_cycle_matches_torch():
    steps = [[1.0, 2.0, 3.0], [float("inf"), 1.0, 1.0], [0.5, 0.5, 0.5], [1.0, float("nan"), 0],
             [2.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
    ours = _scaler_run(ember, steps, init_scale=256.0, growth_interval=2)
    theirs = _scaler_run(torch, steps, init_scale=256.0, growth_interval=2)
    assert repr(ours) == repr(theirs)


def test_grad_scaler_state_dict_round_trip_and_errors():
    for lib in (ember, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_factor=4.0)
        other = lib.amp.GradScaler("cpu")
        other.load_state_dict(scaler.state_dict())
        assert other.state_dict() == scaler.state_dict()
        assert pickle.loads(pickle.dumps(scaler)).get_scale() == 8.0
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=1.0)
        with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
            scaler.unscale_(opt)
        scaler.scale(p.sum()).backward()
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            scaler.unscale_(opt)
        scaler.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            scaler.step(opt)
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            scaler.step(opt, closure=lambda: None)
        scaler.update(new_scale=2.0)
        assert scaler.get_scale() == 2.0
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            other.load_state_dict({})
        with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable"):
            scaler.scale([1.0])
        assert [t.item() for t in scaler.scale([lib.ones(()), (lib.ones(()),)])[1]] == [2.0]


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the machine without a GPU")
def test_cuda_grad_scaler_without_a_gpu_is_a_pass_through_like_torch():
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scaler = lib.cuda.amp.GradScaler(enabled=True)
        messages = [str(w.message) for w in caught]
        assert any("torch.cuda.amp.GradScaler(args...)` is deprecated" in m for m in messages)
        assert "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling." \
            in messages
        assert not scaler.is_enabled() and scaler.get_scale() == 1.0
        assert scaler.state_dict() == {}
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=1.0)
        loss = p.sum()
        assert scaler.scale(loss) is loss
        loss.backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        assert p.tolist() == [0.0, 0.0]

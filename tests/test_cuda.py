"""ember on the GPU (CuPy): device moves, factories, mixed-device rules, training steps, save/load.

Every test here needs CuPy and a GPU and is skipped without them. The op table runs on the GPU
too -- every op's CuPy kernel and backward rule against torch on the CPU:

    EMBER_TEST_DEVICE=cuda python -m pytest tests/test_ops.py tests/test_cuda.py

Training steps compare the GPU run with the same step on the CPU (the CPU path is itself
checked against torch across the rest of the suite).
"""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs CuPy and a GPU")


def host(t):
    return np.asarray(t.detach().cpu())


# ----------------------------------------------------------------------------------------------
# the ember.cuda module


def test_cuda_module_reports_the_gpu():
    assert ember.cuda.device_count() >= 1
    assert ember.cuda.current_device() == 0
    assert isinstance(ember.cuda.get_device_name(), str) and ember.cuda.get_device_name()
    major, minor = ember.cuda.get_device_capability()
    assert major >= 3 and minor >= 0


def test_memory_allocated_follows_live_arrays():
    ember.cuda.synchronize()
    before = ember.cuda.memory_allocated()
    x = ember.empty(1 << 20, device="cuda")  # 4 MiB of float32
    assert ember.cuda.memory_allocated() >= before + x.numel() * 4
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del x
    assert ember.cuda.memory_allocated() == before
    ember.cuda.empty_cache()


# ----------------------------------------------------------------------------------------------
# devices and factories


@pytest.mark.parametrize("make", [
    lambda **kw: ember.zeros(2, 3, **kw),
    lambda **kw: ember.ones(4, **kw),
    lambda **kw: ember.full((2, 2), 7.0, **kw),
    lambda **kw: ember.arange(5, **kw),
    lambda **kw: ember.eye(3, **kw),
    lambda **kw: ember.tensor([[1.0, 2.0], [3.0, 4.0]], **kw),
    lambda **kw: ember.linspace(0, 1, 5, **kw),
    lambda **kw: ember.empty(3, **kw).zero_(),
], ids=["zeros", "ones", "full", "arange", "eye", "tensor", "linspace", "empty"])
def test_factories_make_gpu_tensors_equal_to_cpu_ones(make):
    g = make(device="cuda")
    c = make()
    assert g.device == ember.device("cuda", 0) and g.is_cuda and not g.is_cpu
    assert str(g.device) == "cuda:0"
    assert g.dtype == c.dtype and g.shape == c.shape
    np.testing.assert_array_equal(host(g), host(c))


def test_random_factories_draw_the_same_numbers_on_every_device():
    ember.manual_seed(3)
    c = ember.randn(4, 5)
    ember.cuda.manual_seed(3)
    g = ember.randn(4, 5, device="cuda")
    assert g.is_cuda
    np.testing.assert_array_equal(host(g), host(c))


def test_round_trip_keeps_values_dtype_and_shape():
    for dtype in (ember.float32, ember.float64, ember.float16, ember.int64, ember.bool):
        c = (ember.arange(12).reshape(3, 4) % 3).to(dtype)
        g = c.cuda()
        assert g.is_cuda and g.dtype == dtype
        back = g.cpu()
        assert back.is_cpu and back.dtype == dtype
        np.testing.assert_array_equal(host(back), host(c))


def test_moves_keep_the_layout_like_torchs():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for view in (lambda x: x.permute(2, 0, 1), lambda x: x.mT, lambda x: x[:, ::2]):
        e = view(ember.from_numpy(a.copy())).cuda()
        t = view(torch.from_numpy(a.copy())).cuda()
        assert e.stride() == t.stride() and e.is_contiguous() == t.is_contiguous()
        assert e.cpu().stride() == t.cpu().stride()
        np.testing.assert_array_equal(host(e), t.cpu().numpy())


def test_to_accepts_every_spelling_of_the_gpu():
    x = ember.ones(2)
    for where in ("cuda", "cuda:0", 0, ember.device("cuda"), ember.device("cuda", 0)):
        assert x.to(where).device == ember.device("cuda:0")
    assert x.to("cuda", ember.float64).dtype == ember.float64
    assert x.cuda().to(ember.ones(1)).is_cpu  # to(other) takes other's device


def test_gradient_flows_back_across_a_device_move():
    x = ember.randn(3, 4, requires_grad=True)
    y = (x.cuda() * 2).sin().sum()
    y.backward()
    assert x.grad.is_cpu
    np.testing.assert_allclose(host(x.grad), 2 * np.cos(2 * host(x)), rtol=1e-6)


def test_mixing_devices_raises_a_clear_error():
    with pytest.raises(RuntimeError, match="same device.*cpu.*cuda:0|same device.*cuda:0.*cpu"):
        ember.ones(3) + ember.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="same device"):
        ember.ones(3, device="cuda").add_(ember.ones(3))


def test_a_zero_dim_cpu_tensor_joins_a_gpu_op():
    g = ember.arange(3.0, device="cuda")
    for out in (ember.tensor(2.0) * g, g * ember.tensor(2.0), g.mul_(ember.tensor(2.0))):
        assert out.is_cuda
    np.testing.assert_array_equal(host(g), [0.0, 2.0, 4.0])


def test_repr_names_the_device():
    assert repr(ember.tensor([1.0, 2.0], device="cuda")) == \
        "tensor([1., 2.], device='cuda:0')"


def test_item_tolist_and_numpy_bring_values_to_the_host():
    g = ember.tensor([[1.5, 2.5]], device="cuda")
    assert g[0, 1].item() == 2.5
    assert g.tolist() == [[1.5, 2.5]]
    assert isinstance(np.asarray(g), np.ndarray)


def test_indexing_and_scatter_on_the_gpu():
    c = ember.randn(5, 4)
    g = c.cuda()
    idx = ember.tensor([4, 0, 4])
    np.testing.assert_array_equal(host(g[idx.cuda()]), host(c[idx]))
    np.testing.assert_array_equal(host(g[g > 0]), host(c[c > 0]))
    g[idx.cuda(), 1] = 9.0
    c[idx, 1] = 9.0
    np.testing.assert_array_equal(host(g), host(c))
    src = ember.ones(3, 4)
    np.testing.assert_array_equal(host(ember.zeros(5, 4, device="cuda").index_add(
        0, idx.cuda(), src.cuda())), host(ember.zeros(5, 4).index_add(0, idx, src)))


# ----------------------------------------------------------------------------------------------
# training steps: the GPU step equals the CPU step


def _mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))


def _cnn():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 4 * 4, 5))


class _Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 16, num_layers=2, batch_first=True)
        self.gru = nn.GRU(16, 8, batch_first=True)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        h, _ = self.lstm(x)
        h, _ = self.gru(h)
        return self.head(h[:, -1])


class _Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 16)
        self.block = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True,
                                                norm_first=True, activation="gelu")
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], device=x.device)
        h = self.block(self.embed(x), src_mask=mask, is_causal=True)
        return self.head(F.layer_norm(h, (16,))[:, -1])


NETS = {
    "mlp": (_mlp, lambda: ember.randn(8, 20)),
    "cnn": (_cnn, lambda: ember.randn(4, 3, 8, 8)),
    "recurrent": (_Recurrent, lambda: ember.randn(4, 7, 6)),
    "transformer": (_Transformer, lambda: ember.randint(0, 11, (4, 9))),
}
# Adam's step g / (sqrt(v) + eps) turns rounding noise in a gradient that should be 0 (a bias
# before BatchNorm, attention's key bias) into a full step of +-lr; a larger eps keeps the step
# a smooth function of the gradient, so GPU and CPU stay comparable
OPTIMIZERS = {
    "sgd": lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "adam": lambda p: ember.optim.Adam(p, lr=1e-2, eps=1e-4),
    "adamw": lambda p: ember.optim.AdamW(p, lr=1e-2, eps=1e-4, weight_decay=0.1),
}


def _train(make_net, data, target, optimizer, device, state):
    net = make_net().to(device)
    net.load_state_dict(state)
    opt = OPTIMIZERS[optimizer](net.parameters())
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(net(data.to(device)), target.to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return net, losses


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("name", NETS)
def test_training_steps_on_the_gpu_match_the_cpu(name, optimizer):
    make_net, make_data = NETS[name]
    state = make_net().state_dict()
    data, target = make_data(), ember.randint(0, 5, (make_data().shape[0],))
    cpu_net, cpu_losses = _train(make_net, data, target, optimizer, "cpu", state)
    gpu_net, gpu_losses = _train(make_net, data, target, optimizer, "cuda", state)
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4, atol=1e-5)
    for (name_, c), (_, g) in zip(cpu_net.state_dict().items(), gpu_net.state_dict().items()):
        assert g.is_cuda, name_
        np.testing.assert_allclose(host(g), host(c), rtol=1e-3, atol=1e-4, err_msg=name_)


def test_gradient_clipping_and_a_scheduler_on_the_gpu():
    net = _mlp().cuda()
    opt = ember.optim.SGD(net.parameters(), lr=0.5)
    sched = ember.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    loss = net(ember.randn(8, 20, device="cuda")).pow(2).sum()
    loss.backward()
    total = nn.utils.clip_grad_norm_(net.parameters(), 0.1)
    assert total.is_cuda
    norms = ember.stack([p.grad.norm() for p in net.parameters()]).norm()
    assert abs(norms.item() - 0.1) < 1e-4
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] == 0.25


# ----------------------------------------------------------------------------------------------
# save and load


def test_save_and_load_keep_the_device(tmp_path):
    net = _mlp().cuda()
    path = tmp_path / "gpu.pt"
    ember.save(net.state_dict(), path)
    loaded = ember.load(path)
    assert all(t.is_cuda for t in loaded.values())
    on_cpu = ember.load(path, map_location="cpu")
    assert all(t.is_cpu for t in on_cpu.values())
    for key, t in net.state_dict().items():
        np.testing.assert_array_equal(host(loaded[key]), host(t))
        np.testing.assert_array_equal(host(on_cpu[key]), host(t))


def test_torch_reads_an_ember_gpu_checkpoint_onto_its_gpu(tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    t = ember.randn(3, 4, device="cuda")
    ember.save({"w": t}, tmp_path / "w.pt")
    loaded = torch.load(tmp_path / "w.pt")["w"]
    assert loaded.is_cuda
    np.testing.assert_array_equal(loaded.cpu().numpy(), host(t))


# ----------------------------------------------------------------------------------------------
# against torch on its own GPU


def test_a_training_step_equals_torchs_on_the_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    e_net = _cnn().cuda()
    t_net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                                torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 4 * 4, 5)).cuda()
    t_net.load_state_dict({k: torch.from_numpy(host(v)).cuda()
                           for k, v in e_net.state_dict().items()})
    x, y = np.random.default_rng(0).standard_normal((4, 3, 8, 8), np.float32), np.arange(4)
    e_loss = F.cross_entropy(e_net(ember.from_numpy(x).cuda()), ember.from_numpy(y).cuda())
    t_loss = torch.nn.functional.cross_entropy(t_net(torch.from_numpy(x).cuda()),
                                               torch.from_numpy(y).cuda())
    e_loss.backward()
    t_loss.backward()
    assert abs(e_loss.item() - t_loss.item()) < 1e-4
    for (name, e), t in zip(e_net.named_parameters(), t_net.parameters()):
        np.testing.assert_allclose(host(e.grad), t.grad.cpu().numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=name)

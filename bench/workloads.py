"""The benchmark workloads, each written once for either library (`lib` is ember or torch).

A workload function builds its model and synthetic data (float32, fixed seeds) and returns
`step`, a zero-argument function running one unit of work -- a training step (forward,
backward, optimizer step) unless the name says otherwise. The same code runs under both
libraries, which is the point: the comparison is API-for-API. Everything is built on the
library's default device (`set_default_device`, which `run.py --device cuda` sets).
"""
import numpy as np


def _data(lib, *shape, classes=None, seed=0):
    rng = np.random.default_rng(seed)
    if classes is not None:
        data = rng.integers(0, classes, shape).astype(np.int64)
    else:
        data = rng.standard_normal(shape).astype(np.float32)
    return lib.from_numpy(data).to(lib.get_default_device())


def _train_step(lib, model, optimizer, inputs, targets, loss_fn=None):
    loss_fn = loss_fn or lib.nn.functional.cross_entropy

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
    return step


def _mlp(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def mlp(lib):
    """784-1024-1024-10 with ReLU, batch 256, cross-entropy, SGD momentum 0.9."""
    model = _mlp(lib)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _train_step(lib, model, optimizer, _data(lib, 256, 784), _data(lib, 256, classes=10))


def cnn(lib):
    """Conv(1->32,3,p1)-ReLU-MaxPool2-Conv(32->64,3,p1)-ReLU-MaxPool2-Linear(3136->128)-ReLU-
    Linear(128->10) on 28x28, batch 128, Adam."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    return _train_step(lib, model, optimizer, _data(lib, 128, 1, 28, 28),
                       _data(lib, 128, classes=10))


def _resnet18(lib, num_classes=10):
    """A ResNet-18-style network for 32x32 inputs: BatchNorm, residual adds, strided convs,
    adaptive average pooling."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            out = lib.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return lib.relu(out + self.shortcut(x))

    layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)


def resnet(lib):
    """ResNet-18-style on 32x32x3, batch 32, SGD."""
    lib.manual_seed(0)
    model = _resnet18(lib)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _train_step(lib, model, optimizer, _data(lib, 32, 3, 32, 32),
                       _data(lib, 32, classes=10))


def resnet_inference(lib):
    """The resnet forward pass under inference_mode (batch 32)."""
    lib.manual_seed(0)
    model = _resnet18(lib).eval()
    x = _data(lib, 32, 3, 32, 32)

    def step():
        with lib.inference_mode():
            model(x)
    return step


def overhead_forward(lib, chain=100):
    """A chain of tiny ops (16 floats, grad recorded): time per op is framework overhead."""
    x = lib.ones(16, requires_grad=True)
    w = lib.full((16,), 0.5)

    def step():
        y = x
        for _ in range(chain // 4):
            y = lib.tanh(y * w + 1.0) - w
        return y.sum()
    step.ops_per_step = chain + 1
    return step


def overhead_backward(lib, chain=100):
    """The same chain, forward + backward."""
    forward = overhead_forward(lib, chain)

    def step():
        forward().backward()
    step.ops_per_step = chain + 1
    return step


# ----------------------------------------------------------------------------------------------
# sequence models

VOCAB, D_MODEL, LAYERS, HEADS, CONTEXT, BATCH = 65, 256, 4, 4, 128, 16


def _gpt(lib, sdpa):
    """Decoder-only GPT: token + position embeddings, pre-norm blocks (LayerNorm, causal
    self-attention, LayerNorm, GELU MLP 4x), final LayerNorm, linear head."""
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.register_buffer("causal", lib.ones(CONTEXT, CONTEXT, dtype=lib.bool).triu(1),
                                 persistent=False)

        def forward(self, x):
            batch, steps, _ = x.shape
            q, k, v = (t.view(batch, steps, HEADS, D_MODEL // HEADS).transpose(1, 2)
                       for t in self.qkv(x).chunk(3, -1))
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:  # attention written out: matmul, masked softmax, matmul
                scores = q @ k.transpose(-2, -1) * (1.0 / (q.shape[-1] ** 0.5))
                scores = scores.masked_fill(self.causal[:steps, :steps], float("-inf"))
                y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).reshape(batch, steps, D_MODEL))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D_MODEL)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(D_MODEL)
            self.mlp = nn.Sequential(nn.Linear(D_MODEL, 4 * D_MODEL), nn.GELU(),
                                     nn.Linear(4 * D_MODEL, D_MODEL))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, D_MODEL)
            self.positions = nn.Embedding(CONTEXT, D_MODEL)
            self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB)

        def forward(self, idx):
            x = self.tokens(idx) + self.positions(lib.arange(idx.shape[1]))
            return self.head(self.ln(self.blocks(x)))

    return GPT()


def _gpt_batch(lib):
    data = np.random.default_rng(0).integers(0, VOCAB, (BATCH, CONTEXT + 1))
    device = lib.get_default_device()
    return (lib.from_numpy(data[:, :-1].copy()).to(device),
            lib.from_numpy(data[:, 1:].copy()).to(device))


def _gpt_training(lib, sdpa):
    lib.manual_seed(0)
    model = _gpt(lib, sdpa)
    optimizer = lib.optim.AdamW(model.parameters(), lr=3e-4)
    inputs, targets = _gpt_batch(lib)

    def loss_fn(logits, targets):
        return lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    return _train_step(lib, model, optimizer, inputs, targets, loss_fn)


def gpt(lib):
    """GPT (vocab 65, d 256, 4 layers, 4 heads, context 128, batch 16), AdamW; attention
    written with matmul + masked softmax."""
    return _gpt_training(lib, sdpa=False)


def gpt_sdpa(lib):
    """The same GPT with F.scaled_dot_product_attention."""
    return _gpt_training(lib, sdpa=True)


def gpt_inference(lib):
    """The GPT forward pass under no_grad."""
    lib.manual_seed(0)
    model = _gpt(lib, sdpa=True).eval()
    inputs, _ = _gpt_batch(lib)

    def step():
        with lib.no_grad():
            model(inputs)
    return step


STEPS, HIDDEN, INPUT = 50, 256, 64


def _sequence_training(lib, model, run):
    x = _data(lib, STEPS, 32, INPUT, seed=0)
    target = _data(lib, STEPS, 32, HIDDEN, seed=1)
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)
    return _train_step(lib, lambda x: run(x), optimizer, x, target,
                       lib.nn.functional.mse_loss)


def lstm(lib):
    """nn.LSTM (input 64, hidden 256, 50 steps, batch 32), MSE, AdamW."""
    lib.manual_seed(0)
    model = lib.nn.LSTM(INPUT, HIDDEN)
    return _sequence_training(lib, model, lambda x: model(x)[0])


def lstm_cell(lib):
    """The same LSTM written by hand from two Linear layers and sigmoid/tanh in a Python
    loop over time: a long graph of small ops."""
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.ModuleDict({"ih": nn.Linear(INPUT, 4 * HIDDEN), "hh": nn.Linear(HIDDEN,
                                                                                4 * HIDDEN)})

    def run(x):
        h = c = lib.zeros(x.shape[1], HIDDEN)
        outputs = []
        for t in range(x.shape[0]):
            i, f, g, o = (model["ih"](x[t]) + model["hh"](h)).chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            h = o.sigmoid() * c.tanh()
            outputs.append(h)
        return lib.stack(outputs)
    return _sequence_training(lib, model, run)


WORKLOADS = {
    "mlp": mlp,
    "cnn": cnn,
    "resnet": resnet,
    "gpt": gpt,
    "gpt_sdpa": gpt_sdpa,
    "lstm": lstm,
    "lstm_cell": lstm_cell,
    "resnet_inference": resnet_inference,
    "gpt_inference": gpt_inference,
    "overhead_forward": overhead_forward,
    "overhead_backward": overhead_backward,
}

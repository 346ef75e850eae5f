"""The backward graph as a user sees it, against torch: `type(t.grad_fn).__name__` and
`grad_fn.next_functions`, walked breadth-first from typical models' losses.

Each graph is written out as `Name(child,child,...)` per node in breadth-first order, `-` for
an input without an edge (None), so both the node names and their edges' order are torch's.

Known differences, left out of the table below: `F.cross_entropy` is one fused node
(NllLossBackward0 straight onto the logits, where torch has LogSoftmaxBackward0 in between),
recurrent layers are one ember node (torch's CPU kernels are oneDNN's), attention without
weights (torch's fused scaled-dot-product kernel in TransformerEncoderLayer) is composed in
ember, and a few shape paths of matmul and pooling (1-D @ 2-D, batched @ batched, adaptive
pooling) are built differently.
"""
import pytest

import ember

torch = pytest.importorskip("torch")


def walk(root):
    """Every node reachable from `root`, breadth-first, as `Name(child,...)`."""
    lines, seen, queue = [], set(), [root]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        children = ",".join("-" if n is None else type(n).__name__ for n, _ in
                            node.next_functions)
        lines.append(f"{type(node).__name__}({children})")
        queue.extend(n for n, _ in node.next_functions)
    return lines


def _cnn(m):
    nn = m.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Dropout(0.25), nn.Flatten(), nn.Linear(36, 10))


def _attention(m):
    mha = m.nn.MultiheadAttention(6, 2, batch_first=True)
    q, k, v = (m.randn(2, 3, 6) for _ in range(3))
    return mha(q, k, v)[0].pow(2).mean()


GRAPHS = {
    "linear": lambda m: m.nn.Linear(3, 2)(m.randn(4, 3)),
    "linear_no_bias": lambda m: m.nn.Linear(3, 2, bias=False)(m.randn(4, 3)),
    "linear_3d": lambda m: m.nn.Linear(3, 2)(m.randn(2, 4, 3, requires_grad=True)),
    "linear_3d_no_bias": lambda m: m.nn.Linear(3, 2, bias=False)(m.randn(2, 4, 3)),
    "linear_1d": lambda m: m.nn.Linear(3, 2)(m.randn(3)),
    "linear_non_contiguous": lambda m: m.nn.Linear(3, 2)(m.randn(4, 2, 3).transpose(0, 1)),
    "mlp_mse": lambda m: m.nn.functional.mse_loss(
        m.nn.Sequential(m.nn.Linear(3, 8), m.nn.Tanh(), m.nn.Linear(8, 1))(m.randn(4, 3)),
        m.zeros(4, 1)),
    "mnist_cnn_nll": lambda m: m.nn.functional.nll_loss(
        m.nn.functional.log_softmax(_cnn(m)(m.randn(2, 1, 8, 8)), dim=1), m.tensor([1, 2])),
    "embedding_layer_norm": lambda m: m.nn.LayerNorm(6)(
        m.nn.Embedding(10, 6)(m.tensor([[1, 2, 3]]))).sum(),
    "gelu_softmax": lambda m: m.nn.functional.softmax(
        m.nn.functional.gelu(m.randn(4, 3, requires_grad=True)), dim=-1).sum(),
    "bce_with_logits": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        m.nn.Linear(3, 1)(m.randn(4, 3)), m.ones(4, 1)),
    "bce_sigmoid": lambda m: m.nn.BCELoss()(m.nn.Linear(3, 1)(m.randn(4, 3)).sigmoid(),
                                            m.ones(4, 1)),
    "arithmetic": lambda m: (lambda x: ((x * 2 + 1) / 3 - x.exp()).pow(2).sum())(
        m.randn(4, 3, requires_grad=True)),
    "views": lambda m: m.randn(4, 3, requires_grad=True).t().reshape(-1).view(2, 6)
                        .unsqueeze(0).squeeze().sum(1).mean(),
    "matmul_3d_2d": lambda m: (m.randn(2, 4, 3, requires_grad=True)
                               @ m.randn(3, 5, requires_grad=True)).sum(),
    "indexing": lambda m: m.randn(4, 3, requires_grad=True)[m.tensor([0, 2])][:, 1:].sum(),
    "cat_stack": lambda m: (lambda x: m.cat([x, x * 2]).sum() + m.stack([x, x]).mean())(
        m.randn(4, 3, requires_grad=True)),
    "multihead_attention": _attention,
    "nll_of_log_softmax": lambda m: m.nn.functional.nll_loss(
        m.randn(4, 3, requires_grad=True).log_softmax(1), m.tensor([0, 1, 2, 0])),
    "scalar_arguments": lambda m: (lambda x: (2 ** x + x.pow(2) + x.clamp(0, 1)
                                              + m.lerp(x, x * 2, 0.5) + (1 - x)).sum())(
        m.randn(4, 3, requires_grad=True)),
    "gather_scatter": lambda m: (lambda x: x.gather(1, m.tensor([[0, 1], [2, 0]])).sum()
                                 + x.masked_fill(x > 0, 0.0).sum())(
        m.randn(2, 3, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_graph_is_torchs(name):
    ember.manual_seed(0)
    torch.manual_seed(0)
    assert walk(GRAPHS[name](ember).grad_fn) == walk(GRAPHS[name](torch).grad_fn)


def test_node_classes_are_named_and_shared_per_name():
    x = ember.ones(2, requires_grad=True)
    a, b = x * 2, x * 3
    assert type(a.grad_fn) is type(b.grad_fn)
    assert type(a.grad_fn).__name__ == a.grad_fn.name() == "MulBackward0"
    assert isinstance(a.grad_fn, ember.autograd.graph.Node)
    assert type((x + 1).grad_fn).__name__ == "AddBackward0"
    assert type(x.sum().grad_fn).__name__ == "SumBackward0"
    assert type(x.mean().grad_fn).__name__ == "MeanBackward0"


def test_the_linear_layer_graph_reaches_its_parameters():
    """AddmmBackward0: (bias, input, TBackward0 of the weight), as torch's tutorials print."""
    layer = ember.nn.Linear(3, 2)
    fn = layer(ember.randn(4, 3)).grad_fn
    bias, _, weight_t = fn.next_functions
    assert bias[0].variable is layer.bias
    assert weight_t[0].next_functions[0][0].variable is layer.weight


def test_a_non_differentiable_input_that_requires_grad_is_refused():
    """An op's inputs outside its grad_inputs get no edge, so they may not require grad (the
    nll_loss op called directly, past F.nll_loss's own check)."""
    nll = ember.ops.REGISTRY["nll_loss"]
    x = ember.randn(4, 3, requires_grad=True)
    weight = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument"):
        nll(x, ember.tensor([0, 1, 2, 0]), weight, ignore_index=-100, reduction="mean")

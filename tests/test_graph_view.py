"""ember.autograd.graph.draw and track_modules: snapshots of the text and DOT drawings, the
layout's geometry, the HTML page as headless Chromium renders it, and module stamping."""
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

import ember
from ember.autograd import _instrument
from ember.autograd.graph import draw, track_modules


def small_graph():
    """(x * w + b).tanh().sum() with x constant and w, b leaves."""
    x = ember.randn(2, 3)
    w = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    return (x * w + b).tanh().sum(), w, b


TEXT = """\
output  [[] float32]
└─ SumBackward0  [a_shape = [2, 3]; dims = (0, 1); keepdim = False]
   └─ TanhBackward0  [out = [2, 3] float32 v0]
      └─ AddBackward0
         ├─ MulBackward0  [a = [2, 3] float32 v0; b = w [3] float32 v0]
         │  └─ w  [AccumulateGrad; [3] float32]
         └─ b  [AccumulateGrad; [3] float32]
"""

DOT = """\
digraph autograd {
  node [shape=box, style="rounded,filled", fontname="monospace", fontsize=11];
  edge [fontname="monospace", fontsize=9];
  n0 [label="output\\n[] float32", fillcolor="#d9f2d9", color="#3a7a3a"];
  n1 [label="SumBackward0\\na_shape = [2, 3]\\ndims = (0, 1)\\nkeepdim = False", \
fillcolor="#fff4cc", color="#8a7a3a"];
  n2 [label="TanhBackward0\\nout = [2, 3] float32 v0", fillcolor="#fff4cc", color="#8a7a3a"];
  n3 [label="AddBackward0", fillcolor="#fff4cc", color="#8a7a3a"];
  n4 [label="MulBackward0\\na = [2, 3] float32 v0\\nb = w [3] float32 v0", \
fillcolor="#fff4cc", color="#8a7a3a"];
  n5 [label="b\\nAccumulateGrad\\n[3] float32", fillcolor="#d6e9ff", color="#3a5f8a"];
  n6 [label="w\\nAccumulateGrad\\n[3] float32", fillcolor="#d6e9ff", color="#3a5f8a"];
  n1 -> n0 [label="[]"];
  n2 -> n1 [label="[2, 3]"];
  n3 -> n2 [label="[2, 3]"];
  n4 -> n3 [label="[2, 3]"];
  n5 -> n3 [label="[3]"];
  n6 -> n4 [label="[3]"];
}
"""


def test_text_snapshot():
    y, w, b = small_graph()
    d = draw(y, params={"w": w, "b": b})
    assert d.text == TEXT
    assert str(d) == TEXT


def test_dot_snapshot():
    y, w, b = small_graph()
    assert draw(y, params={"w": w, "b": b}, format="dot").dot == DOT


def test_shared_nodes_are_shown_once_and_referred_to():
    w = ember.randn(3, requires_grad=True)
    z = (w * w).sum() + w.exp().sum()
    text = draw(z, params={"w": w}).text
    assert text.count("w (2x) #1  [AccumulateGrad") == 1  # w * w uses w twice
    assert text.count("w -> #1 (shown above)") == 1
    assert "[3] (2x)" in draw(z).dot


def test_saved_values_freed_and_modified_in_place():
    y, w, b = small_graph()
    a = w * 2
    c = a * w
    a.add_(1)  # `a` was saved by the second mul at version 0
    text = draw(c).text
    assert "a = [3] float32 v0 (now v1: modified in place)" in text
    y.backward()
    assert "saved values freed (backward ran)" in draw(y).text


def test_hooks_and_retained_grads_are_shown():
    w = ember.randn(3, requires_grad=True)
    h = w * 3

    def double(g):
        return g * 2

    h.register_hook(double)
    h.retain_grad()
    w.register_hook(double)
    out = h.sum()
    d = draw(out, params={"w": w})
    assert "tensor hook: test_hooks_and_retained_grads_are_shown.<locals>.double" in d.text
    assert "retains grad" in d.text
    assert "hook: test_hooks_and_retained_grads_are_shown.<locals>.double" in \
        d.text.split("w  [")[1]
    assert d.dot.count('color="#d9480f"') == 2  # the two hooked boxes get an orange border


def test_multi_output_and_leaf_output():
    w = ember.randn(3, requires_grad=True)
    d = draw([w.sum(), w])
    assert "output 0" in d.text and "output 1" in d.text
    assert d.text.count("AccumulateGrad") == 1  # w is one node, reached twice
    with pytest.raises(TypeError):
        draw([w, 3])
    with pytest.raises(ValueError):
        draw(w, format="png")


def test_save_by_suffix(tmp_path):
    y, w, b = small_graph()
    d = draw(y, params={"w": w, "b": b})
    for suffix, expected in (("dot", d.dot), ("html", d.html), ("txt", d.text)):
        path = tmp_path / f"g.{suffix}"
        d.save(path)
        assert path.read_text(encoding="utf-8") == expected
    d.save(tmp_path / "g.svg")
    root = ET.parse(tmp_path / "g.svg").getroot()  # well-formed XML
    texts = {t.text for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert {"MulBackward0", "AddBackward0", "w", "b", "output"} <= texts
    assert d._repr_html_() == d.svg
    with pytest.raises(ValueError):
        d.save(tmp_path / "g.png")


def mlp_graph():
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 3))
    with track_modules(model):
        loss = model(ember.randn(5, 4)).pow(2).mean()
    return loss, model


def test_layout_geometry():
    """Arrows point down, boxes in a row do not overlap, no crossings in these graphs."""
    loss, model = mlp_graph()
    for d in (draw(loss, params=dict(model.named_parameters())), draw(small_graph()[0])):
        layout = d.layout
        width, height = layout.width, layout.height
        for points, _, src, dst in layout.arrows:
            assert src.y < dst.y
            assert all(a[1] < b[1] for a, b in zip(points, points[1:]))
        by_row = {}
        for b in layout.boxes:
            by_row.setdefault(b.y, []).append(b)
            assert 0 <= b.x - b.w / 2 and b.x + b.w / 2 <= width
            assert 0 <= b.y - b.h / 2 and b.y + b.h / 2 <= height
        for row in by_row.values():
            row.sort(key=lambda b: b.x)
            for left, right in zip(row, row[1:]):
                assert left.x + left.w / 2 < right.x - right.w / 2
        for row in layout.rows:  # rows are kept in left-to-right order
            assert [v.x for v in row] == sorted(v.x for v in row)
        assert layout.crossings == 0


def test_barycenter_removes_crossings():
    """Leaves listed in the order that makes their arrows cross get reordered."""
    from ember.autograd._graph_view import _Box, _crossings, _layout

    boxes = [_Box(0, "output", "out", []), _Box(1, "op", "P", []), _Box(2, "op", "Q", []),
             _Box(3, "leaf", "feeds Q", []), _Box(4, "leaf", "feeds P", [])]
    arrows = [(1, 0, "", 1), (2, 0, "", 1), (3, 2, "", 1), (4, 1, "", 1)]
    layout = _layout(boxes, arrows)
    assert layout.crossings == 0
    assert (boxes[4].x < boxes[3].x) == (boxes[1].x < boxes[2].x)
    for row in layout.rows:  # back to discovery order: the arrows cross
        row.sort(key=lambda v: v.id)
    assert _crossings(layout.rows, layout.down) == 1


def test_long_chain_does_not_recurse():
    x = ember.randn(2, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    text = draw(y.sum()).text
    assert text.count("MulBackward0") == 3000


def test_track_modules_stamps_nodes():
    class Block(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = ember.nn.Linear(3, 3)

        def forward(self, x):
            return self.inner(x * 2).relu()  # the mul sits below the inner module's node

    block = Block()
    x = ember.randn(4, 3, requires_grad=True)
    with track_modules(block):
        y = block(x)
    outside = y.sum()
    relu = y.grad_fn
    linear = relu.next_functions[0][0]
    mul = linear.next_functions[1][0]  # AddmmBackward0's inputs: (bias, input, weight.t())
    assert relu.metadata["module"] == "Block"
    assert linear.metadata["module"] == "Block.inner"
    assert mul.metadata["module"] == "Block"
    assert "module" not in outside.grad_fn.metadata
    assert "module: Block.inner" in draw(outside).text
    # hooks are gone after the block: nothing is stamped any more
    y2 = block(x)
    assert "module" not in y2.grad_fn.metadata
    assert not ember.nn.modules._hooks.any_global_hooks()
    assert _instrument.current_module() is None


def test_track_modules_unnamed_modules_are_named_like_torch():
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.Sequential(ember.nn.Tanh()))
    with track_modules():
        y = model(ember.randn(1, 2, requires_grad=True))
    assert y.grad_fn.metadata["module"] == "Sequential.1.0"
    assert y.grad_fn.next_functions[0][0].metadata["module"] == "Sequential.0"


def test_track_modules_survives_an_exception():
    class Boom(ember.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    with track_modules():
        with pytest.raises(ValueError):
            Boom()(ember.randn(1))
        assert _instrument._tracker.stack == []


# ----------------------------------------------------------------------------------------------
# the HTML page in a real browser


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("EMBER_NO_APT") or not shutil.which("apt-get") or os.geteuid() != 0:
        pytest.skip("headless Chromium is not installed, and installing it with apt-get is not "
                    "permitted here (not root, no apt-get, or EMBER_NO_APT set)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], env=env,
                             capture_output=True, timeout=900)
    if install.returncode != 0:
        update = subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True,
                                timeout=300)
        install = subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], env=env,
                                 capture_output=True, timeout=900)
        if update.returncode != 0 or install.returncode != 0:
            pytest.skip("could not install chromium with apt-get: " +
                        install.stderr.decode(errors="replace")[-300:])
    return shutil.which("chromium")


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def test_html_renders_in_headless_chromium(tmp_path):
    loss, model = mlp_graph()
    d = draw(loss, params=dict(model.named_parameters()))
    page = tmp_path / "graph.html"
    d.save(page)
    browser = _chromium()
    result = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                             "--dump-dom", page.as_uri()], capture_output=True, timeout=120)
    dom = result.stdout.decode()
    assert result.returncode == 0, result.stderr.decode()[-500:]
    assert "<svg" in dom
    for name in ("AddmmBackward0", "ReluBackward0", "PowBackward0", "MeanBackward0",
                 "0.weight", "2.bias", "module: Sequential.2", "output"):
        assert f">{name}</text>" in dom, name

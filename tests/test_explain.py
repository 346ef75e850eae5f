"""ember.autograd.explain: the recorded steps (gradients compared with torch's), rules in words,
and check() -- which must catch a deliberately wrong rule."""
import numpy as np
import pytest

import ember
from ember.autograd import _instrument, engine
from ember.autograd.explain import check_rule, rule_text
from ember.ops import _dispatch
from ember.ops._op import REGISTRY, defop

torch = pytest.importorskip("torch")


def inputs():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((2, 3)).astype(np.float32),
            rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32))


def test_steps_match_torch_gradients():
    x, w, b = inputs()
    ex, ew, eb = ember.tensor(x), ember.tensor(w, requires_grad=True), \
        ember.tensor(b, requires_grad=True)
    with ember.autograd.explain(params={"w": ew, "b": eb}) as trace:
        loss = (ex * ew + eb).tanh().sum()
        loss.backward()
    # the same graph in torch, keeping every intermediate gradient
    tx, tw, tb = torch.tensor(x), torch.tensor(w, requires_grad=True), \
        torch.tensor(b, requires_grad=True)
    prod = tx * tw
    pre = prod + tb
    act = pre.tanh()
    for t in (prod, pre, act):
        t.retain_grad()
    act.sum().backward()
    names = [s.name for s in trace.steps]
    assert names == ["SumBackward0", "TanhBackward0", "AddBackward0", "AccumulateGrad (b)",
                     "MulBackward0", "AccumulateGrad (w)"]
    steps = {s.name: s for s in trace.steps}
    expected_in = {"TanhBackward0": act.grad, "AddBackward0": pre.grad, "MulBackward0": prod.grad,
                   "AccumulateGrad (b)": tb.grad, "AccumulateGrad (w)": tw.grad}
    for name, grad in expected_in.items():
        shape, norm = steps[name].grads_in[0]
        assert shape == tuple(grad.shape)
        assert norm == pytest.approx(grad.norm().item(), rel=1e-5)
    # what Add sends to b is summed to b's shape (3,), as the engine does
    (shape_a, norm_a), (shape_b, norm_b) = steps["AddBackward0"].grads_out
    assert (shape_a, shape_b) == ((2, 3), (3,))
    assert norm_b == pytest.approx(tb.grad.norm().item(), rel=1e-5)
    assert steps["MulBackward0"].grads_out[0] is None  # x wants no gradient: none is computed
    assert steps["MulBackward0"].rule == "MulBackward0: grad_a = g * conj(b), grad_b = g * conj(a)"


def test_table_lists_every_step():
    x, w, b = inputs()
    ew = ember.tensor(w, requires_grad=True)
    with ember.autograd.explain() as trace:
        (ember.tensor(x) * ew).sum().backward()
    table = trace.table()
    lines = table.splitlines()
    assert lines[0].split() == ["#", "node", "grad", "in", "rule", "grad", "out"]
    assert len(lines) == 2 + len(trace.steps) == 5
    assert "MulBackward0: grad_a = g * conj(b), grad_b = g * conj(a)" in table
    assert "[2, 3] |" in table
    assert str(trace) == table


def test_rules_in_words():
    assert rule_text(REGISTRY["mul"]) == "grad_a = g * conj(b), grad_b = g * conj(a)"
    assert rule_text(REGISTRY["div"]) == "grad_a = g / conj(b), grad_b = -g * conj(a / (b * b))"
    # a def rule: locals are inlined, `x if needs_input_grad[i] else None` becomes x
    assert rule_text(REGISTRY["mm"]) == ("grad_a = mm(g, b.mH), grad_b = mm(g.mH, a).mH if "
                                         "transposed(b) else mm(a.mH, g)")
    assert rule_text(REGISTRY["matmul"]).startswith("grad_a = g @ b.mH, grad_b = a.mH @ g")


def test_check_passes_on_correct_rules():
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 3))
    target = ember.tensor([0, 2, 1])
    with ember.autograd.explain() as trace:  # forward inside: every op can be re-run
        loss = ember.nn.functional.cross_entropy(model(ember.randn(3, 4)) * 2.0, target)
        loss.backward()
    report = trace.check()
    assert report.ok, str(report)
    checked = " ".join(report)
    for name in ("NllLossBackward0", "MulBackward0", "AddmmBackward0", "TanhBackward0"):
        assert name in checked
    assert all(err < 1e-6 for err in report.values())
    assert all("AccumulateGrad" in label for label in report.unchecked)


def test_check_reports_nodes_it_cannot_check():
    w = ember.randn(3, requires_grad=True)
    y = (w.tanh() * w).sum()  # forward outside explain(): only what the rules saved is known
    with ember.autograd.explain() as trace:
        y.backward()
    report = trace.check()
    assert list(report) == ["2 MulBackward0"]  # mul keeps both inputs
    assert "does not keep a" in report.unchecked["3 TanhBackward0"]
    assert "explain()" in report.unchecked["1 SumBackward0"]
    assert "not checked" in str(report)


def test_check_flags_a_wrong_rule():
    wrong = defop("explain_test_wrong_mul", "arith", lambda xp, a, b: a * b,
                  lambda g, a, b: (g * b * 1.5, g * a))  # grad_a is off by a factor 1.5
    try:
        a = ember.randn(2, 3, requires_grad=True)
        b = ember.randn(2, 3, requires_grad=True)
        with ember.autograd.explain() as trace:
            wrong(a, b).sum().backward()
        report = trace.check()
        assert report.failed == ["2 ExplainTestWrongMulBackward0"]
        assert report["2 ExplainTestWrongMulBackward0"] > 0.1
        assert "WRONG" in str(report)
        assert trace.steps[1].rule.endswith("grad_a = g * b * 1.5, grad_b = g * a")
    finally:
        del REGISTRY["explain_test_wrong_mul"]


def test_check_rule_directly_and_inplace_inputs():
    a = ember.randn(4, dtype=ember.float64)
    b = ember.randn(4, dtype=ember.float64)
    assert check_rule(REGISTRY["mul"], (a, b), {}) < 1e-8
    w = ember.randn(3, requires_grad=True)
    h = w * 1.0
    with ember.autograd.explain() as trace:
        y = h + w  # add saves nothing, so autograd does not mind h changing later
        h.add_(1)
        y.sum().backward()
    report = trace.check()
    assert report.unchecked["2 AddBackward0"] == "an input was modified in place after the op ran"


def test_observers_are_removed():
    with ember.autograd.explain():
        assert _dispatch._observer is not None and engine._observer is not None
    assert _dispatch._observer is None and engine._observer is None
    assert _instrument._listeners == []


def test_inplace_ops_are_checked_from_what_they_saved():
    x = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    with ember.autograd.explain() as trace:
        y = x * 2
        y.mul_(3)   # a Python number: only 3 is kept, y's old values are gone
        y.mul_(b)   # a tensor: the rule needs y's old values, so dispatch kept a copy
        y.sum().backward()
    report = trace.check()
    assert report.ok and list(report) == ["1 SumBackward0", "2 MulBackward0", "5 MulBackward0"]
    assert report.unchecked["4 MulBackward0"] == \
        "an in-place op whose rule does not keep the input it overwrote"

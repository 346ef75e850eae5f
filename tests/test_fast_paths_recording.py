"""Recording's fast paths (issue 22) against their plain forms.

- leaf edges recorded as the leaf tensor and turned into its AccumulateGrad node on the first
  read of `next_functions` (the engine's walk), against nodes made up front: the same node per
  leaf, the same gradients, hooks and errors as torch;
- `compile_saver` (an op's save list written out as one function) against `_save`, which
  walks the list, and `compile_recorder` (an op's whole record written out as one function)
  against `_generic_recorder`'s, which loops over the inputs, for every op in the registry;
- a tensor without a version counter saved at version 0, against one with a counter.
"""
import gc
import re
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import graph
from ember.ops._op import REGISTRY

torch = pytest.importorskip("torch")


def _leaves():
    return ember.randn(4, requires_grad=True), ember.randn(4, requires_grad=True)


def test_a_graph_dropped_unused_makes_no_accumulate_grad_node():
    a, b = _leaves()
    c = (a * b + a).sum()
    assert a._grad_acc is None and b._grad_acc is None
    del c
    gc.collect()
    assert a._grad_acc is None


def test_next_functions_gives_each_leaf_one_accumulate_grad_node():
    a, b = _leaves()
    y = a * b
    z = y + a
    mul_edges = y.grad_fn.next_functions
    assert [type(n).__name__ for n, _ in mul_edges] == ["AccumulateGrad", "AccumulateGrad"]
    assert mul_edges[0][0].variable is a and mul_edges[1][0].variable is b
    add_edges = z.grad_fn.next_functions
    assert add_edges[0][0] is y.grad_fn
    assert add_edges[1][0] is mul_edges[0][0]  # one node for the leaf, as torch
    w = a * 3  # recorded while a's node is alive: the edge is the node itself
    assert w.grad_fn._next[0][0] is mul_edges[0][0]


def test_a_leaf_recorded_lazily_keeps_the_graph_alive_and_its_grad():
    def make():
        w = ember.randn(3, requires_grad=True)
        return (w * 2).sum(), weakref.ref(w)

    loss, ref = make()
    gc.collect()
    assert ref() is not None  # the graph holds its leaf, as torch's does
    loss.backward()
    np.testing.assert_array_equal(ref().grad.numpy(), np.full(3, 2.0, np.float32))
    del loss
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("read_first", [False, True])
def test_gradients_and_hooks_through_lazy_leaves_match_torch(read_first):
    values = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        a, b = (lib.tensor(v, requires_grad=True) for v in values)
        seen = []
        a.register_hook(lambda g: seen.append(g.numpy().copy()))
        c = (a * b + a).sum() + (a * a).mean()
        if read_first:  # a tool walking part of the graph before backward
            node = c.grad_fn.next_functions[0][0].next_functions[0][0]
            node.next_functions[1][0].register_prehook(lambda gs: seen.append("pre"))
        c.backward()
        results.append((a.grad.numpy(), b.grad.numpy(), seen))
    (ea, eb, eseen), (ta, tb, tseen) = results
    np.testing.assert_allclose(ea, ta, rtol=1e-6)
    np.testing.assert_allclose(eb, tb, rtol=1e-6)
    assert len(eseen) == len(tseen)  # the leaf's hook ran once, on the whole gradient
    np.testing.assert_allclose(eseen[0], tseen[0], rtol=1e-6)


def test_autograd_grad_and_backward_inputs_reach_lazy_leaves():
    a, b = _leaves()
    c = (a * b).sum()
    ga, = ember.autograd.grad(c, [a], retain_graph=True)
    np.testing.assert_array_equal(ga.numpy(), b.detach().numpy())
    c.backward(inputs=[b])
    assert a.grad is None
    np.testing.assert_array_equal(b.grad.numpy(), a.detach().numpy())


def test_leaf_modified_in_place_still_raises_as_torch():
    a = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.mul_(2)


# ----------------------------------------------------------------------------------------------
# compiled savers


def _same(x, y):
    """Equal saved values: the same tensors (by identity), versions, shapes, dtypes, attrs."""
    if isinstance(x, weakref.ref):
        return isinstance(y, weakref.ref) and x() is y()
    if isinstance(x, ember.Tensor):
        return x is y
    if isinstance(x, tuple):
        return isinstance(y, tuple) and len(x) == len(y) and all(map(_same, x, y))
    if isinstance(x, np.ndarray):
        return x is y
    return type(x) is type(y) and x == y


def _saver_cases(op):
    """Operands for `op`'s inputs: tensors that want a gradient or not, fresh (no counter) or
    written in place, and a Python number where one may stand."""
    n = len(op.input_names)
    fresh = [ember.randn(3) * 1 for _ in range(n)]
    wanting = [ember.randn(3, requires_grad=True) for _ in range(n)]
    written = [ember.randn(3).add_(1) for _ in range(n)]
    cases = [tuple(fresh), tuple(wanting), tuple(written)]
    if n == 2:
        cases += [(wanting[0], fresh[1]), (fresh[0], 2.5), (wanting[0], 3)]
    attrs = {name: ("attr", name) for name in op.attr_names[::2]}  # some given, some default
    return cases, attrs


@pytest.mark.parametrize("name", sorted(n for n, op in REGISTRY.items() if op.saves))
def test_compiled_saver_saves_what_save_saves(name):
    op = REGISTRY[name]
    cases, attrs = _saver_cases(op)
    saver = graph.compile_saver(op)
    outputs = (ember.randn(3), ember.randn(3))
    for args in cases:
        if op.variadic:
            args = args[:1] * 3
        want = graph._save(op, args, attrs, outputs)
        got = saver(args, attrs, outputs)
        assert len(got) == len(want)
        for kind_detail, g, w in zip(op.saves, got, want):
            assert _same(g, w), (name, kind_detail, g, w)


def _recorder_cases(op):
    """`_saver_cases`, and inputs that want a gradient through a node (an op's result, a
    view of one) or through a leaf whose AccumulateGrad node is alive."""
    cases, attrs = _saver_cases(op)
    n = len(op.input_names)
    made = tuple(ember.randn(3, requires_grad=True) * 2 for _ in range(n))
    views = tuple((ember.randn(4, requires_grad=True) * 2)[1:] for _ in range(n))
    leaves = tuple(ember.randn(3, requires_grad=True) for _ in range(n))
    nodes = [graph.accumulator(x) for x in leaves]  # alive while the case runs
    return cases + [made, views, leaves], attrs, nodes


@pytest.mark.parametrize("name", sorted(n for n, op in REGISTRY.items() if op.rule is not None))
def test_compiled_recorder_records_what_the_generic_record_does(name):
    op = REGISTRY[name]
    cases, attrs, _nodes = _recorder_cases(op)
    recorder = graph.compile_recorder(op)
    generic = graph._generic_recorder(op)
    for args in cases:
        if op.variadic:
            args = args[:1] * 3
        out = ember.randn(3)
        try:
            want = generic(args, attrs, out)
        except RuntimeError as e:  # an input that must not want a gradient
            with pytest.raises(RuntimeError, match=re.escape(str(e))):
                recorder(args, attrs, out)
            continue
        got = recorder(args, attrs, out)
        assert type(got) is type(want) and got.op is op
        assert _same(got._next, want._next) and got._meta == want._meta
        assert got._lazy_leaves == want._lazy_leaves and got._num_outputs == 1
        assert len(got._saved) == len(want._saved)
        for kind_detail, g, w in zip(op.saves, got._saved, want._saved):
            assert _same(g, w), (name, kind_detail, g, w)
        assert out._grad_fn is got and out._requires_grad
        assert got._seq > want._seq


def test_a_tensor_without_a_counter_is_saved_at_version_zero():
    a = ember.randn(3, requires_grad=True)
    t = a * 2  # an op result: no counter yet
    assert t._counter is None
    c = t * a  # saves t at version 0 without making a counter
    assert t._counter is None
    t.add_(1)  # the counter made now starts at 0, and the write bumps it
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        c.sum().backward()


def test_saved_tensor_hooks_still_pack_every_saved_tensor():
    packed = []
    a, b = _leaves()
    with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t,
                                                  lambda t: t):
        c = (a * b).sum()
    assert len(packed) == 2
    c.backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.detach().numpy())


def test_a_leaf_that_stops_requiring_grad_gets_no_gradient_as_in_torch():
    grads = []
    for lib in (ember, torch):
        z = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        s = (z * w).sum()
        z.requires_grad_(False)
        s.backward()
        grads.append((z.grad, w.grad.numpy().copy()))
    (ez, ew), (tz, tw) = grads
    assert ez is None and tz is None
    np.testing.assert_array_equal(ew, tw)

"""The autograd engine against torch: backward's arguments, errors, gradient accumulation,
hooks, leaves and detaching, graph structure, autograd.grad options, grad modes, higher-order
gradients, long graphs, memory release, and in-place ops (version counter, views)."""
import gc
import threading
import time
import weakref

import numpy as np
import pytest

import ember

from .oracle import as_numpy, assert_close, check, check_raises

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((3,))
G = RNG.standard_normal((2, 3))


def leaf(m, a=X):
    return m.tensor(a, requires_grad=True)


def on_both(fn):
    """fn(m) for ember and torch; the results compared (Tensors by value, others by ==)."""
    e, t = fn(ember), fn(torch)
    assert_close(e, t, rtol=1e-6, atol=1e-9)
    return e


# ----------------------------------------------------------------------------------------------
# backward() arguments


def test_backward_with_gradient_argument():
    def run(m):
        x = leaf(m)
        (x * x).backward(gradient=m.tensor(G))
        return x.grad
    on_both(run)


def test_retain_graph_allows_a_second_backward_and_grads_accumulate():
    def run(m):
        x = leaf(m)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        first = x.grad.clone()
        y.backward()
        return first, x.grad
    first, total = on_both(run)
    np.testing.assert_allclose(as_numpy(total), 2 * as_numpy(first))


def test_create_graph_makes_grad_differentiable():
    def run(m):
        x = leaf(m)
        (x * x * x).sum().backward(create_graph=True)
        assert x.grad.requires_grad
        (g2,) = m.autograd.grad(x.grad.sum(), x)
        return x.grad.detach(), g2
    on_both(run)


def test_backward_inputs_restricts_accumulation():
    def run(m):
        x, w = leaf(m), leaf(m, W)
        h = x * w
        h.retain_grad()
        (h.tanh() * w).sum().backward(inputs=[x, h])
        return x.grad, w.grad, h.grad
    on_both(run)


def test_accumulation_over_two_graphs():
    def run(m):
        x = leaf(m)
        (x * 2).sum().backward()
        (x * x).sum().backward()
        return x.grad
    on_both(run)


# ----------------------------------------------------------------------------------------------
# errors


def test_second_backward_through_a_freed_graph():
    def run(m):
        y = (leaf(m).exp() * 2).sum()
        y.backward()
        y.backward()
    check_raises(run, match="Trying to backward through the graph a second time")


def test_implicit_gradient_only_for_scalars():
    check_raises(lambda m: (leaf(m) * 2).backward(),
                 match="grad can be implicitly created only for scalar outputs")


def test_gradient_shape_mismatch():
    error = check_raises(lambda m: (leaf(m) * 2).backward(m.ones(3)),
                         match="Mismatch in shape: grad_output[0] has a shape of")
    assert "and output[0] has a shape of" in str(error)


def test_requires_grad_on_integer_tensors():
    check_raises(lambda m: m.ones(2, dtype=m.int64).requires_grad_(),
                 match="only Tensors of floating point")
    check_raises(lambda m: m.tensor([1, 2], requires_grad=True))


def test_backward_on_a_tensor_that_does_not_require_grad():
    check_raises(lambda m: m.ones(2).sum().backward(),
                 match="element 0 of tensors does not require grad and does not have a grad_fn")


def test_grad_of_unused_input():
    check_raises(lambda m: m.autograd.grad((leaf(m) * 2).sum(), [leaf(m), leaf(m, W)]),
                 match="appears to not have been used in the graph")


# ----------------------------------------------------------------------------------------------
# retain_grad, hooks


def test_retain_grad_on_non_leaf():
    def run(m):
        x = leaf(m)
        h = x * 3
        h.retain_grad()
        k = h.exp()
        k.sum().backward()
        return h.retains_grad, h.grad, k.grad is None, x.grad
    on_both(run)


def test_register_hook_replaces_the_gradient_on_leaf_and_non_leaf():
    def run(m):
        x = leaf(m)
        seen = []
        x.register_hook(lambda g: seen.append(g.clone()))
        h = x * 2
        h.register_hook(lambda g: g * 10)
        (h * h).sum().backward()
        return x.grad, seen[0]
    on_both(run)


def test_hook_handle_remove():
    def run(m):
        x = leaf(m)
        handle = x.register_hook(lambda g: g * 0)
        h = x * 2
        h_handle = h.register_hook(lambda g: g + 1)
        handle.remove()
        h_handle.remove()
        h.sum().backward()
        return x.grad
    on_both(run)


def test_hook_on_tensor_without_grad_raises():
    check_raises(lambda m: m.ones(2).register_hook(lambda g: g),
                 match="cannot register a hook on a tensor that doesn't require gradient")


def test_post_accumulate_grad_hook():
    def run(m):
        x = leaf(m)
        seen = []
        x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        return seen
    seen = on_both(run)
    assert len(seen) == 2
    check_raises(lambda m: (leaf(m) * 2).register_post_accumulate_grad_hook(lambda t: None),
                 match="post accumulate grad hooks cannot be registered on non-leaf tensors")


# ----------------------------------------------------------------------------------------------
# leaves, requires_grad_, detach


def test_leaves_and_requires_grad_():
    def run(m):
        x = m.tensor(X)
        before = (x.is_leaf, x.requires_grad)
        x.requires_grad_()
        y = x * 2
        return before, x.is_leaf, x.requires_grad, y.is_leaf, y.requires_grad, \
            (y.detach() * 2).requires_grad
    on_both(run)
    check_raises(lambda m: (leaf(m) * 2).requires_grad_(False),
                 match="you can only change requires_grad flags of leaf variables")


def test_detach_shares_memory_and_version_and_cuts_history():
    def run(m):
        x = leaf(m)
        y = x * 2
        d = y.detach()
        d.add_(1)  # visible in y, and bumps y's version
        return d.requires_grad, d.grad_fn is None, y._version, as_numpy(y).tolist()
    on_both(run)


def test_detach_in_place():
    def run(m):
        y = leaf(m) * 2
        y.detach_()
        return y.requires_grad, y.grad_fn is None, y.is_leaf
    on_both(run)
    check_raises(lambda m: (leaf(m) * 2)[0].detach_(), match="Can't detach views in-place")


# ----------------------------------------------------------------------------------------------
# graph structure


def structure(fn, depth=4):
    """(name, [children]) down to `depth` levels, for comparing graphs of the two libraries."""
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")  # torch's C++ nodes carry a namespace
    if depth == 0:
        return name
    return (name, [(structure(child, depth - 1), nr) for child, nr in fn.next_functions])


@pytest.mark.parametrize("graph", [
    lambda m, x, w: (x * w).sum(),
    lambda m, x, w: (x.exp() + w).tanh().mean(),
    lambda m, x, w: (x.transpose(0, 1) @ x).sigmoid() / 2,
    lambda m, x, w: x.reshape(3, 2).transpose(0, 1) - w.unsqueeze(0).expand(2, 3),
    lambda m, x, w: m.stack([x[0], x[1] * w]).relu(),
    lambda m, x, w: (x * 2).exp().log(),
])
def test_grad_fn_names_and_next_functions_match_torch(graph):
    e = graph(ember, leaf(ember), leaf(ember, W))
    t = graph(torch, leaf(torch), leaf(torch, W))
    assert structure(e.grad_fn) == structure(t.grad_fn)


def test_multi_output_nodes_and_output_nr():
    def run(m):
        a, b = leaf(m).unbind(0)
        return a.grad_fn.name(), a.output_nr, b.output_nr, a.grad_fn is b.grad_fn
    on_both(run)


# ----------------------------------------------------------------------------------------------
# autograd.grad


def test_grad_allow_unused_and_materialize_grads():
    def run(m):
        x, w = leaf(m), leaf(m, W)
        y = (x * 2).sum()
        unused = m.autograd.grad(y, [x, w], retain_graph=True, allow_unused=True)
        zeros = m.autograd.grad(y, [x, w], materialize_grads=True)
        return unused[0], unused[1] is None, zeros
    on_both(run)
    check_raises(lambda m: m.autograd.grad((leaf(m) * 2).sum(), [leaf(m)],
                                           allow_unused=False, materialize_grads=True),
                 match="Expected allow_unused to be True or not passed")


def test_grad_does_not_touch_dot_grad():
    def run(m):
        x = leaf(m)
        (g,) = m.autograd.grad((x * x).sum(), x, grad_outputs=m.tensor(1.0))
        return g, x.grad is None
    on_both(run)


def test_grad_of_several_outputs_with_grad_outputs():
    def run(m):
        x = leaf(m)
        a, b = x.exp(), x * 3
        return m.autograd.grad([a, b], [x], [m.tensor(G), m.ones_like(b)])
    on_both(run)


# ----------------------------------------------------------------------------------------------
# grad modes


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "set_grad_enabled"])
def test_grad_mode_context_managers(mode):
    def run(m):
        x = leaf(m)
        manager = {"no_grad": m.no_grad, "inference_mode": m.inference_mode,
                   "set_grad_enabled": lambda: m.set_grad_enabled(False)}[mode]
        with manager():
            y = x * 2
            inside = m.is_grad_enabled()
            with manager():
                nested = m.is_grad_enabled()
            after_nested = m.is_grad_enabled()
        return y.requires_grad, inside, nested, after_nested, m.is_grad_enabled()
    on_both(run)


@pytest.mark.parametrize("mode", ["no_grad", "set_grad_enabled"])
def test_enable_grad_inside_a_disabled_region(mode):
    def run(m):
        x = leaf(m)
        manager = m.no_grad if mode == "no_grad" else lambda: m.set_grad_enabled(False)
        with manager():
            with m.enable_grad():
                z = x * 2
                on = m.is_grad_enabled()
            off = m.is_grad_enabled()
        return z.requires_grad, on, off
    on_both(run)


def test_enable_grad_inside_inference_mode():
    def run(m):
        x = leaf(m)
        with m.inference_mode():
            with m.enable_grad():
                z = x * 2
        return z.requires_grad
    on_both(run)


def test_grad_mode_decorators():
    def run(m):
        x = leaf(m)

        @m.no_grad()
        def off():
            return x * 2

        @m.no_grad
        def off_bare():
            return x * 2

        @m.enable_grad()
        def on():
            return x * 2

        @m.inference_mode()
        def inference():
            return x * 2, m.is_inference_mode_enabled()

        @m.set_grad_enabled(False)
        def disabled():
            return x * 2

        after_decorating = m.is_grad_enabled()
        with m.no_grad():
            turned_on = on().requires_grad
        y, inf = inference()
        return (off().requires_grad, off_bare().requires_grad, turned_on, y.requires_grad, inf,
                disabled().requires_grad, after_decorating, m.is_grad_enabled())
    on_both(run)


def test_set_grad_enabled_as_a_function():
    def run(m):
        m.set_grad_enabled(False)
        off = m.is_grad_enabled()
        m.set_grad_enabled(True)
        return off, m.is_grad_enabled()
    on_both(run)


def test_grad_mode_is_thread_local():
    seen = []
    with ember.no_grad():
        thread = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        thread.start()
        thread.join()
        assert not ember.is_grad_enabled()
    assert seen == [True]


# ----------------------------------------------------------------------------------------------
# higher-order gradients


@pytest.mark.parametrize("f", [
    lambda m, x: (x * x * x * x - x * 2).sum(),
    lambda m, x: (x * 1.5).tanh().tanh().sum(),
    lambda m, x: (x.sigmoid() * x.exp()).sum(),
])
def test_third_derivative_matches_torch(f):
    def run(m):
        x = leaf(m)
        (g1,) = m.autograd.grad(f(m, x), x, create_graph=True)
        (g2,) = m.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = m.autograd.grad(g2.sum(), x)
        return g1.detach(), g2.detach(), g3
    on_both(run)


# ----------------------------------------------------------------------------------------------
# long graphs, memory


def test_backward_through_a_100000_op_chain():
    """No recursion limit in the engine. The cyclic GC is paused while the chain is built: its
    full passes over the whole test session's heap, not ember, would dominate the time."""
    x = ember.tensor(1.0, requires_grad=True)
    gc.disable()
    try:
        y = x
        for _ in range(100_000):
            y = y + 1.0  # add's rule does no math: this times the engine, not the ops
        start = time.perf_counter()
        y.backward()
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    assert elapsed < 5
    assert x.grad.item() == 1.0 and y.item() == 100_001.0


def test_saved_tensors_are_freed_after_backward():
    x = ember.ones(100, requires_grad=True)
    a = x.exp()
    y = (a * a).sum()  # MulBackward0 saves a, ExpBackward0 saves its output a
    alive = weakref.ref(a._data)
    del a
    assert alive() is not None  # still saved by the graph
    y.backward()
    assert alive() is None
    assert y.grad_fn is not None  # the nodes remain; only their saved values went


# ----------------------------------------------------------------------------------------------
# in-place ops


def test_inplace_on_leaf_requiring_grad_raises():
    check_raises(lambda m: leaf(m).add_(1),
                 match="a leaf Variable that requires grad is being used in an in-place "
                       "operation.")
    check_raises(lambda m: leaf(m)[0].mul_(2),
                 match="a view of a leaf Variable that requires grad is being used in an "
                       "in-place operation.")


def test_inplace_on_leaf_under_no_grad_is_allowed():
    def run(m):
        x = leaf(m)
        with m.no_grad():
            x.mul_(2)
        return x.detach(), x._version, x.requires_grad
    on_both(run)


@pytest.mark.parametrize("chain", [
    lambda y, w: y.mul_(w),
    lambda y, w: y.add_(w, alpha=2),
    lambda y, w: y.exp_(),
    lambda y, w: y.relu_(),
    lambda y, w: y.mul_(3).sub_(w).tanh_(),
    lambda y, w: y.div_(w.exp()).sigmoid_(),
])
def test_inplace_results_and_gradients_match_torch(chain):
    def run(m, x, w):
        y = x * 2
        out = chain(y, w)
        assert out is y
        return y * y
    check(run, [X, W])


def test_modifying_a_saved_tensor_raises_like_torch():
    def run(m):
        y = leaf(m) * 2
        z = y * y
        y.add_(1)
        z.sum().backward()
    error = check_raises(run, match="one of the variables needed for gradient computation has "
                                    "been modified by an inplace operation")
    assert "which is output 0 of Add, is at version 1; expected version 0 instead" in str(error)

    def saved_output(m):
        y = leaf(m).exp()
        z = y * 2
        y.mul_(2)  # exp saved its output y
        z.sum().backward()
    error = check_raises(saved_output, match="modified by an inplace operation")
    assert "which is output 0 of Mul, is at version 1; expected version 0" in str(error)


def test_inplace_on_a_tensor_not_saved_is_fine():
    def run(m, x, w):
        y = x * 2
        z = y + w  # add saves nothing
        y.mul_(3)
        return z * y
    check(run, [X, W])


@pytest.mark.parametrize("edit", [
    lambda a: a[0].mul_(2),
    lambda a: a[:, 1].exp_(),
    lambda a: a[1:].add_(a[0].detach()),
    lambda a: a.t()[2].zero_(),
    lambda a: a[0].copy_(a[1].exp()),
])
def test_inplace_through_views_matches_torch(edit):
    def run(m, x):
        a = x * 1
        edit(a)
        return a.tanh()
    check(run, [X])


def test_views_see_in_place_changes_of_their_base():
    def run(m, x):
        a = x * 1
        v = a[1]
        a.mul_(2)  # v is re-derived from a's new history
        return v.exp(), a
    check(run, [X])
    e = ember.tensor(X, requires_grad=True) * 1
    t = torch.tensor(X, requires_grad=True) * 1
    e[0].mul_(2)
    t[0].mul_(2)
    assert e.grad_fn.name() == t.grad_fn.name().replace("torch::autograd::", "") == "CopySlices"
    e_view, t_view = e[1], t[1]
    e.exp_()
    t.exp_()
    assert e_view.grad_fn.name() == t_view.grad_fn.name() == "AsStridedBackward0"


def test_tuple_ops_with_one_output_get_tuple_gradients():
    """unbind/split of a size-1 dim return 1-tuples; their rules must still see tuples."""
    def run(m):
        x = leaf(m).reshape(1, -1)
        (x.unbind(0)[0] * 2).sum().backward(inputs=[x])
        return x.grad
    on_both(run)


def test_leaf_gradients_never_alias_each_other_or_the_callers_tensors():
    """A leaf may keep the engine's own gradient array without a copy, but never one that a
    second leaf or the caller can also see."""
    import numpy as np

    import ember

    a = ember.randn(3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    (a + b).sum().backward()          # add's rule hands the same gradient to both inputs
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())

    x = ember.randn(3, requires_grad=True)
    seed = ember.ones(3)
    (x + 0).backward(seed)            # the caller's gradient passes straight through
    assert not np.shares_memory(x.grad.numpy(), seed.numpy())
    x.grad.zero_()
    assert seed.sum().item() == 3

    w = ember.randn(4, 3, requires_grad=True)
    y = ember.randn(5, 3) @ w.t()
    grads = []
    w.register_hook(lambda g: grads.append(g))  # the hook sees the gradient that is stored
    y.sum().backward()
    assert not np.shares_memory(w.grad.numpy(), grads[0].numpy())

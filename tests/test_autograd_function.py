"""ember.autograd.Function against torch.autograd.Function: the same class body is built for
both libraries (`make(m)` takes the library module), then values, gradients, node names and
errors are compared. Also gradcheck/gradgradcheck, which are easiest to exercise on Functions.
"""
import weakref

import numpy as np
import pytest

import ember
from ember.autograd.gradcheck import GradcheckError

from .oracle import as_numpy, check, check_raises

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((2, 3))


def leaf(m, a=X, requires_grad=True):
    t = m.tensor(a)
    return t.requires_grad_() if requires_grad else t


def both(make, *args):
    """The Function class built for ember and for torch."""
    return make(ember, *args), make(torch, *args)


# ----------------------------------------------------------------------------------------------
# Function classes, written once for both libraries


def make_exp(m):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y
    return Exp


def make_cube(m):
    """backward uses differentiable ops on a saved input: double backward works."""
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g
    return Cube


def make_scale(m):
    """non-tensor args and kwargs; state on ctx; None for an input that wants no gradient."""
    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k, shift=0.0):
            ctx.k = k
            ctx.seen = ctx.needs_input_grad
            ctx.save_for_backward(x, w)
            return x * w * k + shift

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            gx = g * w * ctx.k if ctx.needs_input_grad[0] else None
            gw = g * x * ctx.k if ctx.needs_input_grad[1] else None
            return gx, gw, None, None
    return Scale


def make_two_outputs(m, materialize, log):
    """Records the output gradients backward receives."""
    class Split(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x)
            return x * 2, x.exp()

        @staticmethod
        def backward(ctx, g1, g2):
            log.append([None if g is None else as_numpy(g).copy() for g in (g1, g2)])
            (x,) = ctx.saved_tensors
            grads = [g1 * 2 if g1 is not None else None, g2 * x.exp() if g2 is not None else None]
            grads = [g for g in grads if g is not None]
            return grads[0] if len(grads) == 1 else grads[0] + grads[1]
    return Split


def make_argmax(m, log):
    class WithIndex(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            mask = x > 0
            ctx.mark_non_differentiable(mask)
            return x * 3, mask, "label", 7

        @staticmethod
        def backward(ctx, g, g_mask, g_label, g_int):
            log.append((g_mask is None, None if g_mask is None else as_numpy(g_mask).tolist(),
                        g_label, g_int))
            return g * 3
    return WithIndex


def make_new_style(m):
    class Mul(m.autograd.Function):
        @staticmethod
        def forward(x, w, scale=2.0):
            return x * w * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, scale = inputs
            ctx.scale = scale
            ctx.save_for_backward(x, w)

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * ctx.scale, g * x * ctx.scale, None
    return Mul


def make_inc(m):
    class Inc(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Inc


def make_identity(m):
    class Identity(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5
    return Identity


def make_grads(m, result):
    """backward returns `result(g)`: for the error cases."""
    class Bad(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return result(g)
    return Bad


# ----------------------------------------------------------------------------------------------
# forward, backward, node


def test_forward_backward_and_node_name():
    check(lambda m, x: make_exp(m).apply(x), [X])
    e_exp, t_exp = both(make_exp)
    ey, ty = e_exp.apply(leaf(ember)), t_exp.apply(leaf(torch))
    assert ey.grad_fn.name() == ty.grad_fn.name() == "ExpBackward"
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__
    names = [(type(n).__name__, k) for n, k in ey.grad_fn.next_functions]
    assert names == [(type(n).__name__, k) for n, k in ty.grad_fn.next_functions]
    assert ey.grad_fn.needs_input_grad == ty.grad_fn.needs_input_grad == (True,)


def test_non_tensor_args_kwargs_and_ctx_state():
    check(lambda m, x, w: make_scale(m).apply(x, w, 1.5, shift=0.25), [X, W])
    e_scale, t_scale = both(make_scale)
    ey = e_scale.apply(leaf(ember), leaf(ember, W, False), 2.0)
    ty = t_scale.apply(leaf(torch), leaf(torch, W, False), 2.0)
    assert ey.grad_fn.seen == ty.grad_fn.seen == (True, False, False)
    assert ey.grad_fn.k == 2.0
    names = [(type(n).__name__ if n else None) for n, _ in ey.grad_fn.next_functions]
    assert names == [(type(n).__name__ if n else None) for n, _ in ty.grad_fn.next_functions]


def test_backward_none_for_input_that_needs_grad_leaves_grad_unset():
    for m in (ember, torch):
        x, w = leaf(m), leaf(m, W)
        make_grads(m, lambda g: (None, None)).apply(x, w).sum().backward()
        assert x.grad is None


def test_new_style_setup_context_with_defaults():
    check(lambda m, x, w: make_new_style(m).apply(x, w), [X, W])
    check(lambda m, x, w: make_new_style(m).apply(x, w, scale=-0.5), [X, W])
    assert make_new_style(ember).apply(leaf(ember), leaf(ember, W)).grad_fn.name() == "MulBackward"


@pytest.mark.parametrize("make", [make_cube, make_exp])  # saves its input / its output
def test_double_backward_through_function(make):
    def second(m, x):
        y = make(m).apply(x).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        return g * g
    check(second, [X])


def test_no_grad_and_inputs_without_grad_record_nothing():
    e_exp, t_exp = both(make_exp)
    with ember.no_grad():
        ey = e_exp.apply(leaf(ember))
    with torch.no_grad():
        ty = t_exp.apply(leaf(torch))
    assert ey.requires_grad == ty.requires_grad is False and ey.grad_fn is None
    assert e_exp.apply(leaf(ember, requires_grad=False)).grad_fn is None


# ----------------------------------------------------------------------------------------------
# several outputs, non-differentiable and non-tensor outputs, materialized grads


@pytest.mark.parametrize("materialize", [True, False])
def test_unused_output_gradient_is_zeros_or_none(materialize):
    logs = {}
    for m in (ember, torch):
        log = logs[m.__name__] = []
        x = leaf(m)
        a, b = make_two_outputs(m, materialize, log).apply(x)
        b.sum().backward()
    (e_g1, e_g2), (t_g1, t_g2) = logs["ember"][0], logs["torch"][0]
    assert (e_g1 is None) == (t_g1 is None) == (not materialize)
    if materialize:
        np.testing.assert_array_equal(e_g1, t_g1)
    np.testing.assert_array_equal(e_g2, t_g2)


def test_non_differentiable_and_non_tensor_outputs():
    logs = {}
    results = {}
    for m in (ember, torch):
        log = logs[m.__name__] = []
        x = leaf(m)
        y, mask, label, n = make_argmax(m, log).apply(x)
        results[m.__name__] = (y.requires_grad, mask.requires_grad, mask.grad_fn is None,
                               label, n)
        y.sum().backward()
        results[m.__name__] += (as_numpy(x.grad).tolist(),)
    assert results["ember"] == results["torch"]
    assert logs["ember"] == logs["torch"]  # materialized bool zeros for the mask, None for others


def test_input_returned_as_is_gets_a_new_alias():
    for m in (ember, torch):
        x = leaf(m)
        y = make_identity(m).apply(x)
        assert y is not x and x.grad_fn is None and y.grad_fn is not None
        y.sum().backward()
        np.testing.assert_array_equal(as_numpy(x.grad), np.full(X.shape, 5.0))


# ----------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("result,match", [
    (lambda g: g, "returned an incorrect number of gradients (expected 2, got 1)"),
    (lambda g: (g, None, g), "returned an incorrect number of gradients (expected 2, got 3)"),
    (lambda g: (g, g), "returned a gradient different than None at position 2"),
    (lambda g: (3.0, None), "expected Variable or None (got float)"),
    (lambda g: [g, None], "expected Variable or None (got list)"),
    (lambda g: (g[:1], None), "returned an invalid gradient at index 0"),
])
def test_wrong_gradients_raise_like_torch(result, match):
    def run(m):
        make_grads(m, result).apply(leaf(m), 2.0).sum().backward()
    check_raises(run, match=match)


def test_vjp_is_another_name_for_backward():
    def make(m, both_defined):
        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 2

            if both_defined:
                backward = vjp
        return Double
    check(lambda m, x: make(m, False).apply(x), [X])
    check_raises(lambda m: make(m, True).apply(leaf(m)).sum().backward(),
                 match="Implementing both 'backward' and 'vjp'")


def test_trailing_none_gradients_are_accepted():
    check(lambda m, x: make_grads(m, lambda g: (g * 2, None, None, None)).apply(x, 2.0), [X])


def test_save_for_backward_rejects_non_tensors():
    def run(m):
        class Keep(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        Keep.apply(leaf(m))
    check_raises(run, match="save_for_backward can only save variables")


def test_saved_input_modified_in_place_raises():
    def run(m):
        a = leaf(m) * 1
        y = make_cube(m).apply(a)
        a.mul_(2)
        y.sum().backward()
    error = check_raises(run, match="modified by an inplace operation")
    assert "output 0 of Mul" in str(error) and "is at version 1; expected version 0" in str(error)


def test_saved_output_modified_in_place_names_the_function():
    def run(m):
        y = make_exp(m).apply(leaf(m))
        y.mul_(2)
        y.sum().backward()
    error = check_raises(run, match="modified by an inplace operation")
    assert "output 0 of Exp," in str(error)


def test_saved_tensors_are_freed_by_backward():
    def run(m):
        y = make_exp(m).apply(leaf(m))
        y.sum().backward()
        return y.grad_fn.saved_tensors
    check_raises(run, match="Trying to backward through the graph a second time")

    def twice(m):
        y = make_exp(m).apply(leaf(m)).sum()
        y.backward()
        y.backward()
    check_raises(twice, match="Trying to backward through the graph a second time")


def test_saved_output_unpacks_with_its_node_and_makes_no_cycle():
    y = make_exp(ember).apply(leaf(ember))
    (saved,) = y.grad_fn.saved_tensors
    assert saved.grad_fn is y.grad_fn and saved.requires_grad
    np.testing.assert_array_equal(as_numpy(saved), np.exp(X))
    node = weakref.ref(y.grad_fn)
    del y, saved
    assert node() is None  # freed by reference counting alone: no node -> output -> node loop


# ----------------------------------------------------------------------------------------------
# in-place Functions (mark_dirty)


def test_mark_dirty_rebases_the_input():
    def run(m, x):
        a = x * 1
        b = make_inc(m).apply(a)
        assert b is a
        return b * a
    check(run, [X])
    a = leaf(ember) * 1
    assert make_inc(ember).apply(a).grad_fn.name() == "IncBackward"


def test_mark_dirty_on_a_view_updates_the_base():
    def run(m, x):
        a = x * 1
        make_inc(m).apply(a[0])
        return a.exp()
    check(run, [X])


def test_mark_dirty_errors():
    check_raises(lambda m: make_inc(m).apply(leaf(m)),
                 match="a leaf Variable that requires grad has been used in an in-place")

    def not_returned(m):
        class Twice(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        Twice.apply(leaf(m) * 1)
    check_raises(not_returned, match="marked as dirty during the forward method were not returned")


# ----------------------------------------------------------------------------------------------
# once_differentiable, Variable


def make_once(m):
    class Square(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not m.is_grad_enabled()
            return 2 * x * g
    return Square


def test_once_differentiable():
    check(lambda m, x: make_once(m).apply(x), [X])

    def double(m):
        x = leaf(m)
        y = make_once(m).apply(x * 1)
        (g,) = m.autograd.grad(y, x, m.ones_like(y).requires_grad_(), create_graph=True)
        g.sum().backward()
    check_raises(double, match="trying to differentiate twice a function that was marked "
                               "with @once_differentiable")


def test_variable_is_a_legacy_alias():
    w = ember.tensor(W)
    v = ember.autograd.Variable(w, requires_grad=True)
    assert isinstance(v, ember.Tensor) and v is not w and v.requires_grad and not w.requires_grad
    v.detach().add_(1)  # shares memory with w
    np.testing.assert_array_equal(as_numpy(w), W + 1)
    check_raises(lambda m: m.autograd.Variable(3), match="Variable data has to be a tensor")


def test_instantiating_a_function_is_legacy():
    for m in (ember, torch):
        with pytest.warns(DeprecationWarning):
            f = make_exp(m)()
        with pytest.raises(RuntimeError, match="Legacy autograd function"):
            f(leaf(m))


# ----------------------------------------------------------------------------------------------
# gradcheck / gradgradcheck


def make_wrong(m):
    """d(x*y)/dy is x; this backward returns 1.1 * x for it."""
    class Wrong(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x * 1.1 + g2
    return Wrong


def _double_inputs(m):
    return (m.tensor(X, dtype=m.float64).requires_grad_(),
            m.tensor(W, dtype=m.float64).requires_grad_())


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_catches_a_wrong_function_gradient(fast_mode):
    messages = {}
    for m in (ember, torch):
        with pytest.raises(RuntimeError) as info:
            m.autograd.gradcheck(make_wrong(m).apply, _double_inputs(m), fast_mode=fast_mode)
        assert type(info.value).__name__ == "GradcheckError"
        messages[m.__name__] = str(info.value).splitlines()[0]
    assert messages["ember"] == messages["torch"] == \
        "Jacobian mismatch for output 0 with respect to input 1,"
    assert ember.autograd.gradcheck(make_wrong(ember).apply, _double_inputs(ember),
                                    raise_exception=False) is False


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_and_gradgradcheck_pass_for_correct_functions(fast_mode):
    x, w = _double_inputs(ember)
    assert ember.autograd.gradcheck(make_scale(ember).apply, (x, w, 0.5), fast_mode=fast_mode)
    assert ember.autograd.gradgradcheck(make_cube(ember).apply, (x,), fast_mode=fast_mode)
    assert ember.autograd.gradgradcheck(lambda a, b: (a * b).tanh(), (x, w),
                                        gen_non_contig_grad_outputs=True)
    assert ember.autograd.gradgradcheck(lambda a: (a * a * a).sum(), (x,))  # 0-d output


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class Cube(make_cube(ember)):  # right first derivative, but its backward is not
        @staticmethod            # differentiable the right way: x.detach() hides 6x
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x.detach() * x.detach() * g + 0 * x
    x, _ = _double_inputs(ember)
    assert ember.autograd.gradcheck(Cube.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        ember.autograd.gradgradcheck(Cube.apply, (x,))


def test_gradcheck_argument_errors_match_torch():
    check_raises(lambda m: m.autograd.gradcheck(lambda a: a * 2, (m.tensor(X),)),
                 match="at least one input tensor to require gradient")
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double"):
        ember.autograd.gradcheck(lambda a: a * 2, (leaf(ember).float(),), atol=1e-2, rtol=1e-2)
    x = leaf(ember)
    with pytest.raises(NotImplementedError):
        ember.autograd.gradcheck(lambda a: a * 2, (x,), check_forward_ad=True)


def test_gradcheck_nondeterministic_backward_is_caught():
    calls = []

    class Noisy(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (2 + 1e-4 * len(calls))  # a little different on every call
    x, _ = _double_inputs(ember)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        ember.autograd.gradcheck(Noisy.apply, (x,), atol=1e-2)
    calls.clear()
    assert ember.autograd.gradcheck(Noisy.apply, (x,), atol=1e-2, nondet_tol=1e-2)


def test_gradcheck_with_undefined_output_grads():
    """backward gets None for outputs without a gradient (set_materialize_grads(False)): a
    backward that handles it passes; one that does not is reported (here by the main check,
    which already leaves the other outputs' gradients undefined, in both libraries)."""
    def make(m, careful):
        class Pair(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                if careful:
                    parts = [g for g in (g1 * 2 if g1 is not None else None,
                                         g2 * 3 if g2 is not None else None) if g is not None]
                    return parts[0] + parts[1] if len(parts) == 2 else (parts or [None])[0]
                if g1 is None or g2 is None:
                    raise RuntimeError("this backward needs both output gradients")
                return g1 * 2 + g2 * 3
        return Pair
    for m in (ember, torch):
        x = m.tensor(X, dtype=m.float64).requires_grad_()
        assert m.autograd.gradcheck(make(m, True).apply, (x,), check_undefined_grad=True)
        with pytest.raises(RuntimeError, match="needs both output gradients"):
            m.autograd.gradcheck(make(m, False).apply, (x,))

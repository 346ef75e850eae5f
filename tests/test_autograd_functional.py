"""ember.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) against
torch.autograd.functional: values, the nesting of tuple results, create_graph and strict."""
import numpy as np
import pytest

import ember

from .oracle import assert_close, check_raises

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))
VA = RNG.standard_normal(3)
VB = RNG.standard_normal((2, 3))


def tensors(m, *arrays):
    return tuple(m.tensor(a) for a in arrays)


def run_both(call):
    """call(m, F) with F = m.autograd.functional; results compared (structure and values)."""
    e = call(ember, ember.autograd.functional)
    t = call(torch, torch.autograd.functional)
    assert_close(e, t, rtol=1e-6, atol=1e-9)
    return e, t


def smooth(x, y):
    return ((x * y).tanh() * x).sum()


def vector(x, y):
    return (x * y).tanh() + y.exp() * 0.5


# ----------------------------------------------------------------------------------------------
# jacobian


@pytest.mark.parametrize("case", ["single", "tuple_in", "tuple_out", "tuple_both"])
def test_jacobian_structures(case):
    def call(m, F):
        x, y = tensors(m, A, B)
        if case == "single":
            return F.jacobian(lambda a: (a * 2).exp(), x)
        if case == "tuple_in":
            return F.jacobian(vector, (x, y))
        if case == "tuple_out":
            return F.jacobian(lambda a: (a.exp(), a * a), x)
        return F.jacobian(lambda a, b: (smooth(a, b), b * a), (x, y))
    run_both(call)


def test_jacobian_of_an_unused_input_is_zero_or_strict_error():
    run_both(lambda m, F: F.jacobian(lambda a, b: a * 2, tensors(m, A, B)))
    check_raises(lambda m: m.autograd.functional.jacobian(lambda a, b: a * 2, tensors(m, A, B),
                                                          strict=True),
                 match="independent of input 1")


def test_jacobian_create_graph_is_differentiable():
    def call(m, F):
        x = m.tensor(A).requires_grad_()
        jac = F.jacobian(lambda a: a.tanh() * a, x, create_graph=True)
        assert jac.requires_grad
        (g,) = m.autograd.grad(jac.sum(), x)
        return jac.detach(), g
    run_both(call)


def test_jacobian_without_create_graph_is_detached():
    for m in (ember, torch):
        x = m.tensor(A).requires_grad_()
        jac = m.autograd.functional.jacobian(lambda a: a.exp(), x)
        assert not jac.requires_grad and x.grad is None


def test_jacobian_strict_rejects_outputs_that_do_not_require_grad():
    check_raises(lambda m: m.autograd.functional.jacobian(lambda a: m.ones(3), m.tensor(A),
                                                          strict=True),
                 match="does not require grad")


def test_jacobian_unsupported_options():
    # vectorize=True and strategy="forward-mode" are checked in tests/test_forward_ad.py
    x = ember.tensor(A)
    with pytest.raises(ValueError):  # torch uses an assert here
        ember.autograd.functional.jacobian(lambda a: a, x, strategy="sideways")


def test_type_errors_for_non_tensor_inputs_and_outputs():
    check_raises(lambda m: m.autograd.functional.jacobian(lambda a: a, 3.0))
    check_raises(lambda m: m.autograd.functional.vjp(lambda a: 3.0, m.tensor(A), m.tensor(A)))


# ----------------------------------------------------------------------------------------------
# hessian


def test_hessian_single_and_tuple_inputs():
    run_both(lambda m, F: F.hessian(lambda a: (a.exp() * a).sum(), m.tensor(A)))
    run_both(lambda m, F: F.hessian(smooth, tensors(m, A, B)))


def test_hessian_create_graph():
    def call(m, F):
        x = m.tensor(A).requires_grad_()
        h = F.hessian(lambda a: (a * a * a).sum(), x, create_graph=True)
        (g,) = m.autograd.grad(h.sum(), x)
        return h.detach(), g
    run_both(call)


def test_hessian_needs_a_single_element_output():
    check_raises(lambda m: m.autograd.functional.hessian(lambda a: a * a, m.tensor(A)),
                 match="single element")
    check_raises(lambda m: m.autograd.functional.hessian(lambda a: (a.sum(), a.sum()),
                                                         m.tensor(A)),
                 match="single Tensor")


def test_hessian_strict_linear_function():
    check_raises(lambda m: m.autograd.functional.hessian(lambda a: (a * 2).sum(), m.tensor(A),
                                                         strict=True))


# ----------------------------------------------------------------------------------------------
# vjp, jvp, hvp, vhp


def test_vjp():
    run_both(lambda m, F: F.vjp(vector, tensors(m, A, B), m.tensor(VB)))
    run_both(lambda m, F: F.vjp(lambda a: (a * a).sum(), m.tensor(A)))  # v=None: scalar output
    run_both(lambda m, F: F.vjp(lambda a: (a.exp(), a * 3), m.tensor(A), tensors(m, VA, VA)))


def test_jvp():
    run_both(lambda m, F: F.jvp(vector, tensors(m, A, B), tensors(m, VA, VB)))
    run_both(lambda m, F: F.jvp(lambda a: (a.exp(), a * 3), m.tensor(A), m.tensor(VA)))
    run_both(lambda m, F: F.jvp(lambda a: a * a, m.tensor(np.array([1.5])), None))


def test_hvp_and_vhp():
    run_both(lambda m, F: F.hvp(smooth, tensors(m, A, B), tensors(m, VA, VB)))
    run_both(lambda m, F: F.vhp(smooth, tensors(m, A, B), tensors(m, VA, VB)))
    run_both(lambda m, F: F.hvp(lambda a: (a.exp() * a).sum(), m.tensor(A), m.tensor(VA)))


def test_products_with_create_graph_are_differentiable():
    def call(m, F):
        x = m.tensor(A).requires_grad_()
        out, hv = F.hvp(lambda a: (a * a * a).sum(), x, m.tensor(VA), create_graph=True)
        (g,) = m.autograd.grad(hv.sum(), x)
        _, jv = F.jvp(lambda a: a.tanh(), x, m.tensor(VA), create_graph=True)
        (g2,) = m.autograd.grad(jv.sum(), x)
        return out.detach(), hv.detach(), g, g2
    run_both(call)


def test_v_errors():
    check_raises(lambda m: m.autograd.functional.vjp(lambda a: a * 2, m.tensor(A)),
                 match="v can only be None")
    check_raises(lambda m: m.autograd.functional.vjp(lambda a: a * 2, m.tensor(A),
                                                     m.tensor(B)))
    check_raises(lambda m: m.autograd.functional.jvp(lambda a, b: a * b, tensors(m, A, A),
                                                     m.tensor(A)))


def test_strict_mode_for_products():
    check_raises(lambda m: m.autograd.functional.vjp(lambda a, b: a * 2, tensors(m, A, A),
                                                     m.tensor(A), strict=True),
                 match="independent of input 1")
    run_both(lambda m, F: F.vjp(lambda a, b: a * 2, tensors(m, A, A), m.tensor(A)))
    check_raises(lambda m: m.autograd.functional.vhp(lambda a: (a * 2).sum(), m.tensor(A),
                                                     m.tensor(A), strict=True))

"""gcd, lcm, ldexp, frexp and renorm beyond the op table: torch's errors and in-place forms."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

I = np.array([4, -6, 0, 9])  # noqa: E741
F = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)


@pytest.mark.parametrize("fn, inputs, match", [
    (lambda m, a: m.gcd(a.float(), a.float()), [I], "\"gcd_cpu\" not implemented for 'Float'"),
    (lambda m, a: m.lcm(a > 0, a > 0), [I], "not implemented for 'Bool'"),
    (lambda m, a: m.gcd(a, 6), [I], "must be Tensor, not int"),
    (lambda m, a: m.ldexp(a, 3), [F], "must be Tensor, not int"),
    (lambda m, a: m.frexp(a.long()), [F], "only supports floating-point dtypes"),
    (lambda m, a: m.renorm(a, 2, 0, -5), [F], "expected maxnorm to be >= 0 but got -5"),
    (lambda m, a: m.renorm(a, -1, 0, 5), [F], "non-positive-norm not supported"),
    (lambda m, a: m.renorm(a[0], 2, 0, 5), [F], "at least 2 dimensions, got 1 dimensions"),
    (lambda m, a: m.renorm(a.long(), 2, 0, 5), [F], "Expected a floating point"),
    (lambda m, a: m.renorm(a, 2, 2, 5), [F], "Dimension out of range"),
])
def test_errors_match_torch(fn, inputs, match):
    check_raises(fn, inputs, match=match)


@pytest.mark.parametrize("fn", [
    lambda m, a: m.tensor([4, 6, 0]).gcd_(m.tensor([6, 4, 5])),
    lambda m, a: m.gcd_(m.tensor([4, 6, 0]), m.tensor([6, 4, 5])),
    lambda m, a: m.lcm_(m.tensor([4, 6, 0]), m.tensor([6, 4, 5])),
    lambda m, a: a.clone().ldexp_(m.tensor([1, 2, -1])),
    lambda m, a: m.ldexp_(a.clone(), m.tensor([1, 2, -1])),
    lambda m, a: a.clone().renorm_(2, 0, 5.0),
])
def test_in_place_forms(fn):
    check(fn, [F], grad=False)


def test_renorm_in_place_keeps_the_gradient():
    check(lambda m, a: (a * 1).renorm_(2, 1, 4.0), [F])


def test_frexp_gradient_flows_through_the_mantissa_only():
    check(lambda m, a: m.frexp(a * 3).mantissa, [F])
    e = ember.frexp(ember.tensor(F, requires_grad=True))
    assert e.mantissa.requires_grad and not e.exponent.requires_grad
    assert e.mantissa.grad_fn.name() == "FrexpBackward0"

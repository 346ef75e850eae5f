"""The gradient of a transposed right factor (mm's and addmm's rules): for `a @ b.t()`,
as `nn.Linear` computes, b's gradient is computed transposed so that the weight receives a
contiguous array. Compared with the plain `a^H @ g` and with torch, for mm and addmm, real
and complex."""
import numpy as np
import pytest

import ember
from ember.ops._op import REGISTRY

from .oracle import assert_close, check

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _normal(*shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("transposed", [True, False])
def test_right_factor_grad_equals_the_plain_product(dtype, transposed):
    a = ember.tensor(_normal(5, 3, dtype=dtype))
    g = ember.tensor(_normal(5, 4, dtype=dtype))
    b = ember.tensor(_normal(4, 3, dtype=dtype)).t() if transposed else \
        ember.tensor(_normal(3, 4, dtype=dtype))
    assert b._data.flags.c_contiguous is not transposed
    _, fast = REGISTRY["mm"].rule(g, a, b, (False, True))
    plain = a.mH @ g
    np.testing.assert_allclose(fast.numpy(), plain.numpy(), rtol=1e-5, atol=1e-6)
    # the transposed path's result is the transpose of a contiguous array; the plain one
    # contiguous
    flags = fast._data.flags
    assert (flags.f_contiguous, flags.c_contiguous) == ((True, False) if transposed else
                                                      (False, True))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_linear_weight_gets_a_contiguous_gradient_equal_to_torch(dtype):
    x = _normal(8, 6, dtype=dtype)
    w = _normal(5, 6, dtype=dtype)
    bias = _normal(5, dtype=dtype)
    check(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [x, w, bias])
    ew = ember.tensor(w, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ember.nn.functional.linear(ember.tensor(x), ew, ember.tensor(bias)).abs().sum().backward()
    torch.nn.functional.linear(torch.tensor(x), tw, torch.tensor(bias)).abs().sum().backward()
    assert ew.grad._data.flags.c_contiguous
    assert_close(ew.grad, tw.grad, 1e-4, 1e-5)


def test_mm_with_a_transposed_right_factor_matches_torch():
    check(lambda lib, a, b: lib.mm(a, b.t()), [_normal(4, 3), _normal(6, 3)])
    check(lambda lib, c, a, b: lib.addmm(c, a, b.t(), beta=0.5, alpha=2.0),
          [_normal(4, 6), _normal(4, 3), _normal(6, 3)])

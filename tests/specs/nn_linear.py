"""Rows for ember/ops/nn/linear.py and ember/ops/nn/conv.py (more in tests/test_nn_conv.py)."""
from ._spec import Spec, T

SPECS = [
    Spec("linear", lambda m, x, w, b: m.nn.functional.linear(x, w, b),
         [(T(3, 4), T(5, 4), T(5)), (T(2, 3, 4), T(5, 4), T(5)), (T(4), T(5, 4), T(5)),
          (T(3, 4, t=True), T(5, 4, t=True), T(5))]),
    Spec("linear_no_bias", lambda m, x, w: m.nn.functional.linear(x, w), [(T(3, 4), T(5, 4))],
         ops=["linear"]),
    Spec("conv2d", lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1, stride=2),
         [(T(1, 2, 5, 4), T(3, 2, 3, 3))], ops=["convolution"], rtol=1e-5, atol=1e-5),
    Spec("conv_transpose2d", lambda m, x, w: m.nn.functional.conv_transpose2d(
        x, w, stride=2, padding=1), [(T(1, 2, 3, 3), T(2, 3, 2, 2))],
         ops=["conv_input_grad"], rtol=1e-5, atol=1e-5),
    Spec("conv2d_double_backward", lambda m, x, w: _weight_grad(m, x, w),
         [(T(1, 2, 4, 4), T(3, 2, 2, 2))], ops=["conv_weight_grad"], rtol=1e-5, atol=1e-5),
]


def _weight_grad(m, x, w):
    """d(sum(conv(x, w)^2))/dw with create_graph: runs conv_weight_grad as a forward op."""
    y = m.nn.functional.conv2d(x, w)
    (gw,) = m.autograd.grad((y * y).sum(), w, create_graph=True)
    return gw

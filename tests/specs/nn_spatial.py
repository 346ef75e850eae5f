"""Rows for ember/ops/nn/padding.py, pool.py and sampling.py (more in tests/test_nn_pool.py,
test_nn_padding.py and test_nn_sampling.py)."""
from ._spec import Spec, T

F = "nn.functional"


def _f(m):
    return m.nn.functional


def _avg_pool_grad(m, x):
    """d(sum(avg_pool(x)^2))/dx with create_graph: runs window_sum_backward as a forward op."""
    y = _f(m).avg_pool2d(x, 3, 2, 1, ceil_mode=True)
    (gx,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
    return gx


SPECS = [
    Spec("constant_pad_nd", lambda m, x: _f(m).pad(x, (1, 2, -1, 0), value=0.5),
         [(T(2, 3, 4),), (T(3, 4, t=True),), (T(0, 3, 2),), (T(2, 3, 4, dtype="float64"),)]),
    Spec("max_pool", lambda m, x: _f(m).max_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                   return_indices=True),
         [(T(2, 3, 6, 7),), (T(3, 5, 5),), (T(0, 2, 4, 4),), (T(1, 2, 5, 4, t=True),)]),
    Spec("max_pool1d_dilated", lambda m, x: _f(m).max_pool1d(x, 2, 1, 1, dilation=2),
         [(T(2, 3, 7),)], ops=["max_pool"]),
    Spec("adaptive_max_pool", lambda m, x: _f(m).adaptive_max_pool2d(x, (3, 2),
                                                                     return_indices=True),
         [(T(2, 3, 7, 5),), (T(3, 4, 4),), (T(0, 2, 4, 4),)]),
    Spec("window_sum", lambda m, x: _f(m).avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                     count_include_pad=False),
         [(T(2, 3, 6, 7),), (T(3, 5, 5),), (T(2, 2, 5, 4, t=True),)]),
    Spec("window_sum_backward", _avg_pool_grad, [(T(1, 2, 5, 6, dtype="float64"),)]),
    Spec("max_unpool", lambda m, x: _f(m).max_unpool2d(*_f(m).max_pool2d(
        x, 2, return_indices=True), 2, output_size=(5, 7)), [(T(2, 3, 5, 7),)]),
    Spec("im2col", lambda m, x: _f(m).unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=2),
         [(T(2, 3, 5, 6),), (T(3, 4, 4),)]),
    Spec("col2im", lambda m, x: _f(m).fold(x, (4, 5), 2, padding=1, stride=(1, 2)),
         [(T(2, 12, 15),), (T(8, 15),)]),
]

# the tiled fast path of max pooling (stride == kernel, no padding, no indices asked for)
SPECS += [
    Spec("max_pool_tiled", lambda m, x: (m.nn.functional.max_pool2d(x, 2),
                                         m.nn.functional.max_pool1d(x[0], 3),
                                         m.nn.functional.max_pool3d(x.unsqueeze(0), (1, 2, 2))),
         [(T(2, 3, 6, 7),), (T(1, 2, 4, 4, t=True),)],
         ops=["tiled_max_pool", "tiled_max_pool_backward", "tiled_window_pick"]),
    Spec("max_pool_tiled_double_backward", lambda m, x: _pool_second(m, x),
         [(T(1, 2, 4, 6),)], ops=["tiled_max_pool_backward", "tiled_window_pick"]),
]


def _pool_second(m, x):
    y = m.nn.functional.max_pool2d(x, 2)
    (g,) = m.autograd.grad((y * y).sum(), x, create_graph=True)
    return g

_SAMPLES2 = [[[0.3, 0.8], [0.05, 0.6], [0.99, 0.0]], [[0.5, 0.5], [0.7, 0.2], [0.1, 0.4]]]
_SAMPLES3 = [[[0.3, 0.8, 0.1], [0.6, 0.05, 0.9]]]

SPECS += [
    Spec("fractional_max_pool2d", lambda m, x: (
        m.nn.functional.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                              _random_samples=m.tensor(_SAMPLES2, dtype=x.dtype)),
        m.nn.functional.fractional_max_pool2d(x, (3, 2), output_ratio=(0.5, 0.7),
                                              _random_samples=m.tensor(_SAMPLES2, dtype=x.dtype)),
        m.nn.functional.fractional_max_pool2d_with_indices(
            x, 3, output_size=(1, 4), _random_samples=m.tensor(_SAMPLES2, dtype=x.dtype))),
         [(T(2, 3, 7, 6),), (T(2, 3, 7, 6, dtype="float64"),)],
         ops=["fractional_max_pool_indices", "gather"]),
    Spec("fractional_max_pool2d_unbatched", lambda m, x: m.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(3, 2), _random_samples=m.tensor(_SAMPLES2[:1], dtype=x.dtype)),
         [(T(3, 5, 5),)], ops=["fractional_max_pool_indices", "gather"]),
    Spec("fractional_max_pool3d", lambda m, x: (
        m.nn.functional.fractional_max_pool3d(x, 2, output_size=(2, 3, 2), return_indices=True,
                                              _random_samples=m.tensor(_SAMPLES3, dtype=x.dtype)),
        m.nn.functional.fractional_max_pool3d(x, (2, 1, 2), output_ratio=0.6,
                                              _random_samples=m.tensor(_SAMPLES3, dtype=x.dtype))),
         [(T(1, 2, 5, 6, 4),)], ops=["fractional_max_pool_indices", "gather"]),
]

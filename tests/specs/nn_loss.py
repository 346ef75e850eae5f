"""Rows for ember/ops/nn/loss.py and ember/ops/nn/distance.py (the primitives; every loss and
option is in tests/test_nn_loss.py and tests/test_nn_distance.py).

Class weights are built inside the lambdas (`_w`): torch refuses gradients for them, and a
constant made in both libraries keeps them out of the gradient comparison.
"""
from ._spec import I, Spec, T


def F(m):
    return m.nn.functional


def _w(m, x, classes):
    return m.linspace(0.5, 2.0, classes, dtype=x.dtype)


def _log_softmax(x, dim):
    return x - x.logsumexp(dim, keepdim=True)


def _ce_double(m, x, t):
    """d(cross_entropy)/dx with create_graph: runs cross_entropy_backward as a forward op."""
    loss = F(m).cross_entropy(x, t, weight=_w(m, x, 5), label_smoothing=0.1, ignore_index=2)
    (gx,) = m.autograd.grad(loss, x, create_graph=True)
    return gx


def _ctc(m, x, targets, reduction="mean"):
    return F(m).ctc_loss(_log_softmax(x, 2), targets, (6, 4), (3, 2), reduction=reduction)


def _ctc_grad(m, lp, targets):
    """torch's CTC gradient w.r.t. the log-probabilities themselves (see ctc_loss_backward)."""
    lp = lp.detach().requires_grad_()
    (g,) = m.autograd.grad(F(m).ctc_loss(lp, targets, (6, 4), (3, 2)), lp)
    return g


SPECS = [
    Spec("cross_entropy", lambda m, x, t: F(m).cross_entropy(x, t),
         [(T(4, 5), I(4, high=5)), (T(2, 5, 3), I(2, 3, high=5)), (T(5), I(high=5)),
          (T(0, 5), I(0, high=5)), (T(4, 5, t=True), I(4, high=5)),
          (T(4, 5, dtype="float64"), I(4, high=5))]),
    Spec("cross_entropy_options", lambda m, x, t: F(m).cross_entropy(
        x, t, weight=_w(m, x, 5), label_smoothing=0.2, ignore_index=1, reduction="sum"),
         [(T(6, 5), I(6, high=5)), (T(2, 5, 2, 3), I(2, 2, 3, high=5))], ops=["cross_entropy"]),
    Spec("cross_entropy_double_backward", _ce_double, [(T(4, 5), I(4, high=5))],
         ops=["cross_entropy_backward"], grad_rtol=1e-4, grad_atol=1e-5),
    Spec("nll_loss", lambda m, x, t: F(m).nll_loss(x, t, weight=_w(m, x, 5), ignore_index=3),
         [(T(4, 5), I(4, high=5)), (T(2, 5, 3), I(2, 3, high=5)), (T(5), I(high=5)),
          (T(2, 5, 2, 3), I(2, 2, 3, high=5))]),
    Spec("mse_loss", lambda m, x, y: F(m).mse_loss(x, y),
         [(T(3, 4), T(3, 4)), (T(2, 3, dtype="float64"), T(2, 3, dtype="float64")), (T(), T())]),
    Spec("smooth_l1_loss", lambda m, x, y: F(m).smooth_l1_loss(x, y, reduction="sum", beta=0.5),
         [(T(3, 4), T(3, 4)), (T(5, dtype="float64"), T(5, dtype="float64"))]),
    Spec("huber_loss", lambda m, x, y: F(m).huber_loss(x, y, reduction="none", delta=0.8),
         [(T(3, 4), T(3, 4)), (T(5, dtype="float64"), T(5, dtype="float64"))]),
    Spec("binary_cross_entropy", lambda m, x, y: F(m).binary_cross_entropy(x, y),
         [(T(3, 4, low=0.05, high=0.95), T(3, 4, low=0, high=1)),
          (T(low=0.05, high=0.95), T(low=0, high=1))]),
    Spec("binary_cross_entropy_with_logits", lambda m, x, y: F(m).
         binary_cross_entropy_with_logits(x, y, pos_weight=_w(m, x, 4)),
         [(T(3, 4), T(3, 4, low=0, high=1)), (T(2, 3, 4, dtype="float64"), T(2, 3, 4))]),
    Spec("ctc_loss", _ctc, [(T(6, 2, 4), I(2, 3, low=1, high=4))]),
    Spec("ctc_loss_backward", _ctc_grad, [(T(6, 2, 4, low=-3, high=-0.5), I(2, 3, low=1, high=4))],
         grad=False),
    Spec("pdist", lambda m, x: F(m).pdist(x), [(T(4, 3),), (T(5, 2, dtype="float64"),)]),
    Spec("pdist_p", lambda m, x: F(m).pdist(x, 3), [(T(4, 3),)], ops=["pdist"]),
    Spec("cdist", lambda m, a, b: m.cdist(a, b),
         [(T(3, 4), T(5, 4)), (T(2, 1, 3, 4), T(3, 2, 4)), (T(30, 3), T(4, 3))],
         rtol=1e-5, atol=1e-5),
    Spec("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1), [(T(3, 4), T(5, 4))], ops=["cdist"]),
    Spec("one_hot", lambda m, t: F(m).one_hot(t), [(I(4),), (I(2, 3, high=7),)], grad=False),
]

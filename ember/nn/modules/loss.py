"""The loss layers: thin modules over `ember.nn.functional`'s losses, with torch's constructor
signatures, attribute names and defaults.

`_Loss` stores `reduction` (mapping the deprecated `size_average`/`reduce` flags as torch does);
`_WeightedLoss` adds a `weight` buffer, so it moves with `.to()` and appears in `state_dict()`
exactly where torch puts it. Like torch's, these modules print without arguments
(`CrossEntropyLoss()`).

Read next: `../functional.py` and `ember/ops/nn/loss.py` (the math).
"""
import math
import warnings

from ...ops.nn.loss import _legacy_reduction
from .. import functional as F
from .distance import PairwiseDistance
from .linear import Linear
from .module import Module

__all__ = ["L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss",
           "MSELoss", "BCELoss", "BCEWithLogitsLoss", "HingeEmbeddingLoss",
           "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
           "CrossEntropyLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
           "TripletMarginWithDistanceLoss", "CTCLoss", "LinearCrossEntropyLoss"]


class _Loss(Module):
    """Base of the loss modules: stores `reduction`, computed from the deprecated
    `size_average`/`reduce` flags when either is given (as torch does)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    """A loss with an optional per-class `weight` tensor, kept as a buffer."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error: `|input - target|` per element. `reduction` is "mean" (default), "sum"
    or "none" (one loss per element)."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error: `(input - target) ** 2` per element. `reduction` is "mean" (default),
    "sum" or "none" (one loss per element)."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """`0.5 * d ** 2 / beta` where `|d| < beta`, else `|d| - 0.5 * beta`, with `d = input - target`
    (beta=1.0): squared near zero, absolute further out. `reduction` is "mean" (default), "sum" or
    "none" (one loss per element)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """`0.5 * d ** 2` where `|d| <= delta`, else `delta * (|d| - 0.5 * delta)`, with `d = input -
    target` (delta=1.0); SmoothL1Loss times delta. `reduction` is "mean" (default), "sum" or "none"
    (one loss per element)."""

    def __init__(self, reduction="mean", delta=1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class indices: `-weight[t] * input[n, t]` for a target class t,
    where `input` holds log-probabilities (N, C) or (N, C, d1, ...).

    Targets equal to `ignore_index` (-100) count for nothing; "mean" divides by the sum of the
    weights of the counted targets."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """Deprecated alias of NLLLoss."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see https://pytorch.org/docs/main/nn.html"
                      "#torch.nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between the logits `input` (N, C) or (N, C, d1, ...) and `target`, either class
    indices or class probabilities shaped like `input`: `log_softmax` then NLLLoss.

    `weight` rescales each class, `ignore_index` (-100, index targets only) drops targets, and
    `label_smoothing` mixes the target with the uniform distribution by that amount."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities: `-w * (t * log(x) + (1 - t) * log(1 - x))`, the logs
    clamped at -100 as in torch; `weight` rescales each element. `reduction` is "mean" (default),
    "sum" or "none" (one loss per element)."""

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, i.e. sigmoid then BCELoss computed in one numerically stable
    step. `pos_weight` (one per class, broadcast along the last dimension) multiplies the positive
    term; `weight` rescales each element. `reduction` is "mean" (default), "sum" or "none" (one loss
    per element)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss `log(1 + exp(-target * input))`, targets 1 or -1. `reduction` is
    "mean" (default), "sum" or "none" (one loss per element)."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-vs-all loss: binary cross entropy of the logits `input` (N, C) against the
    0/1 `target`, averaged over the C classes (optionally weighted per class). `reduction` is "mean"
    (default), "sum" or "none" (one loss per sample)."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence `target * (log(target) - input)`, with `input` given as
    log-probabilities (and `target` too when log_target=True).

    `reduction="batchmean"` divides the sum by the batch size (the true KL divergence); "mean", the
    default, averages over every element and warns, as in torch."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood: `exp(x) - t * x` for log_input=True (default), `x - t *
    log(x + eps)` otherwise; `full` adds the Stirling term of `log(t!)`. `reduction` is "mean"
    (default), "sum" or "none" (one loss per element)."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        """The loss of `target` counts under a Poisson whose rate is `exp(log_input)`
        (log_input=True) or `log_input` itself (log_input=False)."""
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood `0.5 * (log(var) + (input - target) ** 2 / var)` (plus `0.5
    * log(2 pi)` with full=True), `var` clamped at `eps`. `reduction` is "mean" (default), "sum" or
    "none" (one loss per element)."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        """The negative log-likelihood of `target` under a Gaussian of mean `input` and variance
        `var`.

        `var` has `input`'s shape, or one fewer trailing size 1 dimension, or is broadcastable (one
        variance for all); values are clamped to at least `eps` for stability, and a negative one
        raises ValueError."""
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """`input` where `target` is 1, `max(0, margin - input)` where it is -1 (margin=1.0); `input` is
    usually a distance. `reduction` is "mean" (default), "sum" or "none" (one loss per element)."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """`max(0, -target * (input1 - input2) + margin)` (margin=0.0). `reduction` is "mean" (default),
    "sum" or "none" (one loss per element)."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        """`max(0, -target * (input1 - input2) + margin)`: `target` (1 or -1) says which of
        `input1`, `input2` should rank higher."""
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """`1 - cos(x1, x2)` for pairs with target 1, `max(0, cos(x1, x2) - margin)` for target -1.
    `reduction` is "mean" (default), "sum" or "none" (one loss per sample)."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        """From the cosine similarity `cos` of `input1` and `input2` along their feature dimension:
        `1 - cos` where `target` is 1, `max(0, cos - margin)` where it is -1."""
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: for each sample, `max(0, margin - x[y] + x[i]) ** p` (p 1 or 2)
    summed over the classes `i != y` and divided by the number of classes, optionally weighted by
    `weight[y]`. `reduction` is "mean"
    (default), "sum" or "none" (one loss per sample)."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss: `target` lists each sample's classes (padded with -1 after the last
    one); every (target class, other class) pair adds `max(0, 1 - (x[target] - x[other]))`, divided
    by the number of classes. `reduction` is "mean" (default), "sum" or "none" (one loss per
    sample)."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """`max(d(a, p) - d(a, n) + margin, 0)` for anchor, positive and negative samples, d the p-norm
    distance (p=2); `swap` uses the smaller of d(a, n) and d(p, n). `reduction` is "mean" (default),
    "sum" or "none" (one loss per sample)."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """`max(d(anchor, positive) - d(anchor, negative) + margin, 0)` with d the p-norm distance
        (with swap, the smaller of d(anchor, negative) and d(positive, negative) is used)."""
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """TripletMarginLoss with any distance: `distance_function(x, y)` (default PairwiseDistance)
    replaces the p-norm. `reduction` is "mean" (default), "sum" or "none" (one loss per sample)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        # a Module here (the default PairwiseDistance) becomes a submodule, as in torch
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """`max(d(anchor, positive) - d(anchor, negative) + margin, 0)` with d the module's
        `distance_function` (pairwise_distance by default)."""
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification: the negative log-probability of each target sequence
    summed over all its alignments with the input steps (index `blank` is the blank label).

    "mean" divides each sample's loss by its target length, then averages over the batch;
    zero_infinity=True replaces infinite losses (and their gradients) by zero."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        """The connectionist temporal classification loss of unaligned `targets` given per-step
        `log_probs`.

        `log_probs` is (T, N, C) (or unbatched (T, C)) log-softmax output; `targets` is (N, S)
        padded or 1-D concatenated; `input_lengths` and `target_lengths` (N,) give each sample's
        lengths. With zero_infinity, infinite losses (targets too long for their input) and their
        gradients become zero."""
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of a linear layer's logits: `self.linear` (in_features ->
    num_classes * prod(out_features), stored flat) feeds F.linear_cross_entropy, with the
    weight reshaped to (num_classes, *out_features, in_features) for a K-dimensional loss."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if not 0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, num_classes * math.prod(out_features), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        shape = (self.num_classes,) + tuple(self.out_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(
            input, self.linear.weight.reshape(shape + (self.linear.in_features,)), target,
            linear_bias=bias, weight=self.weight, reduction=self.reduction,
            ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
            options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


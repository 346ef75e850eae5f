"""Dropout: dropout, dropout1d/2d/3d (whole channels), alpha_dropout and feature_alpha_dropout.

No new op, and torch's draws exactly (torch's `_dropout_impl`): the noise is a tensor like the
input (`empty_like`, so the same memory order; for the channel variants one value per
(sample, channel), shaped (N, C, 1, ...)) filled by `bernoulli_(1 - p)` from the global
generator, so a seeded program drops the elements torch drops. Then

    dropout        noise.div_(1 - p);          out = input * noise
    alpha dropout  b = (noise - 1) * (alpha' a) + alpha' a p;  noise *= a;  out = input * noise + b

with alpha' = SELU's alpha * scale (a dropped element takes SELU's negative saturation) and
a = 1 / sqrt((alpha'^2 p + 1)(1 - p)), which restores mean and variance. Each step is its own
rounding, in torch's order. The product's rule multiplies the gradient by the same noise, so
backward drops exactly the elements forward dropped; `inplace=True` uses `mul_`. p = 1
multiplies by zero (never by 1/0), and p = 0 or eval mode returns the input itself, as torch
does.

Read next: embedding.py.
"""
import math
import warnings

from ... import _dtype as dt
from ..._creation import empty, empty_like
from .._op import export

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766  # SELU's alpha * scale: the negative saturation value


def _noise(input, p, feature):
    """Bernoulli(1 - p) keep flags (0 or 1) in input's dtype: per element (like the input,
    memory order included), or per (sample, channel)."""
    if not feature:
        return empty_like(input).bernoulli_(1 - p)
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    return empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)


def _dropout(input, p, train, inplace, *, feature=False, alpha=False):
    """The shared core (torch's `_dropout_impl`)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = input.new_zeros(())
        return input.mul_(zero) if inplace else input * zero
    noise = _noise(input, p, feature)
    if not alpha:
        noise.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = noise.add(-1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    noise.mul_(a)
    return input.mul_(noise).add_(shift) if inplace else (input * noise).add_(shift)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1 / (1 - p)."""
    _check_p(p)
    return _dropout(input, p, training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped elements take SELU's saturation value and the result
    is rescaled to keep zero mean and unit variance."""
    _check_p(p)
    return _dropout(input, p, training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    _check_p(p)
    return _dropout(input, p, training, inplace, feature=True, alpha=True)


def _channel_dropout(input, p, training, inplace, batched):
    """Feature dropout of a (N, C, ...) input; an unbatched one gets a batch dim and loses it
    again (in place when inplace=True, so the caller's tensor is the one changed)."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _dropout(input, p, training, inplace, feature=True)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) inputs."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, batched=input.ndim == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) inputs. A 3-d input is read as (N, C, L), with
    torch's warning (torch keeps this historical behaviour)."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
                      "dropout behavior, please switch to using dropout1d instead.",
                      stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, batched=input.ndim == 5)


# ----------------------------------------------------------------------------------------------
# torch-level functions: torch.dropout(input, p, train) and friends, each with an in-place twin


def _publish(name, feature, alpha):
    def function(input, p, train):
        return _dropout(input, p, train, False, feature=feature, alpha=alpha)

    def function_(input, p, train):
        return _dropout(input, p, train, True, feature=feature, alpha=alpha)

    for fn, public in ((function, name), (function_, name + "_")):
        fn.__name__ = fn.__qualname__ = public
        fn.__doc__ = f"torch.{public}(input, p, train)"
        export(fn, name=public)


_publish("dropout", feature=False, alpha=False)
_publish("feature_dropout", feature=True, alpha=False)
_publish("alpha_dropout", feature=False, alpha=True)
_publish("feature_alpha_dropout", feature=True, alpha=True)


@export
def native_dropout(input, p, train):
    """(output, mask): dropout's result and the bool keep mask (all True when not training)."""
    if not train:
        return input.clone(), input.new_ones(input.shape, dtype=dt.bool)
    if p == 1:
        return input * input.new_zeros(()), input.new_zeros(input.shape, dtype=dt.bool)
    keep = _noise(input, p, False)
    return input * (keep / (1 - p)), keep.bool()


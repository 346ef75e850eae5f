"""sigmoid_focal_loss (Lin et al., RetinaNet): binary cross-entropy down-weighted for easy
examples, loss = alpha_t * (1 - p_t) ** gamma * BCE(inputs, targets).

Read next: `misc.py`.
"""
import ember
from ember.nn import functional as F

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    """Focal loss of logits `inputs` against 0/1 `targets` (same shape); alpha in [0, 1]
    weighs positives against negatives (-1: no weighting); reduction none / mean / sum."""
    if not 0 <= alpha <= 1 and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or "
                         "-1 for ignore.")
    p = ember.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction "
                     "modes: 'none', 'mean', 'sum'")

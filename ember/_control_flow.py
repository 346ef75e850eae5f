"""torch.cond and torch.while_loop, run eagerly.

torch offers these so that torch.compile and torch.export can capture data-dependent control
flow as one graph. ember compiles nothing, so both simply run Python's `if` and `while` on the
predicate's value: the results (and gradients through them) are those of the branch taken.
What differs: torch also checks, when tracing, that both branches return the same structure of
tensors; ember runs only the branch taken and so checks nothing about the other.
"""
from ._tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred, who):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"{who}: expected pred to be bool or single-element tensor, but "
                               f"got a tensor of shape {tuple(pred.shape)}")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"{who}: expected pred to be bool or tensor, but got "
                       f"{type(pred).__name__}")


def cond(pred, true_fn, false_fn, operands=()):
    """`true_fn(*operands)` if `pred` holds, else `false_fn(*operands)`."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"cond: expected operands to be a tuple or a list, got "
                           f"{type(operands).__name__}")
    branch = true_fn if _truth(pred, "cond") else false_fn
    return branch(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Apply `body_fn` to the carried values while `cond_fn` of them holds.

    Returns the last output of `body_fn` as it returned it (a tuple, a list, or one tensor for
    one carried value); when the body never runs, the carried inputs (one input comes back
    alone, as torch returns it)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"while_loop: expected carried_inputs to be a tuple or a list, got "
                           f"{type(carried_inputs).__name__}")
    result = carried_inputs[0] if len(carried_inputs) == 1 else tuple(carried_inputs)
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "while_loop"):
        result = body_fn(*carried)
        carried = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(carried) != len(carried_inputs):
            raise RuntimeError(f"while_loop: body_fn returned {len(carried)} values for "
                               f"{len(carried_inputs)} carried inputs")
    return result

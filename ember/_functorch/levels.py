"""The stack of active function transforms, and the hook that hands them every op.

A transform that is running -- a `vmap`, or a forward-mode AD level (`dual_level`, `func.jvp`)
-- is a *level*, numbered in the order it was entered. Tensors say which levels they belong to:

    x._batch_level   the vmap level of a BatchedTensor (0 for every other tensor)
    x._tangents      {dual level: tangent} of a tensor with forward-mode tangents (else None)

While any level is active, `intercept` sits in dispatch's observer slot (ops/_dispatch.py) and
sees every op first. It finds the highest level among the op's arguments and lets that level
`process` the op; a level runs the op (and its rules) on what lies beneath it -- a vmap on the
batched tensors' values, a dual level on the primals -- which comes back through `intercept`
for the next level down, until no level is left and the op runs as usual. This is functorch's
stack of interpreters, with one difference: the levels beneath are not unwrapped objects but
the same tensors with the higher levels hidden -- `below(level)` lowers a *ceiling* above which
`intercept` ignores levels, so a level's own tangents do not leak into the rules that compute
them. The autograd tape is not a level: an op records a node wherever its arguments require
grad (on batched tensors too), see vmap.py.

Read next: `autograd/forward_ad.py`, then `vmap.py`.
"""
import contextlib
import itertools

from .._tensor import Tensor

__all__ = ["Level", "active", "enter", "leave", "below", "intercept", "innermost"]

active = {}  # level index -> Level, for the levels now entered
_numbers = itertools.count(1)
_ceiling = float("inf")  # levels above this are hidden (see `below`)


class Level:
    """One entered transform; subclasses say how they `process` an op of theirs."""

    index = 0

    def process(self, op, args, attrs, target):
        """Run `op(*args, **attrs)` (in place into `target` when not None) for this level."""
        raise NotImplementedError


def enter(level):
    """Start `level` (numbered above every active one); the hook is set by the first."""
    from ..ops import _dispatch  # ops import autograd, which imports this module

    level.index = next(_numbers)
    if not active:
        _dispatch.add_observer(intercept)
    active[level.index] = level
    return level


def leave(level):
    from ..ops import _dispatch

    del active[level.index]
    if not active:
        _dispatch.remove_observer(intercept)


def innermost():
    """The most recently entered level that is still active, or None."""
    return active[max(active)] if active else None


@contextlib.contextmanager
def below(level):
    """Hide `level` and every level above it while the block runs."""
    global _ceiling
    saved = _ceiling
    _ceiling = level.index - 1
    try:
        yield
    finally:
        _ceiling = saved


def visible(index):
    """Whether level `index` is active and not hidden."""
    return index <= _ceiling and index in active


def owner(args):
    """The highest visible level among the tensors in `args`, or None."""
    best = 0
    limit = _ceiling
    for x in args:
        if isinstance(x, Tensor):
            level = x._batch_level
            if best < level <= limit and level in active:
                best = level
            tangents = x._tangents
            if tangents:
                for level in tangents:
                    if best < level <= limit and level in active:
                        best = level
    return active.get(best)


def intercept(op, args, attrs, target):
    """Dispatch's observer while transforms run: the owning level processes the op."""
    level = owner(args if target is None else (target,) + args)
    if level is None:
        from ..ops import _dispatch

        return _dispatch.call_below(intercept, op, args, attrs, target)
    return level.process(op, args, attrs, target)

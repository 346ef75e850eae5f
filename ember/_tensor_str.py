"""Printing tensors as torch does: `tensor([...], dtype=..., requires_grad=True)`."""
import numpy as np

from . import _dtype as dt

__all__ = ["tensor_repr", "set_printoptions"]


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    raise NotImplementedError("set_printoptions is not implemented yet")


def tensor_repr(t):
    body = np.array2string(np.asarray(t.detach()), separator=", ", prefix="tensor(")
    suffix = []
    default_types = (dt.get_default_dtype(), dt.int64, dt.bool)
    if t.dtype not in default_types:
        suffix.append(f"dtype={t.dtype}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"

"""torch's symbolic-shape helpers (sym_int, sym_max, ...) on the concrete numbers ember's
shapes always are: torch.compile traces them symbolically, eagerly they are plain arithmetic,
and that is all they are here.

Read next: `_tensor.py`.
"""
import builtins
import math
import numbers

__all__ = ["sym_float", "sym_int", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
           "sym_sum"]


def _number(name, value):
    if not isinstance(value, numbers.Real) or hasattr(value, "shape"):
        raise TypeError(f"{name}: expected a Python or NumPy number, got "
                        f"{type(value).__name__}")
    return value


def sym_float(a):
    """float(a)."""
    return builtins.float(a)


def sym_int(a):
    """int(a), truncating towards zero."""
    return builtins.int(a)


def _floats_win(a, b, result):
    return builtins.float(result) if isinstance(a, float) or isinstance(b, float) else result


def sym_max(a, b):
    """max(a, b); a float if either is a float."""
    return _floats_win(a, b, builtins.max(_number("sym_max", a), _number("sym_max", b)))


def sym_min(a, b):
    """min(a, b); a float if either is a float."""
    return _floats_win(a, b, builtins.min(_number("sym_min", a), _number("sym_min", b)))


def sym_not(a):
    """not a."""
    return not a


def sym_ite(b, t, f):
    """t if b else f."""
    return t if b else f


def sym_sqrt(a):
    """math.sqrt(a)."""
    return math.sqrt(a)


def sym_sum(args):
    """sum(args) (0 for none)."""
    return builtins.sum(args)

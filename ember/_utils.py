"""Small helpers shared by the op modules: dims and sizes as torch accepts them, and warnings
that point at the user's line."""
import operator
import os
import sys
import warnings

__all__ = ["wrap_dim", "wrap_dims", "parse_size", "warn"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def wrap_dim(dim, ndim):
    """A possibly negative `dim` as an index in [0, ndim); 0-d tensors accept -1 and 0."""
    try:
        dim = operator.index(dim)
    except TypeError:
        raise TypeError(f"dim must be an int, got {type(dim).__name__}") from None
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def wrap_dims(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims: None means all, an int means one."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        dims = tuple(wrap_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            repeated = next(d for d in dims if dims.count(d) > 1)
            raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
        return tuple(sorted(dims)) if ndim else ()
    dim = wrap_dim(dim, ndim)
    return (dim,) if ndim else ()


def parse_size(args, name="size"):
    """Sizes given as `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(ember.Size([2, 3]))`."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    elif len(args) == 1 and hasattr(args[0], "shape") and hasattr(args[0], "tolist"):
        args = args[0].tolist()  # a 1-d integer tensor of sizes
    for s in args:  # plain ints (nearly always): no conversion (a loop, not a generator)
        if type(s) is not int:
            break
    else:
        return tuple(args)
    try:
        size = tuple(operator.index(s) for s in args)
    except TypeError:
        types = ", ".join(type(s).__name__ for s in args)
        raise TypeError(f"{name} must be a tuple of ints, but got ({types})") from None
    return size


def warn(message, category=UserWarning):
    """warnings.warn, attributed to the first caller outside ember (as torch's C++ warnings are
    to the Python line that called into torch), however many ember frames lie between."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)

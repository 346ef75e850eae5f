"""ember.compiler (torch.compiler): the questions and switches programs use around
`ember.compile`. ember compiles nothing (see _compile.py), so `is_compiling()` is False and
`disable`, `allow_in_graph`, `assume_constant_result` return their function unchanged."""
__all__ = ["is_compiling", "is_dynamo_compiling", "disable", "reset", "allow_in_graph",
           "assume_constant_result"]


def is_compiling():
    """False: ember never traces a function to compile it."""
    return False


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """`@disable` or `disable(fn)`: the function itself (nothing is compiled anyway)."""
    if fn is None:
        return lambda f: f
    return fn


def reset():
    """Nothing to forget: ember keeps no compiled code."""


def allow_in_graph(fn):
    """The function itself."""
    return fn


def assume_constant_result(fn):
    """The function itself."""
    return fn

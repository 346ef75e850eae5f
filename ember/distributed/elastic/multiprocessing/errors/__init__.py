"""`record`: torchrun's decorator for a script's entry point.

    @record
    def main(): ...

Under torchrun it writes an uncaught exception to the agent's error file. ember's launcher
has no agent: each rank's bootstrap (`ember/distributed/_bootstrap.py`) prints the error and
the rank, and the launcher's summary names it; so `record` only calls the function and lets
its exceptions through (and `error_handler`, the writer of that file, has nothing to do).
"""
__all__ = ["record"]


def record(fn=None, error_handler=None):
    """Decorate a script's main function (with or without arguments): it is returned as it
    is, see the module doc."""
    if fn is None:
        return lambda f: f
    return fn

"""ember.jit (torch.jit): TorchScript's decorators, as pass-throughs.

ember runs Python and compiles nothing, so `script` and `trace` return what they are given
(a module stays the same module, a function the same function: the results are those of
eager execution, which is what TorchScript promises to reproduce), and `ignore`, `unused`,
`export`, `interface`, `script_if_tracing` ... leave their function as it is.
`is_scripting()` and `is_tracing()` are False, so code that branches on them takes the eager
path. What needs a TorchScript program -- `save`, `load` -- raises NotImplementedError.
`isinstance(m, ember.jit.ScriptModule)` is always False: nothing here is a script module.
"""
import contextlib
import typing
import warnings

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "interface",
           "is_scripting", "is_tracing", "script_if_tracing", "script_method", "annotate",
           "Attribute", "Final", "save", "load", "freeze", "optimize_for_inference", "fork",
           "wait", "optimized_execution", "fuser", "strict_fusion", "set_fusion_strategy",
           "enable_onednn_fusion", "onednn_fusion_enabled", "ScriptModule", "ScriptFunction",
           "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule", "Error",
           "TracerWarning", "ScriptWarning", "Future"]

Final = typing.Final


class Error(RuntimeError):
    """torch.jit.Error: raised by TorchScript programs (never by ember)."""


class TracerWarning(Warning):
    """torch.jit.TracerWarning: a warning from tracing (never issued by ember)."""


class ScriptWarning(Warning):
    """torch.jit.ScriptWarning: a warning from scripting (never issued by ember)."""


class ScriptModule:
    """torch.jit.ScriptModule: no ember object is one (script returns modules unchanged)."""


class RecursiveScriptModule(ScriptModule):
    """torch.jit.RecursiveScriptModule: no ember object is one."""


class TracedModule(ScriptModule):
    """torch.jit.TracedModule: no ember object is one (trace returns modules unchanged)."""


class TopLevelTracedModule(TracedModule):
    """torch.jit.TopLevelTracedModule: no ember object is one."""


class ScriptFunction:
    """torch.jit.ScriptFunction: no ember object is one."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Returns `obj` itself: ember runs it as Python, with eager semantics."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Returns `func` itself: ember records no trace, so data-dependent control flow keeps
    working (a real trace would freeze the path taken for `example_inputs`)."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-05, strict=True, _force_outplace=False,
                 _module_class=None, _compilation_unit=None, example_inputs_is_kwarg=False,
                 _store_inputs=True):
    """Returns `mod` itself (see `trace`)."""
    return mod


def ignore(drop=False, **kwargs):
    """`@ignore` or `@ignore(drop=True)`: the function stays as it is."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """`@unused`: the function stays as it is."""
    return fn


def export(fn):
    """`@export`: the method stays as it is."""
    return fn


def interface(obj):
    """`@interface`: the class stays as it is."""
    return obj


def script_if_tracing(fn):
    """The function itself (ember never traces)."""
    return fn


def script_method(fn):
    """The method itself."""
    return fn


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A block with TorchScript's optimisations on or off: nothing changes in ember."""
    yield


@contextlib.contextmanager
def fuser(name):
    """A block using TorchScript fuser `name`: nothing changes in ember."""
    yield


@contextlib.contextmanager
def strict_fusion():
    """A block whose ops TorchScript must fuse: nothing to check in ember."""
    yield


_fusion_strategy = [("STATIC", 2), ("DYNAMIC", 10)]
_onednn_fusion = False


def set_fusion_strategy(strategy):
    """Record TorchScript's fusion strategy; returns the previous one (it changes nothing)."""
    global _fusion_strategy
    previous, _fusion_strategy = _fusion_strategy, list(strategy)
    return previous


def enable_onednn_fusion(enabled):
    """Record the oneDNN-fusion switch (ember has no oneDNN)."""
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled():
    """The recorded oneDNN-fusion switch."""
    return _onednn_fusion


def is_scripting():
    """False: ember code always runs eagerly."""
    return False


def is_tracing():
    """False: ember never traces."""
    return False


def annotate(the_type, the_value):
    """`the_value`: a type hint for TorchScript, nothing at run time."""
    return the_value


def Attribute(value, type):  # noqa: N802 -- torch's name
    """`value`: a type hint for TorchScript module attributes, nothing at run time."""
    return value


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """The module itself (there is no script graph to freeze)."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """The module itself (there is no script graph to optimise)."""
    return mod


class Future:
    """The result of `fork`: already computed (ember runs the call at once)."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        """The call's result."""
        return self._value

    def done(self):
        """True: the call has run."""
        return True


def fork(func, *args, **kwargs):
    """Run `func(*args, **kwargs)` now and return its result as a Future."""
    return Future(func(*args, **kwargs))


def wait(future):
    """The result of a `fork`."""
    return future.wait()


def save(m, f, _extra_files=None):
    """Not supported: a TorchScript file holds a compiled program, which ember cannot make."""
    raise NotImplementedError("ember.jit.save: ember does not compile TorchScript, so there is "
                              "no script program to save; save the weights with "
                              "ember.save(model.state_dict(), f) instead")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Not supported: running a TorchScript file needs TorchScript's interpreter."""
    raise NotImplementedError("ember.jit.load: ember cannot run TorchScript programs; load a "
                              "state_dict saved with torch.save into the model's Python "
                              "class instead")

"""`ember.compile` and `Module.compile()`: accepted, checked, and not compiling.

torch.compile traces a model into graphs and generates fused kernels; the results are meant
to equal eager execution. ember has no compiler: running the model eagerly *is* a valid
implementation of that contract, so `compile` checks its arguments as torch does (unknown
keywords are a TypeError, a bad `mode` or `backend` a RuntimeError) and returns

  * for an nn.Module: an `OptimizedModule` wrapping it as `_orig_mod`, as torch's does (its
    state_dict keys start with `_orig_mod.`, attributes are looked up on the wrapped model);
  * for a function: a wrapper that calls it;
  * with `model=None`: a decorator doing the above.

No speed is gained; nothing is traced, so no recompilation can happen either.
"""
import functools

from .nn.modules.module import Module

__all__ = ["compile", "OptimizedModule"]

_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "aot_eager_decomp_partition",
             "onnxrt", "openxla", "tvm")


class OptimizedModule(Module):
    """What `ember.compile(module)` returns: calls the wrapped module (`_orig_mod`)."""

    def __init__(self, mod):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        """The wrapped module's call, hooks included."""
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def _check(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if isinstance(backend, str) and backend not in _BACKENDS:
        raise RuntimeError(f"Invalid backend: {backend!r}, see `torch._dynamo.list_backends()`"
                           " for available backends.")
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise RuntimeError(f"Invalid backend: {backend!r}")


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,  # noqa: A001
            options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """torch.compile's signature and checks; returns `model` run eagerly (no compilation:
    see this module's docstring). `disable=True` returns `model` itself, as torch does."""
    _check(backend, mode, options)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, name=name,
                                 disable=disable, recompile_limit=recompile_limit,
                                 isolate_recompiles=isolate_recompiles, shapes_spec=shapes_spec)
    if not callable(model):
        raise RuntimeError("torch.compile() expects a callable, got "
                           f"{type(model).__name__}")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return model(*args, **kwargs)
    return compiled

"""functional_call: run a module with some parameters and buffers replaced by given tensors.

    out = functional_call(model, {"fc.weight": w}, (x,))

swaps the tensors into the module's registries for the duration of the call and swaps the
originals back afterwards (even if the call raises). With tie_weights=True (the default), a
tensor given for one name of a tied weight replaces all its names. This is what meta-learning
and per-sample-gradient code use to treat a model as a function of its weights.

Read next: `ember/optim/` (the optimizers).
"""
import warnings
from contextlib import contextmanager

from ..._tensor import Tensor

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """`module(*args, **kwargs)` with the named tensors swapped in (torch.func.functional_call
    is the same function without this deprecation warning)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                     tie_weights=True, strict=False):
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights, strict):
        return module(*args, **kwargs)


def _untie(module, tensors):
    """Extend `tensors` so that a tensor given for one name of a tied weight covers all."""
    everything = dict(module.named_parameters(remove_duplicate=False))
    everything.update(module.named_buffers(remove_duplicate=False))
    names_of = {}
    for name, tensor in everything.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    untied = dict(tensors)
    for given in [name for name in tensors if name in tied]:
        names = tied[given]
        values = {id(tensors[n]) for n in names if n in tensors}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
        for name in names:
            untied[name] = tensors[given]
    return untied


def _check_keys(module, tensors):
    known = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    known |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    unexpected = sorted(set(tensors) - known)
    missing = sorted(known - set(tensors))
    errors = []
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
            module._get_name(), "\n\t".join(errors)))


@contextmanager
def _reparametrize_module(module, tensors, tie_weights=False, strict=False):
    if tie_weights:
        tensors = _untie(module, tensors)
    if strict:
        _check_keys(module, tensors)
    originals = {}
    try:
        for name, tensor in tensors.items():
            originals[name] = _swap(module, name, tensor)
        yield
    finally:
        for name, original in reversed(originals.items()):
            _swap(module, name, original)


_MISSING = object()


def _swap(module, name, tensor):
    """Put `tensor` at the dotted `name` (straight into the registry: it need not be a
    Parameter); returns what was there (_MISSING if nothing)."""
    if tensor is not _MISSING and tensor is not None and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    path, _, attr = name.rpartition(".")
    owner = module.get_submodule(path)
    for registry in (owner._parameters, owner._buffers):
        if attr in registry:
            old = registry[attr]
            registry[attr] = tensor
            return old
    old = getattr(owner, attr, _MISSING)
    if tensor is _MISSING:
        delattr(owner, attr)
    else:
        setattr(owner, attr, tensor)
    return old

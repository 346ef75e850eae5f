"""Modules as functions of their parameters: functional_call, stack_module_state and
replace_all_batch_norm_modules_.

    params = {k: v.detach() for k, v in model.named_parameters()}
    loss = functional_call(model, params, (x,))     # model run with `params` in place of its own

`functional_call` swaps the given tensors into the modules' `_parameters` / `_buffers` (or sets
them as attributes) for one call and puts the originals back, so the tensors may be anything a
transform hands in: leaves made by `grad`, BatchedTensors of `vmap` (model ensembles:
`stack_module_state` gives the stacked parameters to vmap over), dual tensors of `jvp`.

Read next: `tests/test_func.py`.
"""
import contextlib

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]

_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """torch.func.functional_call: `module(*args, **kwargs)` with the named tensors in place of
    its parameters and buffers. With tie_weights, a tensor given for one of several tied names
    replaces all of them; with strict, every parameter and buffer must be given, and nothing
    else."""
    values = _merged(parameter_and_buffer_dicts)
    if tie_weights:
        values = _with_tied(module, values)
    if strict:
        _check_strict(module, values)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values):
        return module(*args, **(kwargs or {}))


def _merged(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    merged = {}
    for d in dicts:
        repeated = sorted(set(merged) & set(d))
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        merged.update(d)
    return merged


def _tied_groups(module):
    """Lists of names that share one parameter or buffer object (a tied weight)."""
    names = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), []).append(name)
    return [group for group in names.values() if len(group) > 1]


def _with_tied(module, values):
    out = dict(values)
    for group in _tied_groups(module):
        given = [n for n in group if n in values]
        if not given:
            continue
        if any(values[n] is not values[given[0]] for n in given):
            raise ValueError(f"functional_call got multiple values for keys {sorted(given)}, "
                             "which are tied. Consider using tie_weights=False")
        for n in group:
            out[n] = values[given[0]]
    return out


def _check_strict(module, values):
    expected = {n for n, _ in module.named_parameters(remove_duplicate=False)} | {
        n for n, _ in module.named_buffers(remove_duplicate=False)}
    errors = []
    unexpected = sorted(set(values) - expected)
    missing = sorted(expected - set(values))
    if unexpected:
        errors.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
    if missing:
        errors.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
    if errors:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                           + "\n\t".join(errors))


@contextlib.contextmanager
def _swapped(module, values):
    """The named tensors in place of the modules' own for the block; the originals after."""
    saved = []
    try:
        for name, value in values.items():
            owner, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner) if owner else module
            saved.append((owner, attr, _swap(owner, attr, value)))
        yield
    finally:
        for owner, attr, (where, old) in reversed(saved):
            if where is None:
                if old is _MISSING:
                    delattr(owner, attr)
                else:
                    object.__setattr__(owner, attr, old)
            else:
                where[attr] = old


def _swap(owner, attr, value):
    """Put `value` at `owner.attr`; (registry or None, old value) to put it back."""
    for registry in (owner._parameters, owner._buffers):
        if attr in registry:
            old = registry[attr]
            registry[attr] = value
            return registry, old
    old = owner.__dict__.get(attr, _MISSING)
    object.__setattr__(owner, attr, value)
    return None, old


def stack_module_state(models):
    """torch.func.stack_module_state: ({name: stacked parameters}, {name: stacked buffers})
    of like modules, for vmap over model ensembles; the stacked parameters are new leaves that
    require grad as the originals do."""
    from ..ops.shape import stack

    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    params = {}
    for name, p in models[0].named_parameters():
        members = [dict(m.named_parameters())[name] for m in models]
        wants = {t.requires_grad for t in members}
        if len(wants) != 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        params[name] = stack([t.detach() for t in members]).requires_grad_(wants.pop())
    buffers = {name: stack([dict(m.named_buffers())[name] for m in models])
               for name, _ in models[0].named_buffers()}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """torch.func.replace_all_batch_norm_modules_: every batch norm in `root` stops keeping
    running statistics (so vmap over it sees no shared buffer to update); returns root."""
    from ..nn.modules.batchnorm import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root

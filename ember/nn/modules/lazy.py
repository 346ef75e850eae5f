"""`LazyModuleMixin`: modules whose parameter shapes come from their first input.

A lazy module (LazyLinear, LazyConv2d, LazyBatchNorm1d, ...) starts with
`UninitializedParameter`/`UninitializedBuffer` placeholders (parameter.py) and a forward
pre-hook. The first call runs `initialize_parameters(*input)` -- which materializes the
placeholders with the input's sizes and resets them with the layer's usual init -- removes the
hook and turns the module into its `cls_to_become` (LazyLinear becomes a Linear). Loading a
state_dict into a lazy module materializes the placeholders with the checkpoint's shapes
first; the module still becomes its ordinary class at its first call, as in torch.

Read next: `linear.py`, `conv.py`, `batchnorm.py`, `instancenorm.py` (the lazy layers).
"""
from ..parameter import UninitializedTensorMixin

__all__ = ["LazyModuleMixin"]


def is_lazy(value):
    """Whether `value` is a not-yet-materialized placeholder (UninitializedParameter or
    UninitializedBuffer)."""
    return isinstance(value, UninitializedTensorMixin)


class LazyModuleMixin:
    """Mixed in before a Module class: placeholders until the first forward (see above)."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module is still a placeholder."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in tensors)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the placeholders from the first input (each lazy layer defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """Placeholders are saved as themselves (they have nothing to detach)."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars or is_lazy(param) else \
                    param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars or is_lazy(buf) else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        """Give each placeholder the shape of the checkpoint's tensor, so it can be copied."""
        for registry in (self._parameters, self._buffers):
            for name, value in registry.items():
                key = prefix + name
                if is_lazy(value) and key in state_dict and not is_lazy(state_dict[key]):
                    value.materialize(state_dict[key].shape)

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


def _infer_parameters(module, args, kwargs):
    """The forward pre-hook: initialize from this first input, then become the plain layer."""
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook
    del module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become

"""Weight normalisation, the classic hook form: w = g * v / ||v||  (Salimans & Kingma, 2016).

`weight_norm(module, "weight", dim=0)` replaces the parameter `weight` by two parameters,
`weight_g` (the magnitude: one norm per slice along `dim`, kept as a size-1-elsewhere tensor)
and `weight_v` (the direction), and registers a forward pre-hook that recomputes `weight`
from them before every forward. `dim=None` (or -1, torch's quirk) uses one norm for the whole
tensor. torch deprecates this form in favour of `parametrizations.weight_norm`, whose
state_dict is compatible with this one.

Read next: `spectral_norm.py`.
"""
import warnings

from ..._utils import wrap_dim
from ...linalg import vector_norm
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, pow=2, dim=0):
    """torch.norm_except_dim: the p-norm over every dim but `dim` (kept as size 1), or over
    everything (a 0-d tensor) when dim == -1."""
    if dim == -1:
        return vector_norm(v, pow)
    dim = wrap_dim(dim, v.ndim)
    others = tuple(d for d in range(v.ndim) if d != dim)
    if not others:  # a 1-D tensor: the norm of each single element
        return v.abs()
    return vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: v * (g / ||v||), the norm taken as in `_norm_except_dim`."""
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook: sets `module.<name>` from `<name>_g` and `<name>_v`."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        """`<name>_v * <name>_g / ||<name>_v||`, the norm over every dimension but `dim`."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        """Reparametrise `module.<name>` as the parameters `<name>_g` (its norm) and `<name>_v` (its
        direction) and add the pre-hook that recomputes it; returns the hook. Raises RuntimeError if
        `name` already has one."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        # a plain attribute (not a parameter), recomputed by the hook before each forward
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Undo the reparametrisation: `<name>` becomes a plain Parameter with the current weight,
        `<name>_g` and `<name>_v` are deleted."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrise `module.<name>` as `<name>_g * <name>_v / ||<name>_v||`."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Fold `<name>_g` and `<name>_v` back into one parameter `<name>`."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")

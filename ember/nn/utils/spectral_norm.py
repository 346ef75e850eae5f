"""Spectral normalisation, the classic hook form: w = w_orig / sigma(w_orig)  (Miyato et al.).

sigma, the largest singular value of the weight seen as a matrix (dim `dim` first, the rest
flattened), is estimated by power iteration on two persistent buffers, `weight_u` (left) and
`weight_v` (right singular vector estimates):

    v = normalize(W^T u);  u = normalize(W v)     (n_power_iterations times, training only)
    sigma = u . (W v)

The parameter becomes `weight_orig`; a forward pre-hook sets the plain attribute `weight`
before each forward. The state_dict records a version in `_metadata` ("spectral_norm"), and a
load pre-hook converts checkpoints from before torch 1.1 (which saved `weight` but no
`weight_v`) by solving for v.

Read next: `parametrize.py` (the newer, general mechanism).
"""
from ... import linalg
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    """F.normalize(x, dim=0) for a vector: x / max(||x||, eps)."""
    return x / x.norm().clamp_min(eps)


class SpectralNorm:
    """The forward pre-hook, holding the settings."""

    _version = 1  # 0: before torch 1.1 (no weight_v)

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a matrix: dimension `dim` moved first, the others flattened into columns.
        """
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        """`weight_orig / sigma`, sigma estimated from the `u`, `v` buffers; with
        do_power_iteration, first refine u and v in place (`n_power_iterations` steps, no gradient).
        """
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # in place: the buffers carry the estimate to the next forward
                    v.copy_(_normalize(weight_mat.t().mv(u), self.eps))
                    u.copy_(_normalize(weight_mat.mv(v), self.eps))
                # copies, so that the next in-place update does not touch what backward saved
                u = u.clone()
                v = v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module):
        """Undo the reparametrisation: `weight` becomes a plain Parameter holding the current
        normalised weight, and `weight_orig`, `weight_u`, `weight_v` are deleted."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        """The v with W v parallel to u (least squares), scaled so that u . W v = sigma."""
        v = linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                              u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / u.dot(weight_mat.mv(v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Reparametrise `module.<name>`: move it to `<name>_orig`, add the `<name>_u`/`<name>_v`
        buffers (random unit vectors) and the pre-hook and state_dict hooks; returns the hook.
        Raises RuntimeError if `name` already has one."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = _normalize(weight.new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.new_empty(w).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward replaces it with the normalised weight
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a version-0 checkpoint (weight_orig, weight, weight_u) to the current one."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and key not in state_dict and \
                all(key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # a current state_dict that lost its metadata
        missing = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(weight_mat, state_dict[key + "_u"],
                                                             sigma)


class SpectralNormStateDictHook:
    """Records the format version in the state_dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


def _default_dim(module):
    """Transposed convolutions keep output channels in dim 1."""
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide `module.<name>` by its spectral norm before every forward."""
    SpectralNorm.apply(module, name, n_power_iterations,
                       _default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Make the current normalised weight a plain parameter again."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in hooks.items():
            hook = getattr(hook, "hook", hook)  # load pre-hooks are wrapped
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[key]
                break
    return module

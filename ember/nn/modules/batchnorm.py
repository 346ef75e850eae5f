"""BatchNorm1d/2d/3d and SyncBatchNorm: per-channel normalization with running statistics.

In training, each channel is standardized with the batch's mean and (biased) variance, and the
buffers move towards them:

    running_mean = (1 - momentum) * running_mean + momentum * batch_mean
    running_var  = (1 - momentum) * running_var  + momentum * batch_var * n / (n - 1)

with momentum=None meaning a cumulative average (momentum = 1 / num_batches_tracked). In eval
the running statistics are used. Without track_running_stats there are no buffers and batch
statistics are used in both modes.

SyncBatchNorm shares the statistics of a training batch across the ranks of a process group
(the autograd function is in `_functions.py`).

`_NormBase` is shared with InstanceNorm (instancenorm.py). Its `_version = 2` is torch's: a
state_dict saved before version 2 has no `num_batches_tracked`, and loading it fills that key
with the current value (0 for a fresh layer) instead of reporting it missing.

Read next: `instancenorm.py`.
"""
from ... import _creation, distributed
from ... import _dtype as dt
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter
from . import _functions
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import affine_parameters, reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d"]


class _NormBase(Module):
    """Parameters (weight = 1, bias = 0 when affine) and buffers (running_mean = 0,
    running_var = 1, num_batches_tracked = 0 when track_running_stats) of BatchNorm and
    InstanceNorm."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        factory = {"device": device, "dtype": dtype}
        affine_parameters(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, **factory))
            self.register_buffer("running_var", _creation.ones(num_features, **factory))
            self.register_buffer("num_batches_tracked",
                                 _creation.tensor(0, dtype=dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            # checkpoints from before version 2 have no counter: keep ours instead of failing
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None \
                else _creation.tensor(0, dtype=dt.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        return self._batch_norm(input)

    def _batch_norm(self, input):
        factor = self._count_batch()
        # batch statistics in training, and in eval when there are no buffers
        use_batch_stats = self.training or (self.running_mean is None and
                                            self.running_var is None)
        # buffers are passed only when they are to be updated (training and tracked) or used
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


    def _count_batch(self):
        """Count a training batch; returns the factor the running statistics move by."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        return factor


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs."""

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class SyncBatchNorm(_BatchNorm):
    """BatchNorm whose training statistics are those of the whole batch across the ranks of
    `process_group` (default: the world), through `_functions.SyncBatchNorm`. Without an
    initialised process group, with one rank, or in eval, it is plain batch normalization.
    Unlike torch, which syncs only GPU tensors, ember syncs CPU tensors too (over MPI)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")

    def forward(self, input):
        """Batch norm with the group's statistics in training, else plain batch norm."""
        self._check_input_dim(input)
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        group = self._sync_group()
        if group is None:
            return self._batch_norm(input)
        factor = self._count_batch()
        tracked = self.track_running_stats
        return _functions.SyncBatchNorm.apply(
            input, self.weight, self.bias, self.running_mean if tracked else None,
            self.running_var if tracked else None, self.eps, factor, group,
            distributed.get_world_size(group))

    def _sync_group(self):
        """The group to share statistics with, or None when there is nothing to share."""
        if not self.training or not distributed.is_initialized():
            return None
        group = self.process_group or distributed.group.WORLD
        return group if distributed.get_world_size(group) > 1 else None

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """A copy of `module`'s tree with every BatchNorm*d replaced by a SyncBatchNorm that
        shares its parameters and buffers."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None or not module.affine)
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


# ----------------------------------------------------------------------------------------------
# lazy norms (shared with instancenorm.py): num_features from the first input's dim 1


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A norm layer with num_features = input.shape[1] (torch reads dim 1 for every lazy norm,
    unbatched instance norm inputs included)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, False, False, bias=bias)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype) if bias else None
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=dt.int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Materialize the weights and statistics for input.shape[1] features."""
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        with no_grad():
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None:
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose num_features comes from its first input."""

    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose num_features comes from its first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose num_features comes from its first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim

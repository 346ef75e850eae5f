"""DistributedDataParallel: one model per rank, gradients averaged over the ranks in backward.

    model = DistributedDataParallel(model)      # rank 0's parameters and buffers everywhere
    loss = loss_fn(model(x_of_this_rank), y)    # forward: buffers synced from rank 0 first
    loss.backward()                             # gradients averaged (buckets, _reducer.py)
    optimizer.step()                            # the same step on every rank

    with model.no_sync():                       # accumulate locally, no communication...
        loss_fn(model(x1), y1).backward()
    loss_fn(model(x2), y2).backward()           # ...then one synchronized backward

With per-rank batches of B/N, N ranks compute the gradient of the mean loss over B: the same
training as one process with batch B. The wrapper is a Module whose only child is `module`,
so `state_dict()` keys start with "module.", as torch's.

What differs from torch: buckets are not rebuilt after the first iteration; there are no
communication hooks (`register_comm_hook`) and no `join()` for uneven inputs; `static_graph`
is served by the same per-iteration search as find_unused_parameters (the same results).

Read next: `ember/nn/modules/_functions.py` (SyncBatchNorm's cross-rank statistics).
"""
import contextlib
import warnings

from ... import distributed as dist
from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...distributed.utils import _broadcast_coalesced
from ..modules.module import Module
from ._reducer import FIRST_BUCKET_BYTES, MB, Reducer

__all__ = ["DistributedDataParallel"]

class DistributedDataParallel(Module):
    """Data parallelism over the ranks of `process_group` (see the module doc)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        _refuse_unsupported(delay_all_reduce_named_params, param_to_hook_all_reduce,
                            mixed_precision, device_mesh, skip_all_reduce_unused_params)
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is "
                          "deprecated. Please avoid using it.", FutureWarning, stacklevel=2)
        self.module = module
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        if self.process_group is None:
            dist.get_rank()  # raises torch's "Default process group has not been initialized"
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        self.device = params[0].device
        self.device_ids, self.output_device = _devices(device_ids, output_device, params)
        self.dim = dim
        init_buffers = self._buffer_sync_flags(broadcast_buffers, forward_sync_buffers)
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.batched_grad_copy = batched_grad_copy  # a speed hint in torch; copies are per bucket
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        caps = _bucket_caps(bucket_cap_mb, bucket_cap_mb_list)
        self.bucket_bytes_cap = max(caps)
        if init_sync:
            _verify_param_shapes(self.process_group, params)
            self._sync_module_states(include_buffers=init_buffers)
        self.reducer = Reducer(params, self.process_group, caps, gradient_as_bucket_view,
                               find_unused_parameters or static_graph)

    def _buffer_sync_flags(self, broadcast_buffers, forward_sync_buffers):
        """Set `forward_sync_buffers`; return whether buffers join the initial broadcast
        (torch 2.13: broadcast_buffers is deprecated, and False also skips that)."""
        if broadcast_buffers is not None:
            warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead."
                          if forward_sync_buffers is None else
                          "Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
                          "`broadcast_buffers` is deprecated and its value is ignored when "
                          "`forward_sync_buffers` is provided.", FutureWarning, stacklevel=3)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            return True
        self.forward_sync_buffers = True if broadcast_buffers is None else broadcast_buffers
        return self.forward_sync_buffers

    @property
    def broadcast_buffers(self):
        """Whether buffers are broadcast from rank 0 before each forward (deprecated name of
        forward_sync_buffers)."""
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value):
        self.forward_sync_buffers = value

    def forward(self, *inputs, **kwargs):
        """Run the module on this rank's inputs; arm the gradient averaging of the backward
        that follows (unless in `no_sync()` or without grad)."""
        self.reducer.check_prior_reduction_finished()
        if self.require_forward_param_sync and self.forward_sync_buffers:
            _broadcast_coalesced(self.process_group, list(self.module.buffers()))
        if self.device_ids:
            inputs, kwargs = _to_device((inputs, kwargs), self.device)
        outputs = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(outputs)
        return outputs

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, forward+backward only accumulate gradients locally; the first synchronized
        backward after it averages the accumulated sums."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def _set_static_graph(self):
        """torch's way to declare a static graph after construction."""
        self.static_graph = True
        self.reducer.find_unused = True

    def _sync_module_states(self, include_buffers):
        tensors = [p for p in self.module.parameters()]
        if include_buffers:
            tensors += [b for b in self.module.buffers()]
        _broadcast_coalesced(self.process_group, tensors)


def _refuse_unsupported(delay_all_reduce_named_params, param_to_hook_all_reduce,
                        mixed_precision, device_mesh, skip_all_reduce_unused_params):
    given = {"delay_all_reduce_named_params": delay_all_reduce_named_params,
             "param_to_hook_all_reduce": param_to_hook_all_reduce,
             "mixed_precision": mixed_precision, "device_mesh": device_mesh,
             "skip_all_reduce_unused_params": skip_all_reduce_unused_params or None}
    named = [name for name, value in given.items() if value is not None]
    if named:
        raise NotImplementedError(f"DistributedDataParallel: ember does not implement "
                                  f"{', '.join(named)}")


def _devices(device_ids, output_device, params):
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise ValueError(f"DistributedDataParallel: ember supports modules on one device, got "
                         f"parameters on {sorted(map(str, devices))}")
    device = devices.pop()
    if device.type == "cpu" or not device_ids:
        if device_ids or output_device is not None:
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments "
                             f"only work with single-device/multiple-device GPU modules or CPU "
                             f"modules, but got device_ids {device_ids}, output_device "
                             f"{output_device}, and module parameters {{{device!r}}}.")
        return None, None
    ids = [d.index if hasattr(d, "index") else int(d) for d in device_ids]
    if len(ids) != 1 or ids[0] != (device.index or 0):
        raise ValueError(f"DistributedDataParallel: device_ids {device_ids} must be the one GPU "
                         f"the module is on ({device})")
    return ids, ids[0] if output_device is None else output_device


def _bucket_caps(bucket_cap_mb, bucket_cap_mb_list):
    """Byte caps of the successive buckets: torch's 1 MiB first bucket then 25 MiB by
    default, else the given cap (or list of caps)."""
    if bucket_cap_mb_list:
        return [int(cap * MB) for cap in bucket_cap_mb_list]
    if bucket_cap_mb is None:
        return [FIRST_BUCKET_BYTES, 25 * MB]
    return [int(bucket_cap_mb * MB)]


def _verify_param_shapes(group, params):
    """Every rank must hold a model with the same parameter shapes (torch's check)."""
    mine = [(tuple(p.shape), p.dtype.name) for p in params]
    everyone = [None] * dist.get_world_size(group)
    dist.all_gather_object(everyone, mine, group=group)
    for rank, theirs in enumerate(everyone):
        if len(theirs) != len(mine):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank "
                               f"{dist.get_rank(group)} has {len(mine)} params, while rank "
                               f"{rank} has inconsistent {len(theirs)} params.")
        for i, (a, b) in enumerate(zip(mine, theirs)):
            if a != b:
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank "
                                   f"{dist.get_rank(group)} has parameter {i} of shape and dtype "
                                   f"{a}, while rank {rank} has {b}.")


def _to_device(value, device):
    """Tensors in nested tuples, lists and dicts moved to `device` (what torch's DDP does with
    the inputs of a single-GPU module)."""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value

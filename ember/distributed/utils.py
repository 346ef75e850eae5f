"""Helpers shared by DDP and ZeroRedundancyOptimizer: broadcasting many tensors at once.

    _broadcast_coalesced(group, tensors, src)   # rank src's values in every rank's tensors

One collective per flat buffer (one per dtype and device, up to 250 MiB, torch's
broadcast_bucket_size) instead of one per tensor: DDP's buffers before each forward, the
parameters at construction, ZeRO's updated shards after each step.

Read next: `optim/zero_redundancy_optimizer.py`.
"""
from .._backend import namespace
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import distributed_c10d as c10d

__all__ = []

BROADCAST_BUCKET_BYTES = 250 * 1024 * 1024


def _broadcast_coalesced(group, tensors, src=0, bucket_bytes=BROADCAST_BUCKET_BYTES):
    """Broadcast `tensors` from global rank `src`, in place, a flat buffer at a time."""
    if c10d.get_world_size(group) == 1 or not tensors:
        return
    batches = {}
    for t in tensors:
        runs = batches.setdefault((t.dtype, t.device), [[]])
        if runs[-1] and sum(x.nbytes for x in runs[-1]) + t.nbytes > bucket_bytes:
            runs.append([])
        runs[-1].append(t)
    with no_grad():
        for runs in batches.values():
            for run in runs:
                _broadcast_flat(group, run, src)


def _broadcast_flat(group, tensors, src):
    flat = namespace(tensors[0].device).concatenate([t._data.reshape(-1) for t in tensors])
    c10d.broadcast(Tensor._make(flat, device=tensors[0].device), src, group=group)
    start = 0
    for t in tensors:
        t._data[...] = flat[start:start + t.numel()].reshape(t._data.shape)
        t._bump_version()
        start += t.numel()

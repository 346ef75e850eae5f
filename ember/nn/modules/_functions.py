"""SyncBatchNorm's autograd function: batch statistics over the ranks of a process group.

Forward: each rank computes its per-channel mean and (biased) variance and its element
count; one all-gather gives every rank all of them, and the group's statistics follow from
the counts:

    mean = sum_r n_r m_r / N        var = sum_r n_r (v_r + (m_r - mean)^2) / N

so every rank normalizes with the statistics of the whole global batch and moves the running
statistics identically (running_var with the unbiased var * N / (N - 1)). Backward needs two
sums over the global batch, sum(dy) and sum(dy * (x - mean)), per channel; one all-reduce
gives them:

    dx = (dy - sum(dy) / N - (x - mean) * invstd^2 * sum(dy * (x - mean)) / N) * invstd * w

The weight and bias gradients stay local sums, which DDP then averages like any gradient.
The statistics are computed in float32 for float16 and bfloat16 inputs, as torch does.

Read next: `batchnorm.py`, the module that calls it.
"""
from ... import _dtype as dt
from ... import distributed as dist
from ...autograd.function import Function
from ...ops.shape import cat

__all__ = ["SyncBatchNorm"]


def _per_channel(t, ndim):
    """A (C,) tensor shaped to broadcast against an (N, C, ...) input."""
    return t.reshape((1, -1) + (1,) * (ndim - 2))


class SyncBatchNorm(Function):
    """The cross-rank batch normalization of `SyncBatchNorm` in training."""

    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        """Normalize with the group's batch statistics (see the module doc)."""
        channels, dims = input.shape[1], [0] + list(range(2, input.ndim))
        x = input.float() if input.dtype in (dt.float16, dt.bfloat16) else input
        count = x.numel() // channels
        if count:
            stats = [x.mean(dims), x.var(dims, correction=0)]
        else:  # an empty batch here: it adds nothing to the group's statistics
            stats = [x.new_zeros(channels), x.new_zeros(channels)]
        mine = cat(stats + [x.new_full((1,), float(count))])
        everyone = x.new_empty((world_size, 2 * channels + 1))
        dist.all_gather_into_tensor(everyone, mine, group=process_group)
        means, variances = everyone[:, :channels], everyone[:, channels:2 * channels]
        counts = everyone[:, 2 * channels:]
        total = counts.sum()
        mean = (means * counts).sum(0) / total
        var = ((variances + (means - mean) ** 2) * counts).sum(0) / total
        invstd = (var + eps).rsqrt()
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(momentum * mean.to(running_mean.dtype))
        if running_var is not None:
            unbiased = var * (total / (total - 1)) if float(total) > 1 else var
            running_var.mul_(1 - momentum).add_(momentum * unbiased.to(running_var.dtype))
        ctx.save_for_backward(input, weight, mean, invstd, total)
        ctx.process_group = process_group
        out = (x - _per_channel(mean, x.ndim)) * _per_channel(invstd, x.ndim)
        if weight is not None:
            out = out * _per_channel(weight, x.ndim) + _per_channel(bias, x.ndim)
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        """The input gradient from the group's two sums; local weight and bias sums."""
        input, weight, mean, invstd, total = ctx.saved_tensors
        channels, dims, ndim = input.shape[1], [0] + list(range(2, input.ndim)), input.ndim
        dy = grad_output.to(mean.dtype)
        xmu = input.to(mean.dtype) - _per_channel(mean, ndim)
        sum_dy, sum_dy_xmu = dy.sum(dims), (dy * xmu).sum(dims)
        grad_input = grad_weight = grad_bias = None
        if weight is not None and ctx.needs_input_grad[1]:
            grad_weight = (sum_dy_xmu * invstd).to(weight.dtype)
        if weight is not None and ctx.needs_input_grad[2]:
            grad_bias = sum_dy.to(weight.dtype)
        if ctx.needs_input_grad[0]:
            both = cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(both, group=ctx.process_group)
            mean_dy, mean_dy_xmu = both[:channels] / total, both[channels:] / total
            scale = invstd if weight is None else invstd * weight.to(invstd.dtype)
            grad_input = (dy - _per_channel(mean_dy, ndim)
                          - xmu * _per_channel(invstd * invstd * mean_dy_xmu, ndim))
            grad_input = (grad_input * _per_channel(scale, ndim)).to(input.dtype)
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None

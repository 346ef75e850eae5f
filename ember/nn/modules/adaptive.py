"""AdaptiveLogSoftmaxWithLoss: the adaptive softmax of Grave et al. (2016) for large vocabularies.

Classes are split by `cutoffs` into a frequent head shortlist and tail clusters. The head layer
scores the shortlist plus one entry per cluster; each cluster has a small two-layer projection
(in_features -> in_features // div_value^(i+1) -> cluster size) that scores its own classes, so
log p(class) = log p(cluster | x) + log p(class | cluster, x). Only the clusters that hold some
target are evaluated in `forward`.

Read next: `container.py`.
"""
from collections import namedtuple

from ...autograd.grad_mode import no_grad
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax: `forward(input, target)` returns (output, loss) -- each target's
    log-probability and their negated mean; `log_prob(input)` gives every class's and
    `predict(input)` the most likely class."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        """Re-initialise the head and every cluster's projections (Linear's default)."""
        self.head.reset_parameters()
        for projection, scores in self.tail:
            projection.reset_parameters()
            scores.reset_parameters()

    def forward(self, input_, target_):
        """(output, loss): each target's log-probability and the mean negative one."""
        input, target, batched = self._batch(input_, target_)
        batch_size = target.shape[0]
        output = input.new_zeros(batch_size)
        head_index = target.clone()  # each row's entry in the head: its class or its cluster
        bounds = [0] + self.cutoffs
        used = 0
        for i, (low, high) in enumerate(zip(bounds, bounds[1:])):
            in_cluster = (target >= low) & (target < high)
            rows = in_cluster.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            used += rows.numel()
            if i == 0:
                continue
            with no_grad():
                head_index[rows] = self.shortlist_size + i - 1
            scores = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            local = scores.gather(1, (target[rows] - low).unsqueeze(1)).squeeze(1)
            output = output.index_copy(0, rows, local)
        if used != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head = F.log_softmax(self.head(input), dim=1)
        output = output + head.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    @staticmethod
    def _batch(input, target):
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input.ndim != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {list(input.shape)}")
            return input, target, True
        if target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {list(input.shape)}")
            return input.unsqueeze(0), target.unsqueeze(0), False
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def _full_log_prob(self, input, head_output):
        """log p of every class, (batch, n_classes)."""
        head = F.log_softmax(head_output, dim=1)
        parts = [head[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head[:, self.shortlist_size + i].unsqueeze(1))
        from ...ops.shape import cat

        return cat(parts, 1)

    def log_prob(self, input):
        """log-probabilities of all n_classes for a (batch, in_features) or (in_features,)
        input."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row (only rows whose best head entry is a cluster
        evaluate the clusters)."""
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        best = head_output.argmax(dim=1)
        outside = best >= self.shortlist_size
        if bool(outside.any()):
            rows = outside.nonzero().reshape(-1)
            full = self._full_log_prob(x.index_select(0, rows),
                                       head_output.index_select(0, rows))
            best = best.index_copy(0, rows, full.argmax(dim=1))
        return best if batched else best.squeeze(0)

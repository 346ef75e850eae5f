"""ember.distributed.optim: ZeroRedundancyOptimizer (torch.distributed.optim)."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer  # noqa: F401

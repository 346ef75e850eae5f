"""ember.functional: the functions torch keeps in torch.functional (all of them also
ember.<name>), for programs that import them from there.

Read next: `ops/` (where each is defined).
"""
from .ops._op import EXPORTS

_NAMES = ("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
          "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "istft",
          "lu", "meshgrid", "norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
          "unique", "unique_consecutive", "unravel_index")

__all__ = [name for name in _NAMES if name in EXPORTS]  # istft/stft come with complex dtypes
globals().update({name: EXPORTS[name][0] for name in __all__})

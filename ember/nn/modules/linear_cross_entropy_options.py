"""`LinearCrossEntropyOptions`: the chunking settings torch's F.linear_cross_entropy accepts.

torch uses them to compute the loss in batch chunks without materialising every logit. ember
validates them as torch does and then computes the reference path (linear, then cross_entropy):
the same loss and gradients up to rounding, without the memory saving.

Read next: `loss.py` (LinearCrossEntropyLoss).
"""
from dataclasses import dataclass

from ... import _dtype as dt

__all__ = ["LinearCrossEntropyOptions"]

_POLICIES = ("auto", "accurate", "balanced", "compact")


@dataclass
class LinearCrossEntropyOptions:
    """Chunking options: `batch_chunk_size` rows per chunk (None: one chunk),
    `chunking_method` ("auto", "aspect_ratio" or "aspect_ratio:N", or None to use
    batch_chunk_size), `acc_policy` and `acc_dtype` (where intermediates accumulate), and
    `allow_retain_graph`. Validated as torch does; ember's loss does not chunk (see above)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        floats = (dt.float16, dt.bfloat16, dt.float32, dt.float64)
        if self.acc_dtype is not None and self.acc_dtype not in floats:
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")

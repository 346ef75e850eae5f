"""ember: a small, readable deep-learning framework with PyTorch's API.

    import ember as torch

Reading order (see docs/READING.md): _dtype, _device, _backend, _tensor, ops/ (_op,
_dispatch, then the op families), autograd/ (graph, engine), then nn, optim, utils.data.
"""
from . import _dtype
from ._device import device
from ._dtype import (bfloat16, bool, double, dtype, finfo, float, float16, float32,  # noqa: A004
                     float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64,
                     long, promote_types, result_type, set_default_dtype, short, uint8)
from ._dtype import can_cast  # noqa: F401
from ._tensor import Size, Tensor
from . import autograd  # noqa: E402  (after _tensor: the graph refers to Tensor)
from . import ops  # noqa: E402
from ._tensor_methods import bind as _bind_tensor_methods
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from ._creation import (arange, as_tensor, asarray, empty, empty_like, empty_strided, eye,
                        from_numpy, full, full_like, linspace, logspace, ones, ones_like,
                        scalar_tensor, tensor, tril_indices, triu_indices, zeros, zeros_like)
from ._creation import range  # noqa: A004
from ._dtype import is_complex, is_floating_point, is_signed
from ._random import (Generator, bernoulli, default_generator, get_rng_state, initial_seed,
                      manual_seed, multinomial, normal, poisson, rand, rand_like, randint,
                      randint_like, randn, randn_like, randperm, seed, set_rng_state)
from ._tensor_str import set_printoptions
from . import random  # noqa: E402  (ember.random mirrors torch.random)
from ._storage import TypedStorage, UntypedStorage  # noqa: E402
from .serialization import load, save  # noqa: E402


class _MemoryFormat:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"


class _Layout(_MemoryFormat):
    pass


contiguous_format = _MemoryFormat("contiguous_format")
channels_last = _MemoryFormat("channels_last")
preserve_format = _MemoryFormat("preserve_format")
strided = _Layout("strided")


def _publish_ops():
    """ember.<name> for every function an op module exports (see ops/_op.py: export)."""
    namespace = globals()
    for name, (fn, as_function, _) in ops.EXPORTS.items():
        if as_function:
            namespace[name] = fn


_publish_ops()
from . import linalg  # noqa: E402  (the torch.linalg namespace)
_bind_tensor_methods()

from . import nn, optim, profiler  # noqa: E402  (they build on the full tensor API)

__version__ = "0.1.0"

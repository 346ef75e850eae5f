"""ember: a small, readable deep-learning framework with PyTorch's API.

    import ember as torch

Reading order (see docs/READING.md): _dtype, _device, _backend, _tensor, ops/ (_op,
_dispatch, then the op families), autograd/ (graph, engine), then nn, optim, utils.data.

The imports below are the public namespace (torch's names). Their order matters: Tensor
first, then autograd and the op layer, which publish the math functions; nn and optim build
on the complete tensor API, so they come last.
"""
# ruff: noqa: F401, E402, I001, A004
from . import _allocator
from . import _numpy_errors
from . import _dtype
from ._device import device, get_default_device, set_default_device
from ._dtype import (bfloat16, bool, can_cast, double, dtype, finfo, float, float16, float32,
                     float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64,
                     is_complex, is_floating_point, is_signed, long, promote_types,
                     result_type, set_default_dtype, short, uint8)
from ._tensor import Size, Tensor

_numpy_errors.install()  # ember's kernels make inf and nan silently, as torch's do
from . import autograd
from . import ops
from ._tensor_methods import bind as _bind_tensor_methods
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from ._creation import (arange, as_tensor, asarray, empty, empty_like, empty_strided, eye,
                        from_numpy, full, full_like, linspace, logspace, ones, ones_like, range,
                        scalar_tensor, tensor, tril_indices, triu_indices, zeros, zeros_like)
from ._random import (Generator, bernoulli, default_generator, get_rng_state, initial_seed,
                      manual_seed, multinomial, normal, poisson, rand, rand_like, randint,
                      randint_like, randn, randn_like, randperm, seed, set_rng_state)
from ._tensor_str import set_printoptions
from ._parallel import get_num_threads, set_num_threads
from . import random
from ._storage import TypedStorage, UntypedStorage
from . import _legacy
from ._legacy import set_default_tensor_type

globals().update(_legacy.tensor_types())   # FloatTensor, LongTensor, ... (legacy types)
globals().update(_legacy.storage_types())  # FloatStorage, LongStorage, ...
from .serialization import load, save


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
_bind_tensor_methods()

from . import linalg  # the torch.linalg namespace
from . import cuda, nn, optim, profiler
from .ops import _public

# torch's out=, NumPy-style keyword aliases and module-level in-place functions (ops/_public.py)
_public.install(globals())
for _namespace in ("linalg", "special", "fft"):
    if _namespace in globals():
        _public.install(vars(globals()[_namespace]), _namespace)
_public.install(vars(nn.functional), "nn.functional", aliases=False)

__version__ = "0.1.0"

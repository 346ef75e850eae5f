"""ember: a small, readable deep-learning framework with PyTorch's API.

    import ember as torch

Reading order (see docs/READING.md): _dtype, _device, _backend, _tensor, ops/ (_op,
_dispatch, then the op families), autograd/ (graph, engine), then nn, optim, utils.data.

The imports below are the public namespace (torch's names). Their order matters: Tensor
first, then autograd and the op layer, which publish the math functions; nn and optim build
on the complete tensor API, so they come last.
"""
# ruff: noqa: F401, E402, I001, A004
import math as _math

from . import _allocator
from . import _numpy_errors
from . import _dtype
from ._device import device, get_default_device, set_default_device
from ._dtype import (bfloat16, bool, can_cast, cdouble, cfloat, chalf, complex32, complex64,
                     complex128, double, dtype, finfo, float, float16, float32, float64,
                     get_default_dtype, half, iinfo, int, int8, int16, int32, int64, is_complex,
                     is_floating_point, is_signed, long, promote_types, result_type,
                     set_default_dtype, short, uint8, uint16, uint32, uint64, float8_e4m3fn,
                     float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu)
from ._tensor import Size, Tensor

_numpy_errors.install()  # ember's kernels make inf and nan silently, as torch's do
from . import autograd
from . import ops
from . import _interchange  # frombuffer, from_dlpack, ... (published with the ops below)
from ._tensor_methods import bind as _bind_tensor_methods
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from ._creation import (arange, as_tensor, asarray, empty, empty_like, empty_strided, eye,
                        empty_permuted, from_numpy, full, full_like, linspace, logspace, ones,
                        ones_like, range,
                        scalar_tensor, tensor, tril_indices, triu_indices, zeros, zeros_like)
from ._random import (Generator, bernoulli, default_generator, get_rng_state, initial_seed,
                      manual_seed, multinomial, normal, poisson, rand, rand_like, randint,
                      randint_like, randn, randn_like, randperm, seed, set_rng_state)
from ._tensor_str import set_printoptions
from ._parallel import get_num_threads, set_num_threads
from ._sym import (sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not, sym_sqrt,
                   sym_sum)
from ._global_state import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
                            get_float32_matmul_precision, get_num_interop_threads,
                            init_num_threads, is_deterministic_algorithms_warn_only_enabled,
                            is_warn_always_enabled, set_anomaly_enabled,
                            set_deterministic_debug_mode, set_float32_matmul_precision,
                            set_flush_denormal, set_num_interop_threads, set_warn_always,
                            use_deterministic_algorithms)
from . import random
from .random import thread_safe_generator
from . import quasirandom
from ._storage import TypedStorage, UntypedStorage
from . import _sparse
from . import _legacy
from ._legacy import set_default_tensor_type

globals().update(_legacy.tensor_types())   # FloatTensor, LongTensor, ... (legacy types)
globals().update(_legacy.storage_types())  # FloatStorage, LongStorage, ...
from . import storage  # torch.storage: TypedStorage, UntypedStorage
from .serialization import load, save


class memory_format:
    """How a tensor's elements are laid out in memory (ember.contiguous_format, ...)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"ember.{self.name}"


class layout(memory_format):
    """A tensor's storage layout: ember.strided (dense) is the only one ember has."""


contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format  # torch's old name for the same format
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
strided = layout("strided")
sparse_coo = layout("sparse_coo")

# constants torch re-exports (math's, and None as NumPy's newaxis)
e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None

# build facts: NumPy brings LAPACK; ember uses neither MKL nor OpenMP
has_lapack, has_mkl, has_openmp = True, False, False


def _publish_ops():
    """ember.<name> for every function an op module exports (see ops/_op.py: export)."""
    namespace = globals()
    for name, (fn, as_function, _) in ops.EXPORTS.items():
        if as_function:
            namespace[name] = fn


_publish_ops()
_bind_tensor_methods()

from . import linalg  # the torch.linalg namespace
from . import fft  # the torch.fft namespace
from . import signal
from ._windows import (bartlett_window, blackman_window, hamming_window, hann_window,
                       kaiser_window)
from . import special  # the torch.special namespace
from . import cuda, distributed, nn, optim, profiler, sparse
from . import distributions  # after nn: distributions use nn.functional
from . import functional  # torch.functional
from . import func  # torch.func: grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, ...
from .func import vmap  # torch.vmap
from .ops import _public

# torch's out=, NumPy-style keyword aliases and module-level in-place functions (ops/_public.py)
_public.install(globals())
for _namespace in ("linalg", "special", "fft"):
    _public.install(vars(globals()[_namespace]), _namespace)
_public.install(vars(nn.functional), "nn.functional", aliases=False)

# compatibility modules (each says in its docstring what it does on ember)
from . import accelerator, amp, backends, compiler, cpu, hub, jit, onnx, testing, version
from . import mps, xpu
from . import multiprocessing
from ._compile import compile
from ._control_flow import cond, while_loop
from ._stream import Event, Stream, get_device_module
from .amp.autocast_mode import (autocast, autocast_decrement_nesting,
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_cpu_dtype, get_autocast_dtype,
                                get_autocast_gpu_dtype,
                                is_autocast_cache_enabled, is_autocast_cpu_enabled,
                                is_autocast_enabled, set_autocast_cache_enabled,
                                set_autocast_cpu_dtype, set_autocast_cpu_enabled,
                                set_autocast_dtype, set_autocast_enabled,
                                set_autocast_gpu_dtype)
from .amp.grad_scaler import GradScaler
from .version import __version__


def __getattr__(name):
    """torch.Storage: the legacy storage type of the default dtype (it follows
    set_default_dtype, as torch's does)."""
    if name == "Storage":
        return _legacy.default_storage_type()
    raise AttributeError(f"module 'ember' has no attribute '{name}'")


def __dir__():
    return sorted(globals().keys() | {"Storage"})

"""ember.backends (torch.backends): the switches torch has for its native backends.

ember runs on NumPy (and CuPy on a GPU) and uses none of cuDNN, oneDNN (mkldnn), MPS, OpenMP
or opt_einsum, so those report themselves unavailable. Their flags are still settable and read
back what was set -- programs set `cudnn.benchmark = True` or `cuda.matmul.allow_tf32 = True`
as a matter of course -- but they change nothing in how ember computes; each module's
docstring says so.

    cudnn      benchmark, deterministic, enabled, allow_tf32, is_available(), version(), flags()
    cuda       matmul.allow_tf32 / allow_fp16_reduced_precision_reduction / ..., SDP switches
    mps        is_available(), is_built()
    cpu        get_cpu_capability(): the vector instructions NumPy uses here
    mkldnn, mkl, openmp, opt_einsum

Read next: any of the modules; each is a page.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]

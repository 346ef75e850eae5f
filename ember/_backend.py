"""The only file that imports CuPy: device -> array module, and transfers between devices.

Kernels receive `xp` (either `numpy` or `cupy`) and never import either, so every op runs on
both. The few places where the two libraries differ are named here.

Read next: `_tensor.py`.
"""
import numpy

_cupy = None


def cupy():
    """The cupy module, imported on first use; raises a clear error when CUDA is unavailable."""
    global _cupy
    if _cupy is None:
        try:
            import cupy as cp
        except ImportError:
            raise RuntimeError("CUDA support needs CuPy: pip install cupy-cuda12x") from None
        _cupy = cp
    return _cupy


def cuda_available():
    try:
        return cupy().cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, or no GPU all mean "not available"
        return False


def namespace(device):
    """The array module for `device`."""
    if device.type == "cpu":
        return numpy
    return cupy()


def array_namespace(array):
    """The array module an array belongs to."""
    if isinstance(array, numpy.ndarray):
        return numpy
    return cupy()


def transfer(array, device):
    """Copy `array` to `device` (a no-op when it is already there)."""
    if device.type == "cpu":
        if isinstance(array, numpy.ndarray):
            return array
        return array.get()
    if array.dtype.name == "bfloat16":
        raise TypeError("ember's GPU arrays are CuPy's, which have no bfloat16: keep bfloat16 "
                        "tensors on the CPU, or use float16 on the GPU")
    cp = cupy()
    with cp.cuda.Device(device.index or 0):
        return cp.asarray(array)


def device_of(array):
    """The ember device an array lives on."""
    from ._device import CPU, as_device

    if isinstance(array, numpy.ndarray):
        return CPU
    return as_device(f"cuda:{array.device.id}")

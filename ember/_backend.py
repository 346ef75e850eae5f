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
            raise RuntimeError("CUDA support needs CuPy: pip install cupy-cuda12x (or "
                               "cupy-cuda13x, to match your CUDA version)") from None
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
    """Copy `array` to `device` (a no-op when it is already there). As torch's `to`, a copy
    keeps the memory layout of an array that fills its memory in some order of its axes (a
    transposed matrix stays transposed); others arrive row-major."""
    if device.type == "cpu" and isinstance(array, numpy.ndarray):
        return array
    if array.dtype.name == "bfloat16":
        raise TypeError("ember's GPU arrays are CuPy's, which have no bfloat16: keep bfloat16 "
                        "tensors on the CPU, or use float16 on the GPU")
    order = dense_axis_order(array)
    if order is not None:  # both libraries copy row-major: move that view, then undo it
        inverse = sorted(range(len(order)), key=order.__getitem__)
        return transfer(array.transpose(order), device).transpose(inverse)
    if device.type == "cpu":
        return array.get()
    cp = cupy()
    with cp.cuda.Device(device.index or 0):
        return cp.asarray(array)


def dense_axis_order(array):
    """The axes from the largest stride to the smallest, when `array` is not row-major but
    that order of its axes is (a transpose or permute of a contiguous array); else None."""
    if array.flags.c_contiguous:
        return None
    order = sorted(range(array.ndim), key=lambda d: -array.strides[d])
    return order if array.transpose(order).flags.c_contiguous else None


def device_of(array):
    """The ember device an array lives on."""
    from ._device import CPU, as_device

    if isinstance(array, numpy.ndarray):
        return CPU
    return as_device(f"cuda:{array.device.id}")

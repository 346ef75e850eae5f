"""Devices without a GPU: the default device, `with device(...)`, one instance per device,
`ember.cuda` when there is no GPU, and the mixed-device error. (tests/test_cuda.py covers the
GPU itself.)"""
import numpy as np
import pytest

import ember
from ember._device import as_device

needs_no_gpu = pytest.mark.skipif(ember.cuda.is_available(), reason="checks the no-GPU answers")


def test_the_default_device_is_the_cpu_and_can_be_set_and_reset():
    assert ember.get_default_device() == ember.device("cpu")
    ember.set_default_device("cuda")
    try:
        assert ember.get_default_device() == ember.device("cuda", 0)
    finally:
        ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(2).device == ember.device("cpu")


def test_device_as_a_context_sets_the_default_inside_only():
    with ember.device("cuda:1") as d:
        assert d == ember.device("cuda", 1)
        assert ember.get_default_device() == ember.device("cuda", 1)
        with ember.device("cpu"):
            assert ember.get_default_device() == ember.device("cpu")
        assert ember.get_default_device() == ember.device("cuda", 1)
    assert ember.get_default_device() == ember.device("cpu")


@needs_no_gpu
def test_factories_follow_the_default_device():
    """With the GPU as default and no CuPy here, a factory must try the GPU -- and say why it
    cannot -- rather than quietly make a CPU tensor."""
    with ember.device("cuda"):
        for make in (lambda: ember.zeros(2), lambda: ember.tensor([1.0]),
                     lambda: ember.nn.Linear(2, 3)):
            with pytest.raises(RuntimeError, match="CuPy"):
                make()
        assert ember.from_numpy(np.ones(2)).is_cpu  # shares host memory: stays on the CPU


def test_each_device_has_one_instance_with_its_index_filled_in():
    assert as_device("cuda") is as_device("cuda:0") is as_device(ember.device("cuda", 0))
    assert str(as_device("cuda")) == "cuda:0"
    assert as_device("cuda:1") is not as_device("cuda:0")
    assert as_device(None) is as_device("cpu") is as_device(ember.device("cpu"))
    assert repr(ember.device("cuda")) == "device(type='cuda')"  # a plain device keeps None


@needs_no_gpu
def test_the_cuda_module_without_a_gpu():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    assert ember.cuda.current_device() == 0
    for call in (ember.cuda.synchronize, ember.cuda.get_device_name):
        with pytest.raises(RuntimeError, match="No CUDA GPUs are available"):
            call()
    ember.cuda.empty_cache()  # nothing to give back: no error
    assert ember.cuda.memory_allocated() == ember.cuda.memory_reserved() == 0  # as torch
    # as torch's without a GPU, cuda.manual_seed leaves the host generator alone
    ember.manual_seed(5)
    ember.cuda.manual_seed(7)
    ember.cuda.manual_seed_all(8)
    first = ember.rand(3)
    ember.manual_seed(5)
    assert ember.equal(first, ember.rand(3))


def test_tensors_on_two_devices_do_not_mix():
    """A GPU tensor built on a host array: dispatch reads only its device, so no GPU is
    needed to see the error (it names both devices, as torch's does)."""
    gpu = ember.Tensor._make(np.ones(3, np.float32), False, device=as_device("cuda"))
    for fn in (lambda: ember.ones(3) + gpu, lambda: gpu * ember.ones(3),
               lambda: ember.ones(3).add_(gpu), lambda: ember.maximum(ember.ones(3), gpu)):
        with pytest.raises(RuntimeError, match="same device, but found at least two devices, "
                                               "cpu and cuda:0"):
            fn()


def test_device_moves_keep_a_permuted_layout():
    """torch's `to` keeps the layout of a tensor that fills its memory in some axis order;
    `transfer` finds that order (the copy itself is made row-major by NumPy and CuPy)."""
    from ember._backend import dense_axis_order

    a = np.arange(24.0).reshape(2, 3, 4)
    assert dense_axis_order(a) is None  # already row-major
    assert dense_axis_order(a.transpose(2, 0, 1)) == [1, 2, 0]
    assert dense_axis_order(a.T) == [2, 1, 0]
    assert dense_axis_order(a[:, ::2]) is None  # gaps: arrives row-major, as in torch
    assert dense_axis_order(np.broadcast_to(a[:1], (5, 3, 4))) is None

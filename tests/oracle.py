"""The torch oracle: run the same function in ember and in PyTorch and compare.

A test function takes the library module first -- `lambda m, a, b: m.add(a, b)` -- so one
lambda runs as `ember.add` and as `torch.add`. Inputs are NumPy arrays; each library gets its
own copy with the same strides (so non-contiguous inputs stay non-contiguous), and floating
and complex inputs require grad. `check` compares forward values, dtypes and shapes, then the
gradients of every input for one random upstream gradient (complex where the output is).
`check_raises` asserts the same exception type.

`EMBER_TEST_DEVICE=cuda` puts ember's inputs on the GPU (torch, the oracle, stays on the CPU),
so the same table checks every op's CuPy kernels and rules: see tests/test_cuda.py.
"""
import contextlib
import os

import numpy as np

import ember

try:
    import torch
except ImportError:  # the gradcheck half of the suite runs without torch
    torch = None

FLOAT_TOL = {"float64": (1e-7, 1e-9), "float32": (1e-5, 1e-6), "float16": (1e-3, 1e-3),
             "bfloat16": (1e-2, 1e-2), "complex128": (1e-7, 1e-9), "complex64": (1e-5, 1e-6)}


@contextlib.contextmanager
def on_test_device():
    """Tensors a test function makes itself (`m.tensor([0, 2])` as an index) go to the test
    device, as a GPU user's would. Only around the forward call: ember's own code must place
    what it makes by its inputs' device, so backward runs with the CPU as the default."""
    ember.set_default_device(DEVICE)
    try:
        yield
    finally:
        ember.set_default_device(None)


def copy_array(a):
    """A copy with the same memory order (so transposed inputs stay transposed)."""
    return np.array(a, copy=True, order="K")


DEVICE = os.environ.get("EMBER_TEST_DEVICE", "cpu")


def to_ember(a, requires_grad):
    if not isinstance(a, np.ndarray):
        return a
    if DEVICE != "cpu" and a.dtype.name == "bfloat16":
        import pytest

        pytest.skip("CuPy (ember's GPU arrays) has no bfloat16")
    t = ember.from_numpy(copy_array(a)).to(DEVICE)
    return t.requires_grad_() if requires_grad and _differentiable(t) else t


def _differentiable(t):
    return t.is_floating_point() or t.is_complex()


def to_torch(a, requires_grad):
    if not isinstance(a, np.ndarray):
        return a
    if a.dtype.name == "bfloat16":
        t = torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    else:
        t = torch.from_numpy(copy_array(a))
    return t.requires_grad_() if requires_grad and _differentiable(t) else t


def _no_numpy_twin(dtype):
    """bfloat16 and the float8 types: torch has no NumPy array for them (compare as float64)."""
    name = str(dtype).split(".")[-1]
    return name == "bfloat16" or name.startswith("float8")


def as_numpy(t):
    if isinstance(t, ember.Tensor):
        t = t.detach().cpu()
        return np.asarray(t).astype(np.float64) if _no_numpy_twin(t.dtype) else np.asarray(t)
    if torch is not None and isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg()  # torch's lazy conj views cannot be read
        return t.float().numpy().astype(np.float64) if _no_numpy_twin(t.dtype) else t.numpy()
    return np.asarray(t)


def _flatten(x):
    if isinstance(x, (tuple, list)):
        out = []
        for item in x:
            out.extend(_flatten(item))
        return out
    return [x]


def dtype_name(t):
    return str(t.dtype).split(".")[-1]


def assert_close(e, t, rtol=None, atol=None, what="value"):
    """Compare one ember result with one torch result: type, shape, dtype, values."""
    if torch is not None and isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{what}: expected a Tensor, got {type(e)}"
        assert tuple(e.shape) == tuple(t.shape), f"{what}: shape {tuple(e.shape)} != torch " \
                                                 f"{tuple(t.shape)}"
        assert dtype_name(e) == dtype_name(t), f"{what}: dtype {e.dtype} != torch {t.dtype}"
        default_rtol, default_atol = FLOAT_TOL.get(dtype_name(t), (0, 0))
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        np.testing.assert_allclose(as_numpy(e), as_numpy(t), rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=what)
    elif isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)), f"{what}: expected a sequence, got {type(e)}"
        assert len(e) == len(t), f"{what}: {len(e)} results, torch has {len(t)}"
        for k, (ei, ti) in enumerate(zip(e, t)):
            assert_close(ei, ti, rtol, atol, f"{what}[{k}]")
    elif isinstance(t, float):
        assert np.isclose(e, t, rtol=rtol or 1e-6, atol=atol or 1e-8, equal_nan=True), \
            f"{what}: {e} != torch {t}"
    elif torch is not None and isinstance(t, torch.dtype):
        assert isinstance(e, ember.dtype) and str(e)[6:] == str(t)[6:], \
            f"{what}: {e} != torch {t}"
    else:
        assert e == t, f"{what}: {e!r} != torch {t!r}"


def check(fn, inputs, *, grad=True, rtol=None, atol=None, grad_rtol=None, grad_atol=None,
          seed=0):
    """Run `fn(lib, *inputs)` in both libraries; compare results and input gradients."""
    e_in = [to_ember(a, grad) for a in inputs]
    t_in = [to_torch(a, grad) for a in inputs]
    with on_test_device():
        e_out = fn(ember, *e_in)
    t_out = fn(torch, *t_in)
    if any(isinstance(a, np.ndarray) for a in inputs):
        for k, o in enumerate(_flatten(e_out)):
            if isinstance(o, ember.Tensor):
                assert o.device.type == ember.device(DEVICE).type, \
                    f"result {k} is on {o.device}, the inputs were on {DEVICE}"
    assert_close(e_out, t_out, rtol, atol, "forward")
    if not grad:
        return
    t_outs = [o for o in _flatten(t_out) if isinstance(o, torch.Tensor) and o.requires_grad]
    e_outs = [o for o in _flatten(e_out) if isinstance(o, ember.Tensor) and o.requires_grad]
    e_all = [o for o in _flatten(e_out) if isinstance(o, ember.Tensor)]
    t_all = [o for o in _flatten(t_out) if isinstance(o, torch.Tensor)]
    assert [o.requires_grad for o in e_all] == [o.requires_grad for o in t_all], \
        "requires_grad of outputs differs from torch"
    t_wrt = [t for t in t_in if isinstance(t, torch.Tensor) and t.requires_grad]
    e_wrt = [t for t in e_in if isinstance(t, ember.Tensor) and t.requires_grad]
    if not t_outs or not t_wrt:
        return
    rng = np.random.default_rng(seed)
    seeds = [random_like(rng, as_numpy(o)) for o in t_outs]
    t_grads = torch.autograd.grad(t_outs, t_wrt, [to_torch(s, False).to(o.dtype) for s, o in
                                                  zip(seeds, t_outs)], allow_unused=True)
    e_grads = ember.autograd.grad(e_outs, e_wrt, [to_ember(s, False).to(o.dtype) for s, o in
                                                  zip(seeds, e_outs)], allow_unused=True)
    for k, (eg, tg) in enumerate(zip(e_grads, t_grads)):
        if tg is None:
            assert eg is None or not np.any(as_numpy(eg)), f"grad[{k}]: torch has no grad"
            continue
        assert eg is not None, f"grad[{k}]: ember returned no gradient"
        assert_close(eg, tg, grad_rtol if grad_rtol is not None else (rtol or 1e-4),
                     grad_atol if grad_atol is not None else (atol or 1e-5), f"grad[{k}]")


def random_like(rng, array):
    """Standard normal values of array's shape and dtype (both parts, for complex)."""
    values = rng.standard_normal(array.shape)
    if array.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(array.shape)
    return np.asarray(values).astype(array.dtype)


def check_raises(fn, inputs=(), match=None):
    """Both libraries raise, with the same exception type; returns ember's exception."""
    import pytest

    t_in = [to_torch(a, False) for a in inputs]
    with pytest.raises(Exception) as t_info:
        fn(torch, *t_in)
    e_in = [to_ember(a, False) for a in inputs]
    with pytest.raises(Exception) as e_info, on_test_device():
        fn(ember, *e_in)
    assert isinstance(e_info.value, type(t_info.value)) or isinstance(
        t_info.value, type(e_info.value)), \
        f"ember raised {type(e_info.value).__name__}: {e_info.value}; torch raised " \
        f"{type(t_info.value).__name__}: {t_info.value}"
    if match is not None:
        assert match in str(e_info.value), f"{match!r} not in {str(e_info.value)!r}"
    return e_info.value

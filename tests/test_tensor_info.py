"""The non-math Tensor methods and torch.* utilities against torch: questions, memory edits,
element maps, subclasses, legacy attributes, process-wide switches, constants, interchange."""
import math
import os
import tempfile
import warnings

import numpy as np
import pytest

import ember

from .oracle import assert_close, check, check_raises

torch = pytest.importorskip("torch")

A = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("fn", [
    lambda m, a: (m.is_nonzero(a[:1, :1]), m.is_nonzero(a[0, 0]), a[0, 1:2].is_nonzero()),
    lambda m, a: (m.is_same_size(a, a), a.is_same_size(a.t()), m.numel(a), m.get_device(a),
                  a.get_device(), m.is_inference(a)),
    lambda m, a: (a.dim_order(), a.t().dim_order(), a.reshape(1, 2, 3).permute(2, 0, 1)
                  .dim_order(), m.ones(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order()),
    lambda m, a: (m.is_tensor(a), m.is_tensor(3), m.is_storage(a.untyped_storage()),
                  m.is_storage(a)),
    lambda m, a: (a.is_set_to(a), a.is_set_to(a[:]), a.is_set_to(a.clone()),
                  a.is_set_to(a[1:])),
    lambda m, a: (m.fill(a, 3), m.fill_(a.clone(), 2.5), m.zero_(a.clone()),
                  m.detach(a * 1), m.detach_(a.clone())),
    lambda m, a: (a.clone().resize_(3, 2), a.clone().resize_(1), a.clone().resize_as_(a[0]),
                  m.resize_as_(a.clone(), a[:1, :2])),
    lambda m, a: (a.clone().apply_(lambda x: x * 2 + 1),
                  a.clone().map_(a.t().t() + 1, lambda x, y: x * y),
                  a.clone().map2_(a[0], a[:, :1], lambda x, y, z: x - y + z)),
    lambda m, a: (m.ones(2, 3).set_(a), m.ones(2, 3).set_(a.untyped_storage(), 1, (2,), (2,)),
                  m.ones(2, 3).set_()),
])
def test_against_torch(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(fn, [A], grad=False)


@pytest.mark.parametrize("fn, match", [
    (lambda m, a: m.is_nonzero(a), "more than one value is ambiguous"),
    (lambda m, a: m.is_nonzero(a[:0]), "no values is ambiguous"),
    (lambda m, a: a.dim_order(ambiguity_check=True) if m is None else
     a[:1].dim_order(ambiguity_check=True), "does not have unique dim order"),
    (lambda m, a: a.requires_grad_().apply_(lambda x: x), "Can't call apply_() on Variable"),
    (lambda m, a: a.requires_grad_().resize_(3), "cannot resize variables that require grad"),
    (lambda m, a: a.as_subclass(int), "does not inherit from Tensor"),
    (lambda m, a: a.reinforce(a), "reinforce() was removed."),
    (lambda m, a: (a.requires_grad_() * 2).grad_dtype, "only be accessed on leaf tensors"),
    (lambda m, a: m.empty_permuted((2, 3), (1, 1)), "Duplicate dim not allowed"),
])
def test_errors_match_torch(fn, match):
    check_raises(fn, [A], match=match)


def test_resize_keeps_memory_when_it_shrinks():
    for m in (ember, torch):
        x = m.arange(6.0)
        x.resize_(2, 2)
        assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        x.resize_(3, 3)
        assert x.shape == (3, 3) and x.flatten()[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        assert ember.ones(2, 3).resize(3, 2).shape == (3, 2)


def test_set_shares_memory():
    a = ember.arange(4.0)
    b = ember.ones(2, 3).set_(a)
    assert b.is_set_to(a) and b.shape == (4,)
    a[0] = 7
    assert float(b[0]) == 7


def test_as_subclass_keeps_the_graph():
    for m in (ember, torch):
        class Sub(m.Tensor):
            pass

        x = m.ones(2, requires_grad=True)
        y = x.as_subclass(Sub)
        assert type(y) is Sub and y.grad_fn.name() == "AliasBackward0"
        (y * 2).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def test_module_load_and_storage():
    for m in (ember, torch):
        x = m.ones(2)
        loaded = x.module_load(m.zeros(2))
        assert loaded.tolist() == [0.0, 0.0] and x.tolist() == [0.0, 0.0] and loaded is not x
        assert x.module_load(m.full((2,), 3.0), assign=True).tolist() == [3.0, 3.0]
        if m is torch:  # torch warns once per process: whichever test asked first saw it
            torch.storage._reset_warn_typed_storage_removal()
        with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
            s = x.storage()
        assert s.size() == 2 and s.dtype is m.float32 and s.data_ptr() == x.data_ptr()
        assert x.const_data_ptr() == x.data_ptr()


def test_legacy_attributes():
    for m in (ember, torch):
        x = m.ones(2)
        with pytest.warns(UserWarning, match="volatile was removed"):
            assert x.volatile is False
        assert x.name is None and x.is_nested is False
        assert x.grad_dtype is m.float32 and m.ones(2, dtype=m.int64).grad_dtype is m.int64
    with pytest.raises(NotImplementedError, match="casts every leaf's gradient"):
        ember.ones(2).grad_dtype = ember.float16


def test_typename():
    # tensor type names are torch's (programs compare them), as x.type() gives them
    assert ember.typename(ember.ones(2)) == torch.typename(torch.ones(2)) == "torch.FloatTensor"
    assert ember.typename(ember.ones(2, dtype=ember.int64)) == "torch.LongTensor"
    assert ember.typename(3) == torch.typename(3) == "int"
    assert ember.typename(ember.nn.Linear(2, 2)) == "ember.nn.modules.linear.Linear"


def test_process_wide_switches(monkeypatch):
    from ember import _global_state

    monkeypatch.setattr(_global_state, "_state", dict(_global_state._state))
    assert not ember.are_deterministic_algorithms_enabled()
    ember.use_deterministic_algorithms(True, warn_only=True)
    assert ember.are_deterministic_algorithms_enabled()
    assert ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 1
    ember.set_deterministic_debug_mode("error")
    assert ember.get_deterministic_debug_mode() == 2
    ember.set_deterministic_debug_mode(0)
    assert not ember.are_deterministic_algorithms_enabled()
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
        ember.set_deterministic_debug_mode("bad")
    assert ember.get_float32_matmul_precision() == "highest"
    ember.set_float32_matmul_precision("medium")
    assert ember.get_float32_matmul_precision() == "medium"
    with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
        ember.set_float32_matmul_precision("bad")
    assert ember.set_flush_denormal(True) is False
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        ember.set_num_interop_threads(4)
    assert ember.init_num_threads() is None


def test_set_anomaly_enabled():
    from ember.autograd import anomaly_mode

    before = (anomaly_mode.enabled, anomaly_mode.check_nan)
    try:
        ember.set_anomaly_enabled(True, check_nan=False)
        assert ember.is_anomaly_enabled() and not ember.is_anomaly_check_nan_enabled()
    finally:
        anomaly_mode._set(*before)
    assert ember.is_anomaly_enabled() is before[0]


def test_constants_and_layouts():
    assert (ember.e, ember.pi, ember.inf) == (math.e, math.pi, math.inf)
    assert math.isnan(ember.nan) and ember.newaxis is None
    assert type(ember.strided) is ember.layout and repr(ember.strided) == "ember.strided"
    assert type(ember.channels_last_3d) is ember.memory_format
    assert ember.legacy_contiguous_format is ember.contiguous_format
    assert ember.ones(2).layout is ember.strided
    assert (ember.has_lapack, ember.has_mkl, ember.has_openmp) == (True, False, False)


def test_frombuffer_shares_memory():
    buffer = bytearray(np.arange(4, dtype=np.int32).tobytes())
    check(lambda m: m.frombuffer(buffer, dtype=m.int32, count=2, offset=4), [], grad=False)
    t = ember.frombuffer(buffer, dtype=ember.int32)
    t[0] = 9
    assert np.frombuffer(buffer, dtype=np.int32)[0] == 9
    assert ember.frombuffer(bytearray(8), dtype=ember.float32, requires_grad=True).requires_grad
    for bad, match in ((bytearray(3), "must be a multiple of element size"),
                       (bytearray(0), "must not be 0")):
        check_raises(lambda m: m.frombuffer(bad, dtype=m.int32), [], match=match)


def test_from_file():
    data = np.arange(5, dtype=np.float32)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "data.bin")
        data.tofile(path)
        check(lambda m: m.from_file(path, size=5, dtype=m.float32), [], grad=False)
        shared = ember.from_file(path, shared=True, size=5, dtype=ember.float32)
        shared[0] = 42
        del shared
        assert np.fromfile(path, dtype=np.float32)[0] == 42


def test_dlpack_round_trips():
    x = ember.arange(6.0).reshape(2, 3)
    assert np.shares_memory(np.from_dlpack(x), x.numpy())
    t = torch.from_dlpack(x)
    t[0, 0] = 5
    assert float(x[0, 0]) == 5
    back = ember.from_dlpack(torch.arange(3))
    assert back.dtype is ember.int64 and back.tolist() == [0, 1, 2]
    assert ember.from_dlpack(ember.to_dlpack(x)).tolist() == x.tolist()
    assert ember.from_dlpack(np.ones(2)).dtype is ember.float64
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        x.requires_grad_().__dlpack__()


def test_empty_permuted_strides():
    for m in (ember, torch):
        assert m.empty_permuted((2, 3, 5, 7), (0, 2, 3, 1)).stride() == (105, 1, 21, 3)
        assert m.empty_permuted((2, 3), (1, 0), dtype=m.float64).stride() == (1, 2)


def test_functional_module():
    import torch.functional as tf

    for name in ember.functional.__all__:
        assert hasattr(tf, name), name
    assert_close(ember.functional.block_diag(ember.ones(1, 1), ember.ones(1, 2)),
                 tf.block_diag(torch.ones(1, 1), torch.ones(1, 2)))


@pytest.mark.parametrize("fn", [
    lambda m: (m.sym_float(3), m.sym_int(2.7), m.sym_int(-2.7), m.sym_max(2, 3.5),
               m.sym_min(2, 3.5), m.sym_max(2, 3), m.sym_not(0), m.sym_ite(True, 1, 2),
               m.sym_sqrt(4), m.sym_sum([1, 2, 3.5]), m.sym_sum([])),
])
def test_sym_helpers(fn):
    e, t = fn(ember), fn(torch)
    assert e == t and [type(x) for x in e] == [type(x) for x in t]

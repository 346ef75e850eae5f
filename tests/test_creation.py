"""Factories against torch: values, dtype, shape, strides, requires_grad, and the errors.

Each case is a lambda run with m = ember and m = torch. When torch raises, ember must raise
the same exception type; otherwise the results must agree (see `_same`).
"""
import numpy as np
import pytest

import ember

from .oracle import assert_close, check_raises

torch = pytest.importorskip("torch")


def _same(fn, rtol=None, atol=None):
    """Run `fn` in both libraries and compare results, or exception types if torch raises."""
    try:
        expected = fn(torch)
    except Exception:
        check_raises(fn)
        return
    got = fn(ember)
    assert_close(got, expected, rtol, atol)
    assert got.requires_grad == expected.requires_grad
    assert got.device.type == expected.device.type
    if expected.numel():  # NumPy gives empty arrays zero strides; torch does not
        assert got.stride() == expected.stride()


def _cases(*fns):
    return [pytest.param(fn, id=str(i)) for i, fn in enumerate(fns)]


TENSOR_CASES = _cases(
    lambda m: m.tensor([1, 2.5]),
    lambda m: m.tensor([True, 2]),
    lambda m: m.tensor([True, 2.5]),
    lambda m: m.tensor([np.float16(1.0), 2.0]),
    lambda m: m.tensor([np.int32(1), 2]),
    lambda m: m.tensor([2, np.float64(1.0)]),
    lambda m: m.tensor(np.float64(1.5)),
    lambda m: m.tensor(np.int32(1)),
    lambda m: m.tensor(np.float16(2.5)),
    lambda m: m.tensor([np.array([1, 2], dtype=np.int32)] * 2),
    lambda m: m.tensor([np.array([1.0, 2.0]), [1, 2]]),
    lambda m: m.tensor([[1, 2], np.array([3, 4], dtype=np.int8)]),
    lambda m: m.tensor([m.tensor(1.0), m.tensor(2.0)]),
    lambda m: m.tensor([m.tensor(1.0, dtype=m.float64), 2]),
    lambda m: m.tensor([m.tensor(1), 2.5]),
    lambda m: m.tensor([m.tensor([1.0]), m.tensor([2.0])]),
    lambda m: m.tensor([[m.tensor(1.0), 2], [3, 4]]),
    lambda m: m.tensor([m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])]),
    lambda m: m.tensor([np.bool_(True), 1.5]),
    lambda m: m.tensor([True, np.int8(3)]),
    lambda m: m.tensor([np.uint8(3), np.int8(3)]),
    lambda m: m.tensor([np.float32(1.5), np.float64(2)]),
    lambda m: m.tensor([]),
    lambda m: m.tensor([[]]),
    lambda m: m.tensor([[], []]),
    lambda m: m.tensor([[[]], [[]]]),
    lambda m: m.tensor([[], [1]]),
    lambda m: m.tensor((1, 2)),
    lambda m: m.tensor([[1, 2], (3, 4)]),
    lambda m: m.tensor(range(3)),
    lambda m: m.tensor(bytearray(b"ab")),
    lambda m: m.tensor(True),
    lambda m: m.tensor([float("nan"), float("inf")]),
    lambda m: m.tensor([0.1, 1 / 3, 2**-30], dtype=m.float64),
    lambda m: m.tensor([1.1, 2.2], dtype=m.bfloat16),
    lambda m: m.tensor([1.1, 2.2], dtype=m.float16),
    lambda m: m.tensor([1.5], dtype=m.int32),
    lambda m: m.tensor([-1], dtype=m.uint8),
    lambda m: m.tensor([2, 0, 1.5], dtype=m.bool),
    lambda m: m.tensor([[1], [2]], dtype=m.bool),
    lambda m: m.tensor([1e6], dtype=m.float16),
    lambda m: m.tensor(np.array([300]), dtype=m.uint8),
    lambda m: m.tensor(np.ones((2, 3)).T),
    lambda m: m.tensor(np.arange(6.0).reshape(2, 3)[:, ::2]),
    lambda m: m.tensor(1.5, requires_grad=True),
    lambda m: m.tensor(m.ones(2, requires_grad=True)),
    lambda m: m.tensor(m.ones(2), dtype=m.int32),
    lambda m: m.tensor([[1, 2], [3, 4]], dtype=m.float64, device="cpu"),
)

TENSOR_ERRORS = _cases(
    lambda m: m.tensor([[1, 2], [3]]),
    lambda m: m.tensor([[1, 2], [3, 4, 5]]),
    lambda m: m.tensor([[[1, 2]], [[3]]]),
    lambda m: m.tensor([np.array([1, 2]), np.array([3])]),
    lambda m: m.tensor([[1, 2], 3]),
    lambda m: m.tensor([1, [2, 3]]),
    lambda m: m.tensor(["a"]),
    lambda m: m.tensor("a"),
    lambda m: m.tensor([1, "a"]),
    lambda m: m.tensor(None),
    lambda m: m.tensor([None]),
    lambda m: m.tensor({1: 2}),
    lambda m: m.tensor(x for x in range(3)),
    lambda m: m.tensor(2**63),
    lambda m: m.tensor([1, 2**63]),
    lambda m: m.tensor([-1.5], dtype=m.uint8),
    lambda m: m.tensor([300], dtype=m.uint8),
    lambda m: m.tensor([2**40], dtype=m.int32),
    lambda m: m.tensor([np.int64(300)], dtype=m.uint8),
    lambda m: m.tensor([float("nan")], dtype=m.int32),
    lambda m: m.tensor([float("inf")], dtype=m.int64),
    lambda m: m.tensor(np.array([1], dtype=object)),
    lambda m: m.tensor(np.array(["a"])),
    lambda m: m.tensor(1, requires_grad=True),
)


@pytest.mark.parametrize("fn", TENSOR_CASES + TENSOR_ERRORS)
def test_tensor(fn):
    _same(fn)


def test_tensor_copies_its_data():
    a = np.arange(3.0)
    t = ember.tensor(a)
    a[0] = 10
    assert t[0].item() == 0
    src = ember.ones(2)
    copy = ember.tensor(src)
    src.add_(1)
    assert copy.tolist() == [1.0, 1.0]


def test_tensor_of_a_large_list_is_fast_enough():
    data = np.random.default_rng(0).standard_normal((300, 300)).tolist()
    e, t = ember.tensor(data), torch.tensor(data)
    assert_close(e, t)


SHARING_CASES = _cases(
    lambda m: m.as_tensor([1, 2]),
    lambda m: m.as_tensor(np.arange(3.0), dtype=m.float32),
    lambda m: m.as_tensor(np.arange(3.0)[::-1]),
    lambda m: m.as_tensor(m.ones(2), dtype=m.float64),
    lambda m: m.asarray([1.5, 2]),
    lambda m: m.asarray(1.5),
    lambda m: m.asarray(np.float64(2.5)),
    lambda m: m.asarray(np.arange(3.0)[::-1]),
    lambda m: m.asarray(m.ones(2), dtype=m.float64),
    lambda m: m.asarray(np.arange(3.0), requires_grad=True),
    lambda m: m.asarray(np.arange(3.0), dtype=m.float32),
    lambda m: m.asarray(m.ones(2, requires_grad=True), copy=True, requires_grad=None),
    lambda m: m.asarray(m.ones(2, requires_grad=True), copy=True, requires_grad=False),
    lambda m: m.asarray(m.ones(2, requires_grad=True), dtype=m.float64, requires_grad=None),
    lambda m: m.asarray(m.ones(2, requires_grad=True), dtype=m.float64, requires_grad=True),
    lambda m: m.asarray(m.ones(2, requires_grad=True), requires_grad=False),
    lambda m: m.asarray([1.5, 2], copy=False),
    lambda m: m.asarray(1.5, copy=False),
    lambda m: m.asarray(np.float64(1.5), copy=False),
    lambda m: m.asarray(m.ones(2), dtype=m.float64, copy=False),
    lambda m: m.asarray(np.arange(3.0), dtype=m.float32, copy=False),
    lambda m: m.from_numpy(np.arange(3.0)[::-1]),
    lambda m: m.from_numpy([1]),
    lambda m: m.from_numpy(np.array(3.0)),
    lambda m: m.from_numpy(np.arange(6, dtype=np.int16).reshape(2, 3).T),
    lambda m: m.from_numpy(np.array([1.0], dtype=">f8")),
)


@pytest.mark.parametrize("fn", SHARING_CASES)
def test_as_tensor_asarray_from_numpy(fn):
    _same(fn)


def test_memory_sharing():
    a = np.arange(4.0)
    for make in (ember.from_numpy, ember.as_tensor, ember.asarray,
                 lambda x: ember.asarray(x, copy=False)):
        t = make(a)
        t[1] = 7.0
        assert a[1] == 7.0
        a[2] = 9.0
        assert t[2].item() == 9.0
        a[:] = np.arange(4.0)
    assert ember.asarray(a, copy=True).data_ptr() != a.ctypes.data
    assert ember.as_tensor(a, dtype=ember.float32).data_ptr() != a.ctypes.data
    t = ember.ones(3)
    assert ember.as_tensor(t) is t
    assert ember.as_tensor(t, dtype=ember.float32) is t
    assert ember.asarray(t) is t
    assert ember.asarray(t, copy=True) is not t
    assert ember.asarray(t, requires_grad=True) is t and t.requires_grad


SIZE_CASES = _cases(
    lambda m: m.zeros(()),
    lambda m: m.zeros([]),
    lambda m: m.zeros(2, 3),
    lambda m: m.zeros((2, 3)),
    lambda m: m.zeros([2, 3]),
    lambda m: m.zeros(m.Size([2, 3])),
    lambda m: m.zeros(m.tensor(3)),
    lambda m: m.zeros(np.int64(3)),
    lambda m: m.zeros(0, 3),
    lambda m: m.zeros(2, dtype=m.int32),
    lambda m: m.ones(2, 3, dtype=m.bool),
    lambda m: m.ones([2, 3], requires_grad=True),
    lambda m: m.ones(2, dtype=m.float16),
    lambda m: m.empty(2, 3).zero_(),
    lambda m: m.empty(2, 3, dtype=m.int64).zero_(),
    lambda m: m.empty(1, 2, 3, 4, memory_format=m.channels_last).zero_(),
    lambda m: m.empty(2, 3, memory_format=m.contiguous_format).zero_(),
    lambda m: m.empty(2, 3, requires_grad=True).detach().zero_(),
    lambda m: m.full((2,), 1),
    lambda m: m.full((2,), True),
    lambda m: m.full((2, 3), 2.5),
    lambda m: m.full([2], 2.5, requires_grad=True),
    lambda m: m.full((2,), 1.5, dtype=m.int64),
    lambda m: m.full((2,), m.tensor(1.5)),
    lambda m: m.full((2,), m.tensor(1)),
    lambda m: m.full([2], np.float32(2.0)),
    lambda m: m.full([2], np.int32(2)),
    lambda m: m.full([2], -1, dtype=m.uint8),
    lambda m: m.full([2, 2], 1.5, dtype=m.int32),
    lambda m: m.full([2], 2.5, dtype=m.bfloat16),
    lambda m: m.full([2], 1, dtype=m.bool),
    lambda m: m.full([2], float("nan")),
    lambda m: m.full(m.Size([2, 1]), 3),
    lambda m: m.scalar_tensor(3),
    lambda m: m.scalar_tensor(True),
    lambda m: m.scalar_tensor(2.5, dtype=m.int32),
    lambda m: m.scalar_tensor(2.5, requires_grad=True),
    lambda m: m.eye(3, dtype=m.int64),
    lambda m: m.eye(2, 3),
    lambda m: m.eye(3, 2, dtype=m.bool),
    lambda m: m.eye(0),
    lambda m: m.eye(2, requires_grad=True),
    lambda m: m.empty_strided((2, 3), (1, 2)).zero_(),
    lambda m: m.empty_strided((2, 3), (1, 2), dtype=m.int32).zero_(),
    lambda m: m.empty_strided((2, 0), (1, 1)),
    lambda m: m.empty_strided((2, 3), (3, 1), requires_grad=True).detach().zero_(),
)

SIZE_ERRORS = _cases(
    lambda m: m.zeros(),
    lambda m: m.zeros(-1, 2),
    lambda m: m.zeros(2.5),
    lambda m: m.zeros((2, 3.0)),
    lambda m: m.zeros(2, 3, dtype=m.int32, requires_grad=True),
    lambda m: m.empty(-1),
    lambda m: m.ones(2, -3),
    lambda m: m.empty(2, memory_format=m.channels_last),
    lambda m: m.full(3, 1.0),
    lambda m: m.full((-1,), 2.0),
    lambda m: m.full((2,), m.tensor([1])),
    lambda m: m.full([2], 300, dtype=m.uint8),
    lambda m: m.full([2], 1, requires_grad=True),
    lambda m: m.full([2], "a"),
    lambda m: m.eye(-1),
    lambda m: m.eye(2, -1),
    lambda m: m.eye(2.5),
    lambda m: m.empty_strided((2, 3), (-1, 2)),
    lambda m: m.empty_strided((2, 3), (1,)),
)


@pytest.mark.parametrize("fn", SIZE_CASES + SIZE_ERRORS)
def test_size_factories(fn):
    _same(fn)


def test_empty_strided_with_overlapping_strides():
    assert ember.empty_strided((2, 3), (0, 1)).stride() == \
        torch.empty_strided((2, 3), (0, 1)).stride()


def test_unsupported_arguments_raise():
    with pytest.raises(NotImplementedError):
        ember.ones(2, layout="sparse")


LIKE_CASES = _cases(
    lambda m: m.zeros_like(m.ones(2, 3)),
    lambda m: m.zeros_like(m.ones(2, 3).t()),
    lambda m: m.empty_like(m.ones(2, 3)[:, ::2]).zero_(),
    lambda m: m.zeros_like(m.ones(4, 3).t()[::2]),
    lambda m: m.zeros_like(m.ones(2, 3, 4).permute(2, 0, 1)),
    lambda m: m.zeros_like(m.ones(3).expand(2, 3)),
    lambda m: m.ones_like(m.ones(2, 3, requires_grad=True)),
    lambda m: m.ones_like(m.ones(2), requires_grad=True),
    lambda m: m.ones_like(m.ones(2, 3).t(), memory_format=m.contiguous_format),
    lambda m: m.ones_like(m.ones(2, 3, 4, 5), memory_format=m.channels_last),
    lambda m: m.ones_like(m.ones(2, 3, 4, 5).permute(0, 2, 3, 1)),
    lambda m: m.zeros_like(m.ones(2, dtype=m.int32)),
    lambda m: m.zeros_like(m.ones(2), dtype=m.int64),
    lambda m: m.empty_like(m.ones(2, 3, dtype=m.float16)).zero_(),
    lambda m: m.full_like(m.ones(2, dtype=m.int64), 2.7),
    lambda m: m.full_like(m.ones(2), True),
    lambda m: m.full_like(m.ones(2), 3, dtype=m.int32),
    lambda m: m.full_like(m.ones(2, 3).t(), 3.5),
    lambda m: m.zeros_like(m.tensor(2.5)),
    lambda m: m.zeros_like(m.ones(2), dtype=m.int64, requires_grad=True),
    lambda m: m.full_like(m.ones(2, dtype=m.uint8), 300),
    lambda m: m.ones_like(m.ones(2, 3), memory_format=m.channels_last),
)


@pytest.mark.parametrize("fn", LIKE_CASES)
def test_like(fn):
    _same(fn)


NEW_CASES = _cases(
    lambda m: m.ones(2).new_full((2,), 3),
    lambda m: m.ones(2, dtype=m.int32).new_full((2,), 3.7),
    lambda m: m.ones(2).new_tensor([1, 2]),
    lambda m: m.ones(2, dtype=m.int32).new_tensor([1.5, 2]),
    lambda m: m.ones(2).new_tensor(m.ones(2, requires_grad=True)),
    lambda m: m.ones(2).new_tensor([1, 2], dtype=m.int64),
    lambda m: m.ones(2).new_zeros(2, 3),
    lambda m: m.ones(2).new_zeros((2, 3)),
    lambda m: m.ones(2, dtype=m.float64).new_zeros(2),
    lambda m: m.ones(2).new_ones([2, 3], dtype=m.int32),
    lambda m: m.ones(2).new_empty(2, requires_grad=True).detach().zero_(),
    lambda m: m.ones(2).new_zeros(2, requires_grad=True),
    lambda m: m.ones(2, dtype=m.int64).new_empty_strided((2, 3), (1, 2)).zero_(),
    lambda m: m.ones(2, dtype=m.float16).new(2, 3).zero_(),
    lambda m: m.ones(2, dtype=m.float64).new([1, 2]),
    lambda m: m.ones(2).new(),
    lambda m: m.Tensor(2, 3).zero_(),
    lambda m: m.Tensor([1, 2]),
    lambda m: m.Tensor(),
    lambda m: m.ones(2).new_full(2, 3),
    lambda m: m.ones(2, dtype=m.int32).new(m.tensor([1.5])),
    lambda m: m.ones(2, dtype=m.int64).new_zeros(2, requires_grad=True),
)


@pytest.mark.parametrize("fn", NEW_CASES)
def test_new_methods(fn):
    _same(fn)


RANGE_CASES = _cases(
    lambda m: m.arange(5),
    lambda m: m.arange(5.0),
    lambda m: m.arange(1, 4),
    lambda m: m.arange(5, 0, -1),
    lambda m: m.arange(0, 10, 3),
    lambda m: m.arange(1, 2.5, 0.5),
    lambda m: m.arange(3, 3.0),
    lambda m: m.arange(0, 0),
    lambda m: m.arange(True),
    lambda m: m.arange(m.tensor(5)),
    lambda m: m.arange(m.tensor(5.0)),
    lambda m: m.arange(np.int64(3)),
    lambda m: m.arange(np.float32(3)),
    lambda m: m.arange(5, dtype=m.float64),
    lambda m: m.arange(10, dtype=m.uint8),
    lambda m: m.arange(0.5, 5, dtype=m.int64),
    lambda m: m.arange(-0.5, 5, 1.5, dtype=m.int64),
    lambda m: m.arange(0, 10, 2.5, dtype=m.int64),
    lambda m: m.arange(2**53, 2**53 + 4),
    lambda m: m.arange(0, 2**62 + 3, 2**61),
    lambda m: m.arange(5.0, requires_grad=True),
    lambda m: m.arange(0, 1, 0.3, dtype=m.float16),
    lambda m: m.arange(0, 100, 0.5, dtype=m.bfloat16),
    lambda m: m.arange(0, 1, 1 / 3),
    lambda m: m.linspace(0, 1, 3, dtype=m.float64),
    lambda m: m.linspace(0, 10, 1),
    lambda m: m.linspace(0, 10, 0),
    lambda m: m.linspace(m.tensor(0.0), 1, 3),
    lambda m: m.linspace(0, 1, 3, requires_grad=True),
    lambda m: m.linspace(0, 10, 5, dtype=m.int64),
    lambda m: m.linspace(0, 10, 7, dtype=m.int64),
    lambda m: m.linspace(-10, 10, 7, dtype=m.int64),
    lambda m: m.linspace(0.5, 10.7, 5, dtype=m.int64),
    lambda m: m.linspace(0.1, 0.9, 100, dtype=m.float16),
    lambda m: m.linspace(0.1, 0.9, 33, dtype=m.bfloat16),
    lambda m: m.logspace(0, 2, 3),
    lambda m: m.logspace(0, 2, 3, base=2),
    lambda m: m.logspace(0, 2, 3, dtype=m.int64),
    lambda m: m.logspace(-1, 1, 5, base=3.0, dtype=m.float64),
    lambda m: m.logspace(0, 3, 4, base=-2.0),
    lambda m: m.logspace(-3, 3, 13),
    lambda m: m.range(0, 3),
    lambda m: m.range(0, 1, 0.25),
    lambda m: m.tril_indices(3, 4, 1),
    lambda m: m.triu_indices(4, 3, -1),
    lambda m: m.tril_indices(3, 3, dtype=m.int32),
    lambda m: m.tril_indices(0, 3),
    lambda m: m.triu_indices(3, 5, 7),
    lambda m: m.triu_indices(5, 3),
)

RANGE_ERRORS = _cases(
    lambda m: m.arange(0, 5, -1),
    lambda m: m.arange(0, 5, 0),
    lambda m: m.arange(0, 1, 0.5, dtype=m.int64),
    lambda m: m.arange(0, float("inf")),
    lambda m: m.arange(0, float("nan")),
    lambda m: m.arange(5, requires_grad=True),
    lambda m: m.arange(5, dtype=m.bool),
    lambda m: m.linspace(0, 10, -1),
    lambda m: m.linspace(0, 10),
    lambda m: m.linspace(0, 1, 2.5),
    lambda m: m.linspace(0, 1, 3, dtype=m.bool),
    lambda m: m.tril_indices(3, 3, dtype=m.float32),
    lambda m: m.tril_indices(-1, 3),
)


@pytest.mark.parametrize("fn", RANGE_CASES + RANGE_ERRORS)
def test_ranges(fn):
    _same(fn)


# torch's vectorised CPU kernels round some elements through a different sum than
# start + i * step (which elements depends on the CPU's vector width): allow one ulp or so
ULP_CASES = _cases(
    lambda m: m.arange(0, 10, 0.1),
    lambda m: m.arange(-3.3, 7.7, 0.37),
    lambda m: m.arange(1.5, 300.2, 0.77, dtype=m.float64),
    lambda m: m.arange(10, 0, -0.7),
    lambda m: m.linspace(0, 1, 7),
    lambda m: m.linspace(-2.5, 3.1, 11),
    lambda m: m.linspace(0.1, 0.9, 100),
    lambda m: m.linspace(-2.5, 3.1, 11, dtype=m.float64),
    lambda m: m.linspace(1, 1e-3, 5),
    lambda m: m.logspace(0.5, 2.7, 9, 2.0),
    lambda m: m.logspace(-1, 1, 50, 7.0),
    lambda m: m.logspace(-1, 1, 50, 7.0, dtype=m.float64),
)


@pytest.mark.parametrize("fn", ULP_CASES)
def test_float_ranges_within_an_ulp(fn):
    _same(fn, rtol=3e-7 if fn(torch).dtype is torch.float32 else 1e-15, atol=1e-7)


def test_float32_linspace_is_bit_exact():
    """float32 linspace rounds start + i * step once, as torch's fused multiply-add does
    (image transforms sample on linspace grids, where one ulp moves a nearest pixel)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        start, end = rng.uniform(-300, 300, 2)
        steps = int(rng.integers(2, 300))
        np.testing.assert_array_equal(ember.linspace(start, end, steps).numpy(),
                                      torch.linspace(start, end, steps).numpy())


def test_arange_has_no_drift():
    """Each value is start + i*step rounded once (no accumulated error from repeated adds)."""
    t = ember.arange(0, 1000, 0.1, dtype=ember.float64)
    assert len(t) == len(torch.arange(0, 1000, 0.1, dtype=torch.float64))
    expected = np.arange(len(t)) * 0.1
    np.testing.assert_array_equal(t.numpy(), expected)
    assert ember.arange(0, 1000, 0.1)[-1].item() == pytest.approx(999.9, abs=1e-4)

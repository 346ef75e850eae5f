"""Python protocols on Tensor against torch: len, iter, bool, int/float/index/complex, format,
hash, item, tolist, numpy / __array__ memory sharing, and copy.deepcopy."""
import copy
import operator

import numpy as np
import pytest

import ember

from .oracle import check_raises

torch = pytest.importorskip("torch")


def _both(fn):
    """fn(m) in both libraries; results must be equal and of the same Python type."""
    e, t = fn(ember), fn(torch)
    assert e == t and type(e) is type(t), f"{e!r} != torch {t!r}"


CONVERSIONS = [
    lambda m: len(m.ones(3, 2)), lambda m: len(m.ones(0, 2)),
    lambda m: [tuple(x.shape) for x in m.ones(2, 3)], lambda m: len(list(m.ones(4))),
    lambda m: bool(m.tensor([0.0])), lambda m: bool(m.tensor(float("nan"))),
    lambda m: bool(m.tensor([[2]])), lambda m: bool(m.tensor(-0.0)), lambda m: bool(m.tensor(True)),
    lambda m: int(m.tensor(2.7)), lambda m: int(m.tensor(-2.7)), lambda m: int(m.tensor([3])),
    lambda m: int(m.tensor(True)), lambda m: int(m.tensor(7, dtype=m.uint8)),
    lambda m: float(m.tensor([[3]])), lambda m: float(m.tensor(3, dtype=m.int64)),
    lambda m: float(m.tensor(0.1)), lambda m: float(m.tensor(0.1, dtype=m.float64)),
    lambda m: float(m.tensor(1.1, dtype=m.bfloat16)), lambda m: complex(m.tensor(2.0)),
    lambda m: operator.index(m.tensor(3)), lambda m: operator.index(m.tensor([3], dtype=m.int8)),
    lambda m: operator.index(m.tensor(True)), lambda m: [1, 2, 3][m.tensor(1)],
    lambda m: list(range(5))[m.tensor(1):m.tensor(4)],
    lambda m: f"{m.tensor(2.5):.3f}", lambda m: f"{m.tensor(2):5d}",
    lambda m: format(m.tensor(2.5)), lambda m: f"{m.tensor(2.5, requires_grad=True):.2f}",
    lambda m: f"{m.tensor(1 / 3, dtype=m.float64):.10f}",
    lambda m: f"{m.ones(2)}".replace("torch.", "ember."),
    lambda m: m.tensor(2.5).item(), lambda m: m.tensor(2).item(), lambda m: m.tensor(True).item(),
    lambda m: m.tensor([[7.0]]).item(), lambda m: m.tensor(0.1).item(),
    lambda m: m.tensor(2.5, dtype=m.bfloat16).item(),
    lambda m: m.tensor(2.5, dtype=m.float16).item(),
    lambda m: m.tensor(3, dtype=m.uint8).item(), lambda m: m.tensor(1.5, requires_grad=True).item(),
    lambda m: m.tensor([[1.1, 2], [3, 4]], dtype=m.bfloat16).tolist(),
    lambda m: m.tensor([[1.1, 2], [3, 4]], dtype=m.float16).tolist(),
    lambda m: m.tensor(2.5).tolist(), lambda m: m.tensor([1, 2], dtype=m.uint8).tolist(),
    lambda m: m.tensor([True]).tolist(), lambda m: m.tensor(0.1).tolist(),
    lambda m: m.ones(2, 0).tolist(), lambda m: m.ones(2, requires_grad=True).tolist(),
    lambda m: m.arange(6).reshape(2, 3).t().tolist(),
]


@pytest.mark.parametrize("fn", CONVERSIONS, ids=range(len(CONVERSIONS)))
def test_conversions(fn):
    _both(fn)


def test_element_types():
    for value in (ember.tensor(2).item(), ember.tensor([[1, 2]]).tolist()[0][0]):
        assert type(value) is int
    for dtype in (ember.float16, ember.bfloat16, ember.float32, ember.float64):
        assert type(ember.tensor(1.5, dtype=dtype).item()) is float
        assert type(ember.tensor([1.5], dtype=dtype).tolist()[0]) is float
    assert type(ember.tensor([True]).tolist()[0]) is bool


ERRORS = [
    lambda m: len(m.tensor(1.0)), lambda m: list(m.tensor(1.0)),
    lambda m: bool(m.ones(2)), lambda m: bool(m.ones(0)),
    lambda m: int(m.ones(2)), lambda m: int(m.tensor(float("nan"))), lambda m: float(m.ones(2)),
    lambda m: float(m.ones(0)), lambda m: complex(m.ones(2)),
    lambda m: operator.index(m.tensor(3.0)), lambda m: operator.index(m.tensor([1, 2])),
    lambda m: [1, 2][m.tensor(0.0)],
    lambda m: f"{m.ones(2):.3f}", lambda m: f"{m.tensor([2.5]):.3f}",
    lambda m: m.ones(2).item(), lambda m: m.ones(0).item(),
    lambda m: m.ones(2, requires_grad=True).numpy(),
    lambda m: np.asarray(m.ones(2, requires_grad=True)),
    lambda m: copy.deepcopy(m.ones(2, requires_grad=True) * 2),
]


@pytest.mark.parametrize("fn", ERRORS, ids=range(len(ERRORS)))
def test_errors(fn):
    check_raises(fn)


def test_bool_messages():
    with pytest.raises(RuntimeError, match="more than one value"):
        bool(ember.ones(2))
    with pytest.raises(RuntimeError, match="no values"):
        bool(ember.ones(0))


def test_hash_is_identity():
    t = ember.ones(2)
    assert hash(t) == object.__hash__(t)
    assert {t: 1}[t] == 1
    assert len({ember.ones(1), ember.ones(1)}) == 2


def test_numpy_shares_memory():
    t = ember.zeros(2, 3)
    a = t.numpy()
    a[0, 1] = 5.0
    assert t[0, 1].item() == 5.0
    t[1, 2] = 7.0
    assert a[1, 2] == 7.0
    view = t.t()
    assert np.shares_memory(view.numpy(), a)
    assert view.numpy().shape == (3, 2)
    assert t.numpy().dtype == np.float32
    assert ember.ones(2, dtype=ember.int16).numpy().dtype == np.int16


def test_numpy_of_a_tensor_that_requires_grad():
    t = ember.ones(2, requires_grad=True)
    forced = t.numpy(force=True)
    np.testing.assert_array_equal(forced, [1.0, 1.0])
    assert np.shares_memory(t.detach().numpy(), forced)


def test_array_protocol():
    t = ember.arange(6.0).reshape(2, 3)
    a = np.asarray(t)
    assert np.shares_memory(a, t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    copied = np.array(t, copy=True)
    copied[0, 0] = 100
    assert t[0, 0].item() == 0
    with pytest.raises(ValueError):
        np.array(t, dtype=np.float64, copy=False)
    np.testing.assert_array_equal(np.asarray(ember.tensor(2.0)), np.asarray(torch.tensor(2.0)))
    assert np.asarray(ember.ones(2, dtype=ember.bfloat16)).astype(np.float32).tolist() == [1, 1]


def test_deepcopy_of_a_leaf():
    for lib in (ember, torch):
        x = lib.ones(2, requires_grad=True)
        x.grad = lib.full((2,), 3.0)
        x.note = "kept"
        c = copy.deepcopy(x)
        assert c.requires_grad and c.is_leaf and c.note == "kept"
        assert c.grad.tolist() == [3.0, 3.0]
        assert c.data_ptr() != x.data_ptr() and c.grad.data_ptr() != x.grad.data_ptr()
        with lib.no_grad():
            c.add_(1)
        assert x.tolist() == [1.0, 1.0]


def test_deepcopy_keeps_memory_order_and_memo():
    base = ember.arange(6.0).reshape(2, 3)
    c = copy.deepcopy(base.t())
    assert c.stride() == torch.arange(6.0).reshape(2, 3).t().stride()
    assert c.tolist() == base.t().tolist()
    t = ember.ones(3)
    first, second = copy.deepcopy([t, t])
    assert first is second and first is not t
    plain = ember.ones(2)
    c = copy.deepcopy(plain)
    assert not c.requires_grad and c.grad is None and vars(c) == {}


def test_deepcopy_of_other_dtypes():
    for dtype in (ember.int64, ember.bool, ember.bfloat16, ember.float16):
        t = ember.ones(3, dtype=dtype)
        c = copy.deepcopy(t)
        assert c.dtype is dtype and c.tolist() == t.tolist()

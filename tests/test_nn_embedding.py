"""Embedding and EmbeddingBag vs torch: lookups, gradients with repeated indices, padding_idx,
scale_grad_by_freq, max_norm renormalisation, from_pretrained, bags (sum/mean/max, offsets,
include_last_offset, per_sample_weights, empty bags), errors, double backward."""
import numpy as np
import pytest

import ember
import ember.nn.functional as EF

from .oracle import as_numpy, assert_close, check, check_raises
from .test_nn_activation import build, compare_modules

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)


def W(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def idx(*values):
    return np.array(values, dtype=np.int64)


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1},
                                    {"scale_grad_by_freq": True},
                                    {"max_norm": 1.0}, {"max_norm": 0.5, "norm_type": 1.0}])
def test_embedding_module_against_torch(kwargs):
    t, e = build("Embedding", 7, 3, **kwargs)
    indices = idx(1, 2, 2, 6, 0, 2, 1, 5).reshape(2, 4)  # repeats accumulate in the gradient
    compare_modules(t, e, indices)
    assert_close(e.weight, t.weight, what="weight after the forward (max_norm renormalises)")
    if "padding_idx" in kwargs:
        row = e.padding_idx
        assert row == t.padding_idx
        assert np.all(as_numpy(e.weight.grad)[row] == 0)


def test_embedding_init_and_padding_row():
    e = ember.nn.Embedding(400, 50, padding_idx=3)
    w = as_numpy(e.weight)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02  # N(0, 1)
    assert np.all(w[3] == 0)
    assert [n for n, _ in e.named_parameters()] == ["weight"] and e.weight.shape == (400, 50)


def test_functional_embedding_cases():
    w = W(6, 4)
    for fn, i in [(lambda m, a, b: m.nn.functional.embedding(b, a), idx(0, 5, 5, 2)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a), np.array(3)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a, padding_idx=0),
                   idx(0, 1, 0, 2).reshape(2, 2)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a, scale_grad_by_freq=True,
                                                             padding_idx=1),
                   idx(1, 3, 3, 3, 4)),
                  (lambda m, a, b: m.nn.functional.embedding(b.int(), a), idx(2, 2, 1)),
                  (lambda m, a, b: m.embedding(a, b), idx(0, 4)),
                  (lambda m, a, b: m.embedding(a, b, 2), idx(2, 4))]:
        check(fn, [w, i])
    check(lambda m, a, b: m.nn.functional.embedding(b, a), [W(6, 4, dtype="float64"),
                                                            idx(1, 1, 4)])


def test_max_norm_renormalises_in_place_like_torch():
    w = W(5, 3) * 3
    t_w, e_w = torch.from_numpy(w.copy()), ember.from_numpy(w.copy())
    i = idx(0, 2, 2)
    t_out = torch.nn.functional.embedding(torch.from_numpy(i), t_w, max_norm=1.5)
    e_out = EF.embedding(ember.from_numpy(i), e_w, max_norm=1.5)
    assert_close(e_out, t_out)
    assert_close(e_w, t_w)  # rows 0 and 2 shrunk, the others untouched
    np.testing.assert_array_equal(as_numpy(e_w)[[1, 3, 4]], w[[1, 3, 4]])
    assert_close(ember.embedding_renorm_(ember.from_numpy(w.copy()), ember.from_numpy(i), 2.0,
                                         1.0),
                 torch.embedding_renorm_(torch.from_numpy(w.copy()), torch.from_numpy(i), 2.0,
                                         1.0))


def test_from_pretrained():
    w = W(4, 3)
    for freeze in (True, False):
        t = torch.nn.Embedding.from_pretrained(torch.from_numpy(w.copy()), freeze=freeze,
                                               padding_idx=1)
        e = ember.nn.Embedding.from_pretrained(ember.from_numpy(w.copy()), freeze=freeze,
                                               padding_idx=1)
        assert e.weight.requires_grad == t.weight.requires_grad == (not freeze)
        assert repr(e) == repr(t)
        assert_close(e(ember.tensor([1, 3])), t(torch.tensor([1, 3])))
        tb = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(w.copy()), freeze=freeze,
                                                   mode="max")
        eb = ember.nn.EmbeddingBag.from_pretrained(ember.from_numpy(w.copy()), freeze=freeze,
                                                   mode="max")
        assert eb.weight.requires_grad == tb.weight.requires_grad and repr(eb) == repr(tb)
    check_raises(lambda m: m.nn.Embedding.from_pretrained(m.ones(3)))


def test_embedding_errors():
    w = W(5, 2)
    for fn, i in [(lambda m, a, b: m.nn.functional.embedding(b, a), idx(5)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a), idx(-1)),
                  (lambda m, a, b: m.nn.functional.embedding(b.float(), a), idx(1)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a, padding_idx=5), idx(1)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a, padding_idx=-6), idx(1)),
                  (lambda m, a, b: m.nn.functional.embedding(b, a[0]), idx(1)),
                  (lambda m, a, b: m.nn.Embedding(5, 2, padding_idx=5), idx(1)),
                  (lambda m, a, b: m.nn.Embedding(5, 2, _weight=a[:3]), idx(1))]:
        check_raises(fn, [w, i])
    with pytest.raises(NotImplementedError):
        ember.nn.Embedding(5, 2, sparse=True)
    with pytest.raises(NotImplementedError):
        EF.embedding(ember.tensor([1]), ember.from_numpy(w), sparse=True)


def test_embedding_double_backward():
    w = ember.from_numpy(W(6, 3, dtype="float64")).requires_grad_()
    i = ember.tensor([[0, 2, 2], [5, 1, 2]])
    assert ember.autograd.gradcheck(lambda a: EF.embedding(i, a), (w,))
    # padding_idx withholds a true gradient on purpose, so only the second order is checked
    assert ember.autograd.gradgradcheck(lambda a: EF.embedding(i, a, padding_idx=1) ** 2, (w,))


def test_embedding_backward_accumulates_many_repeats():
    i = rng.integers(0, 50, 5000)
    w = W(50, 8)
    check(lambda m, a, b: m.nn.functional.embedding(b, a), [w, i], grad_rtol=1e-4,
          grad_atol=1e-4)


BAGS = [
    ({"mode": "sum"}, [idx(1, 2, 4, 5, 4, 3, 2, 9), idx(0, 4)]),
    ({"mode": "mean"}, [idx(1, 2, 4, 5, 4, 3, 2, 9), idx(0, 4)]),
    ({"mode": "max"}, [idx(1, 2, 4, 5, 4, 3, 2, 9), idx(0, 4)]),
    ({"mode": "mean"}, [idx(1, 2, 4, 5, 4, 3, 2, 9), idx(0, 3, 3, 8)]),  # an empty bag
    ({"mode": "max"}, [idx(1, 2, 4, 5, 4, 3, 2, 9), idx(0, 3, 3, 8)]),
    # the last offset is the input's length, as torch documents it: with a shorter one torch
    # 2.13's weight gradient holds uninitialised memory in the rows of the unused indices
    ({"mode": "sum", "include_last_offset": True}, [idx(1, 2, 4, 5, 4, 3, 2, 9),
                                                    idx(0, 2, 5, 8)]),
    ({"mode": "mean", "include_last_offset": True}, [idx(1, 2, 4, 5), idx(0, 2, 4)]),
    ({"mode": "sum"}, [idx(1, 2, 4, 5, 4, 3).reshape(2, 3)]),
    ({"mode": "max"}, [idx(1, 2, 4, 5, 4, 3).reshape(3, 2)]),
    ({"mode": "mean", "padding_idx": 2}, [idx(1, 2, 4, 5, 2, 2, 2, 9), idx(0, 4, 5)]),
    ({"mode": "max", "padding_idx": 4}, [idx(1, 2, 4, 5, 4, 4, 2, 9), idx(0, 4, 6)]),
    ({"mode": "mean", "max_norm": 1.0}, [idx(1, 2, 4, 5, 4, 3), idx(0, 2)]),
]


@pytest.mark.parametrize("kwargs,inputs", [pytest.param(k, i, id=str(k)) for k, i in BAGS])
def test_embedding_bag_module_against_torch(kwargs, inputs):
    t, e = build("EmbeddingBag", 10, 3, **kwargs)
    compare_modules(t, e, *inputs)
    assert_close(e.weight, t.weight)


def test_embedding_bag_scale_grad_by_freq():
    """Each weight row's gradient divided by how often its index occurs, as F.embedding does.
    (torch 2.13's CPU embedding_bag divides some rows by another row's count -- it reads the
    count at the wrong position of its sorted indices -- so the expected value is built from
    torch's unscaled gradient.)"""
    w, i, o = W(10, 3), idx(1, 2, 2, 5, 2, 3), idx(0, 2)
    t_w = torch.from_numpy(w.copy()).requires_grad_()
    torch.nn.functional.embedding_bag(torch.from_numpy(i), t_w, torch.from_numpy(o),
                                      mode="sum").pow(2).sum().backward()
    counts = np.maximum(np.bincount(i, minlength=10), 1)[:, None]
    e_w = ember.from_numpy(w.copy()).requires_grad_()
    EF.embedding_bag(ember.from_numpy(i), e_w, ember.from_numpy(o), mode="sum",
                     scale_grad_by_freq=True).pow(2).sum().backward()
    np.testing.assert_allclose(as_numpy(e_w.grad), t_w.grad.numpy() / counts, rtol=1e-5)


def test_embedding_bag_per_sample_weights():
    w, i, o, psw = W(10, 3), idx(1, 2, 4, 5, 4, 3, 2, 9), idx(0, 3, 3, 6), W(8)
    check(lambda m, a, b, c, d: m.nn.functional.embedding_bag(b, a, c, mode="sum",
                                                              per_sample_weights=d),
          [w, i, o, psw])
    check(lambda m, a, b, d: m.nn.functional.embedding_bag(b, a, mode="sum",
                                                           per_sample_weights=d, padding_idx=4),
          [w, i.reshape(2, 4), psw.reshape(2, 4)])


def test_embedding_bag_errors():
    w, i = W(10, 3), idx(1, 2, 4, 5)
    for fn in [lambda m, a, b: m.nn.functional.embedding_bag(b, a),
               lambda m, a, b: m.nn.functional.embedding_bag(b.reshape(2, 2), a, b),
               lambda m, a, b: m.nn.functional.embedding_bag(b.reshape(1, 2, 2), a),
               lambda m, a, b: m.nn.functional.embedding_bag(b, a, b.reshape(2, 2)),
               lambda m, a, b: m.nn.functional.embedding_bag(b, a, b[:2] * 0, mode="foo"),
               lambda m, a, b: m.nn.functional.embedding_bag(b, a, b[:2] * 0, mode="max",
                                                             scale_grad_by_freq=True),
               lambda m, a, b: m.nn.functional.embedding_bag(b, a, b[:2] * 0, mode="mean",
                                                             per_sample_weights=a[0, :1]),
               lambda m, a, b: m.nn.functional.embedding_bag(b, a, b[:2] * 0, mode="mean",
                                                             per_sample_weights=a[:4, 0]),
               lambda m, a, b: m.nn.functional.embedding_bag(b, a[0], b[:2] * 0),
               lambda m, a, b: m.nn.EmbeddingBag(5, 2, padding_idx=7)]:
        check_raises(fn, [w, i])
    with pytest.raises(NotImplementedError):
        ember.nn.EmbeddingBag(5, 2, sparse=True)


def test_reprs():
    for args, kwargs in [((5, 3), {}), ((5, 3), {"padding_idx": 1, "max_norm": 2.0,
                                                 "norm_type": 1.0, "scale_grad_by_freq": True})]:
        assert repr(ember.nn.Embedding(*args, **kwargs)) == repr(torch.nn.Embedding(*args,
                                                                                    **kwargs))
    for kwargs in [{}, {"mode": "sum", "padding_idx": 0, "max_norm": 1.0},
                   {"include_last_offset": True, "scale_grad_by_freq": True, "norm_type": 3}]:
        assert repr(ember.nn.EmbeddingBag(5, 3, **kwargs)) == repr(torch.nn.EmbeddingBag(
            5, 3, **kwargs))

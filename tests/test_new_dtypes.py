"""uint16/uint32/uint64 and the float8 dtypes against torch: what torch supports of them
(creation, casts, printing, promotion refusals, limits, checkpoints)."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

WIDE = ["uint16", "uint32", "uint64"]
FLOAT8 = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
          "float8_e8m0fnu"]


@pytest.mark.parametrize("name", WIDE + FLOAT8)
def test_create_cast_print(name):
    values = [[1.0, 2.0, 4.0], [8.0, 0.5, 16.0]]
    check(lambda m: m.tensor(values).to(getattr(m, name)), [], grad=False)
    check(lambda m: m.tensor(values).to(getattr(m, name)).float(), [], grad=False)
    check(lambda m: (m.zeros(2, 3, dtype=getattr(m, name)), m.ones(3, dtype=getattr(m, name)),
                     m.empty(0, dtype=getattr(m, name))), [], grad=False)
    check(lambda m: (m.tensor(values).to(getattr(m, name))[1],
                     m.tensor(values).to(getattr(m, name)).t()[0],
                     m.cat([m.ones(2, dtype=getattr(m, name))] * 2)), [], grad=False)
    e, t = (m.tensor(values).to(getattr(m, name)) for m in (ember, torch))
    assert repr(e) == repr(t).replace("torch", "ember")
    assert e.type() == t.type()  # torch's names (programs compare them)
    assert getattr(ember, name).is_floating_point == getattr(torch, name).is_floating_point
    assert getattr(ember, name).itemsize == getattr(torch, name).itemsize


@pytest.mark.parametrize("name", WIDE)
def test_wide_unsigned_arithmetic_and_limits(name):
    check(lambda m: (m.tensor([1, 2, 3], dtype=getattr(m, name)) * 2,
                     m.tensor([1, 2, 3], dtype=getattr(m, name)) == 2,
                     m.tensor([1, 2, 3], dtype=getattr(m, name)).sum(),
                     m.tensor([1, 2, 3], dtype=getattr(m, name)) / 2), [], grad=False)
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    assert (e.min, e.max, e.bits) == (t.min, t.max, t.bits)
    a = np.array([1, 2], dtype=name)
    assert ember.from_numpy(a).dtype is getattr(ember, name)


@pytest.mark.parametrize("name", FLOAT8)
def test_float8_limits(name):
    assert repr(ember.finfo(getattr(ember, name))) == repr(torch.finfo(getattr(torch, name)))


@pytest.mark.parametrize("a, b", [("uint32", "int64"), ("uint16", "uint8"), ("uint64", "bool"),
                                  ("uint16", "uint32"), ("float8_e5m2", "float32"),
                                  ("float8_e4m3fn", "float8_e5m2"), ("float8_e4m3fn", "int8")])
def test_promotion_is_refused(a, b):
    for x, y in ((a, b), (b, a)):
        check_raises(lambda m: m.promote_types(getattr(m, x), getattr(m, y)), [],
                     match="Promotion for")


@pytest.mark.parametrize("a, b", [("uint16", "float32"), ("uint64", "float16"),
                                  ("uint32", "uint32"), ("float8_e5m2", "float8_e5m2")])
def test_promotion_that_exists(a, b):
    for x, y in ((a, b), (b, a)):
        assert ember.promote_types(getattr(ember, x), getattr(ember, y)).name == \
            str(torch.promote_types(getattr(torch, x), getattr(torch, y))).split(".")[1]


@pytest.mark.parametrize("name", WIDE + FLOAT8)
def test_checkpoints_cross_both_ways(name, tmp_path):
    path = tmp_path / "t.pt"
    t = torch.tensor([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]).to(getattr(torch, name))
    torch.save({"t": t, "view": t.t()}, path)
    loaded = ember.load(path)
    assert loaded["t"].dtype is getattr(ember, name)
    assert loaded["view"].float().tolist() == t.t().float().tolist()
    e = ember.tensor([[1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]).to(getattr(ember, name))
    ember.save({"t": e, "p": ember.nn.Parameter(e[0], requires_grad=False)}, path)
    back = torch.load(path)
    assert back["t"].dtype is getattr(torch, name)
    assert back["t"].float().tolist() == t.float().tolist()
    assert isinstance(back["p"], torch.nn.Parameter)


def test_hash_tensor_errors():
    check_raises(lambda m: m.hash_tensor(m.ones(0)), [], match="Expected reduction dim")
    check_raises(lambda m: m.hash_tensor(m.ones(2), mode=1), [],
                 match="Unknown hash_tensor mode: 1")
    assert ember.hash_tensor(ember.ones(0, 2), 0).tolist() == [0, 0]

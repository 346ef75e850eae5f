"""dtypes against torch: attributes, promote_types and can_cast for every pair, finfo/iinfo,
result_type, and the default dtype's effect on factories and promotion."""
import itertools

import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
PAIRS = list(itertools.product(NAMES, NAMES))


def name_of(d):
    return str(d).split(".")[-1]


@pytest.fixture
def default_dtype():
    """Set the default dtype in both libraries; restore float32 afterwards."""
    def both(name):
        torch.set_default_dtype(getattr(torch, name))
        ember.set_default_dtype(getattr(ember, name))
    yield both
    torch.set_default_dtype(torch.float32)
    ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes(name):
    e, t = getattr(ember, name), getattr(torch, name)
    for attr in ("is_floating_point", "is_signed", "itemsize", "is_complex"):
        assert getattr(e, attr) == getattr(t, attr), attr
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert name_of(e.to_real()) == name_of(t.to_real())


@pytest.mark.parametrize("alias", ["half", "float", "double", "short", "int", "long"])
def test_aliases(alias):
    assert name_of(getattr(ember, alias)) == name_of(getattr(torch, alias))


@pytest.mark.parametrize("a,b", PAIRS)
def test_promote_types(a, b):
    got = ember.promote_types(getattr(ember, a), getattr(ember, b))
    assert name_of(got) == name_of(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("a,b", PAIRS)
def test_can_cast(a, b):
    got = ember.can_cast(getattr(ember, a), getattr(ember, b))
    assert got == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(e, field) == getattr(t, field), field
        assert type(getattr(e, field)) is type(getattr(t, field)), field
    assert repr(e) == repr(t)
    assert e == ember.finfo(getattr(ember, name))


def test_finfo_default_follows_default_dtype(default_dtype):
    assert ember.finfo().dtype == torch.finfo().dtype == "float32"
    default_dtype("float64")
    assert ember.finfo().dtype == torch.finfo().dtype == "float64"


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
    for field in ("bits", "max", "min", "dtype"):
        assert getattr(e, field) == getattr(t, field), field
        assert type(getattr(e, field)) is type(getattr(t, field)), field
    assert repr(e) == repr(t)


@pytest.mark.parametrize("fn", [
    lambda m: m.finfo(m.int32), lambda m: m.finfo(m.bool), lambda m: m.iinfo(m.float32),
    lambda m: m.iinfo(m.bool), lambda m: m.finfo(3), lambda m: m.iinfo(),
    lambda m: m.iinfo("int32"),
], ids=["finfo-int", "finfo-bool", "iinfo-float", "iinfo-bool", "finfo-int-arg",
        "iinfo-no-arg", "iinfo-str"])
def test_info_errors(fn):
    check_raises(fn)


@pytest.mark.parametrize("fn", [
    lambda m: m.result_type(m.ones(2), 1.0),
    lambda m: m.result_type(m.ones(2, dtype=m.int32), 1.0),
    lambda m: m.result_type(m.ones(2, dtype=m.int32), m.tensor(1.0, dtype=m.float64)),
    lambda m: m.result_type(m.tensor(1), m.ones(2, dtype=m.float16)),
    lambda m: m.result_type(m.ones(2, dtype=m.uint8), m.ones(2, dtype=m.int8)),
    lambda m: m.result_type(m.ones(2, dtype=m.bool), True),
    lambda m: m.result_type(m.ones(2, dtype=m.bool), 3),
    lambda m: m.result_type(m.tensor(1.0, dtype=m.float64), m.tensor(2, dtype=m.int8)),
    lambda m: m.result_type(2, 3.5),
    lambda m: m.result_type(2, 3),
], ids=range(10))
def test_result_type(fn):
    assert name_of(fn(ember)) == name_of(fn(torch))


def test_tensor_dtype_queries():
    for name in NAMES:
        e = ember.zeros(2, dtype=getattr(ember, name))
        t = torch.zeros(2, dtype=getattr(torch, name))
        assert ember.is_floating_point(e) == torch.is_floating_point(t) == e.is_floating_point()
        assert ember.is_signed(e) == torch.is_signed(t) == e.is_signed()
        assert ember.is_complex(e) == torch.is_complex(t) is False
        assert e.element_size() == t.element_size() == e.itemsize
    check_raises(lambda m: m.is_floating_point(1.0))


def test_default_dtype_rules(default_dtype):
    check_raises(lambda m: m.set_default_dtype(m.int32))
    check_raises(lambda m: m.set_default_dtype("float64"))
    for name in ("float64", "float16", "bfloat16", "float32"):
        default_dtype(name)
        assert ember.get_default_dtype() is getattr(ember, name)


FACTORIES = [
    lambda m: m.tensor([1.5, 2]), lambda m: m.tensor(1.0), lambda m: m.tensor([1, 2]),
    lambda m: m.arange(0, 1, 0.25), lambda m: m.arange(3), lambda m: m.arange(3.0),
    lambda m: m.ones(2), lambda m: m.zeros(2), lambda m: m.empty(2).zero_(),
    lambda m: m.full((2,), 2.5), lambda m: m.full((2,), 2), lambda m: m.linspace(0, 1, 3),
    lambda m: m.logspace(0, 1, 3), lambda m: m.eye(2), lambda m: m.scalar_tensor(2),
    lambda m: m.rand(3).mul(0), lambda m: m.randn(3).mul(0), lambda m: m.tensor([1, 2]) * 1.5,
    lambda m: m.tensor([1, 2]) / 2, lambda m: m.tensor(True) + 1.5,
]


@pytest.mark.parametrize("name", ["float64", "float16", "float32"])
@pytest.mark.parametrize("fn", FACTORIES, ids=range(len(FACTORIES)))
def test_default_dtype_reaches_factories_and_promotion(default_dtype, name, fn):
    default_dtype(name)
    check(fn, [], grad=False)


def test_changing_default_dtype_after_an_op_ran(default_dtype):
    """Dispatch caches promotions: changing the default dtype must not reuse stale entries."""
    check(lambda m: m.tensor([1, 2]) * 1.5, [], grad=False)
    default_dtype("float64")
    check(lambda m: m.tensor([1, 2]) * 1.5, [], grad=False)

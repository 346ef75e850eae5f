"""Legacy typed tensors and storages against torch (ember/_legacy.py): FloatTensor & co. as
constructors and in isinstance, x.type(...), FloatStorage & co., set_default_tensor_type."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
         "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]
STORAGES = [name.replace("Tensor", "Storage") for name in TYPES] + [
    "ComplexFloatStorage", "ComplexDoubleStorage"]  # (torch has no complex tensor types)


@pytest.fixture(autouse=True)
def _quiet_typed_storage():
    """torch warns once per process that TypedStorage is deprecated."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "TypedStorage is deprecated")
        yield


def test_the_type_names_are_torchs():
    assert set(TYPES) == {n for n in dir(torch) if n.endswith("Tensor") and
                          isinstance(getattr(torch, n), type(torch.FloatTensor))}
    for name in TYPES:
        cls = getattr(ember, name)
        assert cls.__name__ == name and str(getattr(cls, "dtype")) == \
            str(getattr(torch, name).dtype).replace("torch", "ember")
        assert not issubclass(cls, ember.Tensor) and not issubclass(getattr(torch, name),
                                                                    torch.Tensor)


@pytest.mark.parametrize("name", TYPES)
def test_constructors(name):
    def fn(m):
        cls = getattr(m, name)
        return (cls([1, 0, 2]), cls([[1.7, -1.2]]) if "Byte" not in name else cls([[1.7]]),
                cls(2, 3).shape, cls(m.Size([4])).shape, cls().shape, cls((2, 3)),
                cls(np.array([1, 2])), cls([1], device="cpu"))

    check(fn, [], grad=False)


def test_constructor_errors():
    check_raises(lambda m: m.FloatTensor(m.ones(2, dtype=m.int64)))
    check_raises(lambda m: m.ByteTensor([256]))
    check_raises(lambda m: m.FloatTensor(2, dtype=m.float64))
    check_raises(lambda m: m.FloatTensor("abc"))


def test_a_tensor_of_the_type_is_itself():
    x = ember.ones(2)
    assert ember.FloatTensor(x) is x
    t = torch.ones(2)
    assert torch.FloatTensor(t).data_ptr() == t.data_ptr()


@pytest.mark.parametrize("name", TYPES)
def test_isinstance_looks_at_dtype_and_device(name):
    def fn(m):
        cls = getattr(m, name)
        tensors = [m.ones(2, dtype=getattr(m, d)) for d in
                   ("float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16",
                    "int32", "int64", "bool")]
        return ([isinstance(t, cls) for t in tensors],
                isinstance(m.nn.Parameter(m.ones(2)), cls), isinstance(3, cls),
                isinstance(cls([1]), m.Tensor), type(cls([1])) is m.Tensor)

    check(fn, [], grad=False)


def test_type_with_and_without_arguments():
    def fn(m):
        x = m.tensor([1.5, -2.0])
        return (x.type(), x.long().type(), x.bool().type(), x.bfloat16().type(),
                x.type(m.DoubleTensor), x.type("torch.LongTensor"), x.type(m.int32),
                x.type(m.FloatTensor) is x, x.type(m.IntTensor).type(),
                x.type(m.complex64).type(), x.type("torch.ComplexDoubleTensor"),
                m.ones(2, dtype=m.uint16).type())

    check(fn, [], grad=False)
    check_raises(lambda m: m.ones(2).type("torch.NoSuchTensor"))


@pytest.mark.parametrize("name", STORAGES)
def test_typed_storages(name):
    def fn(m):
        cls = getattr(m, name)
        made = cls([1, 0, 1])
        sized = cls(3)
        return (made.tolist(), len(sized), sized.dtype is cls.dtype, len(cls()),
                isinstance(made, cls), isinstance(made, m.storage.TypedStorage),
                isinstance(made, m.FloatStorage if name != "FloatStorage" else m.LongStorage))

    check(fn, [], grad=False)


def test_storage_type_and_torch_storage():
    """Tensor.storage_type() names the legacy storage type of the dtype; torch.Storage is the
    default dtype's, following set_default_dtype."""
    before_ember, before_torch = ember.get_default_dtype(), torch.get_default_dtype()
    try:
        def fn(m):
            names = [m.ones(2, dtype=getattr(m, d)).storage_type().__name__ for d in
                     ("float32", "int64", "bool", "uint8", "bfloat16", "complex64",
                      "complex128")]
            first = m.Storage.__name__
            m.set_default_dtype(m.float64)
            return (names, first, m.Storage.__name__, isinstance(m.DoubleStorage(2), m.Storage),
                    m.ones(2, dtype=m.uint16).storage_type() is None)

        check(fn, [], grad=False)
    finally:
        ember.set_default_dtype(before_ember)
        torch.set_default_dtype(before_torch)


def test_storage_errors():
    check_raises(lambda m: m.FloatStorage(2.5))
    check_raises(lambda m: m.FloatStorage([1], device="cpu"))


def test_tensor_from_a_storage_shares_its_memory():
    def fn(m):
        storage = m.FloatStorage([1, 2, 3])
        t = m.FloatTensor(storage)
        t[0] = 7
        untyped = m.FloatStorage([1.5, 2.5]).untyped()
        return (t, storage.tolist(), m.LongTensor(m.LongStorage([4, 5])),
                m.FloatTensor(untyped), m.IntTensor(untyped))

    check(fn, [], grad=False)
    check_raises(lambda m: m.FloatTensor(m.LongStorage([1])))


def test_set_default_tensor_type():
    before_ember, before_torch = ember.get_default_dtype(), torch.get_default_dtype()
    try:
        def fn(m):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (once per process: see the test below)
                m.set_default_tensor_type(m.DoubleTensor)
                made = (m.tensor([1.5]), str(m.Tensor(2).dtype), str(m.get_default_dtype()))
                m.set_default_tensor_type("torch.FloatTensor")
            return [name.split(".")[-1] if isinstance(name, str) else name for name in
                    made + (str(m.get_default_dtype()),)]

        check(fn, [], grad=False)
        for bad in (lambda m: m.set_default_tensor_type(m.LongTensor),
                    lambda m: m.set_default_tensor_type(m.float64),
                    lambda m: m.set_default_tensor_type("torch.IntTensor")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check_raises(bad)
    finally:
        ember.set_default_dtype(before_ember)
        torch.set_default_dtype(before_torch)


def test_set_default_tensor_type_warns_once_per_process():
    script = ("import warnings, {lib}\n"
              "with warnings.catch_warnings(record=True) as seen:\n"
              "    warnings.simplefilter('always')\n"
              "    {lib}.set_default_tensor_type({lib}.DoubleTensor)\n"
              "    {lib}.set_default_tensor_type({lib}.FloatTensor)\n"
              "print(sum('set_default_tensor_type' in str(w.message) for w in seen))\n")
    counts = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True,
                             text=True, timeout=120).stdout.strip() for lib in ("ember", "torch")]
    assert counts == ["1", "1"]


def test_new_makes_tensors_like_self():
    def fn(m):
        x = m.ones(2, dtype=m.float64)
        return x.new(3).shape, x.new([1, 2]), x.new().shape, x.new(2, 2).dtype is x.dtype

    check(fn, [], grad=False)


def test_cuda_tensor_types():
    """torch.cuda.FloatTensor & co.: the same names; CPU tensors are not instances; without a
    GPU constructing one raises (torch: TypeError, ember: RuntimeError naming CuPy)."""
    assert {n for n in TYPES} == {n for n in dir(torch.cuda) if n.endswith("Tensor")}
    for name in TYPES:
        cls = getattr(ember.cuda, name)
        assert repr(cls) == f"<class 'ember.cuda.{name}'>" and cls.is_cuda
        assert not isinstance(ember.ones(2, dtype=cls.dtype), cls)
        assert isinstance(ember.ones(2, dtype=cls.dtype), getattr(ember, name))
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError):
            ember.cuda.FloatTensor([1.0])

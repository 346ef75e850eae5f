"""ember.utils.safetensors: files exchanged with the real `safetensors` package both ways
(its torch and numpy front ends), the byte layout, and broken files."""
import json
import struct

import ml_dtypes
import numpy as np
import pytest

import ember
from ember.utils import safetensors as est

try:
    import safetensors
    import safetensors.numpy as st_numpy
    import safetensors.torch as st_torch
    import torch
except ImportError:  # the exchange tests skip; the format tests still run
    safetensors = st_numpy = st_torch = torch = None

needs_safetensors = pytest.mark.skipif(st_torch is None, reason="needs safetensors and torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]


def sample(dtype, shape=(2, 3)):
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5 - 2
    if dtype == "bool":
        return np.asarray(values > 0)
    if dtype == "bfloat16":
        return np.asarray(values, dtype=ml_dtypes.bfloat16)
    if dtype.startswith(("int", "uint")):
        values = np.abs(values) * 2
    return np.asarray(values, dtype=dtype)


def arrays():
    out = {f"t_{d}": sample(d) for d in DTYPES}
    out.update(scalar=sample("float32", ()), empty=np.zeros((0, 4), np.int64),
               transposed=sample("float64", (3, 4)).T)  # non-contiguous
    return out


def as_numpy(t):
    if torch is not None and isinstance(t, torch.Tensor):
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    array = np.asarray(t)
    return array.astype(np.float32) if array.dtype == ml_dtypes.bfloat16 else array


def to_torch(array):
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(array, order="C"))


def check(loaded, expected):
    assert sorted(loaded) == sorted(expected)
    for name, array in expected.items():
        got = as_numpy(loaded[name])
        want = array.astype(np.float32) if array.dtype == ml_dtypes.bfloat16 else array
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want)


@needs_safetensors
def test_ember_file_read_by_safetensors(tmp_path):
    path = tmp_path / "e.safetensors"
    est.save_file({k: ember.from_numpy(v.copy()) if v.flags.c_contiguous else
                   ember.from_numpy(v.T.copy()).t() for k, v in arrays().items()}, path,
                  metadata={"format": "pt", "note": "ember"})
    check(st_torch.load_file(path), arrays())
    no_bf16 = {k: v for k, v in arrays().items() if v.dtype != ml_dtypes.bfloat16}
    with safetensors.safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "pt", "note": "ember"}
        loaded = {k: f.get_tensor(k) for k in no_bf16}
    check(loaded, no_bf16)


@needs_safetensors
def test_safetensors_files_read_by_ember(tmp_path):
    path = tmp_path / "t.safetensors"
    st_torch.save_file({k: to_torch(v) for k, v in arrays().items()}, path,
                       metadata={"source": "torch"})
    check(est.load_file(path), arrays())
    assert est.metadata(path) == {"source": "torch"}
    no_bf16 = {k: np.array(v, order="C") for k, v in arrays().items()
               if v.dtype != ml_dtypes.bfloat16}
    st_numpy.save_file(no_bf16, path)
    check(est.load_file(path, device="cpu"), no_bf16)


@needs_safetensors
def test_bytes_both_ways():
    tensors = {k: ember.from_numpy(np.array(v, order="C")) for k, v in arrays().items()}
    check(st_torch.load(est.save(tensors)), arrays())
    check(est.load(st_torch.save({k: to_torch(v) for k, v in arrays().items()})), arrays())


def test_layout_and_round_trip():
    data = est.save({"a": ember.ones(3, dtype=ember.float16), "b": ember.zeros(2, 2)},
                    metadata={"k": "v"})
    length = struct.unpack("<Q", data[:8])[0]
    assert length % 8 == 0  # the data starts 8-byte aligned
    header = json.loads(data[8:8 + length])
    assert header["__metadata__"] == {"k": "v"}
    assert header["b"] == {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
    assert header["a"] == {"dtype": "F16", "shape": [3], "data_offsets": [16, 22]}
    assert len(data) == 8 + length + 22
    back = est.load(data)
    assert back["a"].dtype is ember.float16 and back["b"].tolist() == [[0.0, 0.0]] * 2
    back["a"][0] = 5.0  # loaded tensors are writable and own their memory
    assert back["a"].tolist() == [5.0, 1.0, 1.0]


def test_save_file_replaces_atomically(tmp_path):
    path = tmp_path / "x.safetensors"
    est.save_file({"a": ember.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        est.save_file({"a": [1, 2]}, path)
    assert path.read_bytes() == before
    assert est.load_file(str(path))["a"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("tensors, metadata", [
    ({"a": [1.0]}, None),
    ({1: ember.ones(1)}, None),
    ({"__metadata__": ember.ones(1)}, None),
    ({"a": ember.ones(1)}, {"k": 1}),
])
def test_bad_arguments(tensors, metadata):
    with pytest.raises((TypeError, ValueError)):
        est.save(tensors, metadata=metadata)


def _file(header, data=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("raw", [
    b"",
    b"\x05\x00",
    struct.pack("<Q", 1000) + b"{}",
    struct.pack("<Q", 4) + b"nope",
    _file([1, 2]),
    _file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\x00" * 4),
    _file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\x00" * 8),
    _file({"a": {"dtype": "X9", "shape": [1], "data_offsets": [0, 1]}}, b"\x00"),
    _file({"a": {"dtype": "F32", "shape": [1]}}, b"\x00" * 4),
], ids=["empty", "short", "long header", "not json", "not an object", "data cut",
        "size mismatch", "unknown dtype", "no offsets"])
def test_broken_files(tmp_path, raw):
    path = tmp_path / "broken.safetensors"
    path.write_bytes(raw)
    with pytest.raises(est.SafetensorError):
        est.load_file(path)
    with pytest.raises(est.SafetensorError):
        est.load(raw)


def test_dtypes_ember_lacks(tmp_path):
    path = tmp_path / "u16.safetensors"
    path.write_bytes(_file({"a": {"dtype": "U16", "shape": [2], "data_offsets": [0, 4]}},
                           b"\x00" * 4))
    with pytest.raises(NotImplementedError, match="U16"):
        est.load_file(path)

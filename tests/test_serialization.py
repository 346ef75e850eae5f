"""ember.save / ember.load: files exchanged with real torch both ways, sharing of storages,
weights_only safety, corrupt files, map_location, mmap, and plain pickling of tensors.

Every checkpoint here is written at run time (by ember or by torch) into pytest's tmp_path.
"""
import collections
import copy
import io
import os
import pickle
import struct
import zipfile

import ml_dtypes
import numpy as np
import pytest

import ember
from ember import serialization

try:
    import torch
except ImportError:  # the interop tests skip; the ember-only ones still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]


def sample(dtype_name, shape=(2, 3)):
    """A host array of `shape` with distinct values (0/1 for bool)."""
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 2.5
    if dtype_name == "bool":
        return np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 2 == 1)
    if dtype_name == "bfloat16":
        return np.asarray(values, dtype=ml_dtypes.bfloat16)
    if dtype_name.startswith(("int", "uint")):
        values = np.abs(values) * 3
    return np.asarray(values, dtype=dtype_name)


def ember_tensor(array):
    return ember.from_numpy(array.copy())


def torch_tensor(array):
    if array.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(array.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(array.copy())


def as_numpy(t):
    """Values of an ember or torch tensor as a NumPy array (bfloat16 widened)."""
    if torch is not None and isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    array = np.asarray(t.detach())
    return array.astype(np.float32) if array.dtype == ml_dtypes.bfloat16 else array


def same_values(a, b):
    np.testing.assert_array_equal(as_numpy(a), as_numpy(b))
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


def ptr(t):
    return t.untyped_storage().data_ptr()


# ----------------------------------------------------------------------------------------------
# every dtype, both ways


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_ember_save_torch_load_every_dtype(tmp_path, dtype):
    array = sample(dtype)
    path = tmp_path / "x.pt"
    ember.save({"x": ember_tensor(array), "scalar": ember_tensor(sample(dtype, ()))}, path)
    for loaded in (torch.load(path, weights_only=True),
                   torch.load(path, weights_only=True, mmap=True)):
        same_values(loaded["x"], ember_tensor(array))
        same_values(loaded["scalar"], ember_tensor(sample(dtype, ())))
        assert loaded["x"].dtype == getattr(torch, dtype)


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_save_ember_load_every_dtype(tmp_path, dtype):
    array = sample(dtype, (3, 2))
    path = tmp_path / "x.pt"
    torch.save({"x": torch_tensor(array), "t": torch_tensor(array).t()}, path)
    for loaded in (ember.load(path), ember.load(path, mmap=True)):
        same_values(loaded["x"], torch_tensor(array))
        same_values(loaded["t"], torch_tensor(array).t())
        assert loaded["x"].dtype is getattr(ember, dtype)


# ----------------------------------------------------------------------------------------------
# tensors sharing a storage


def _ember_views():
    x = ember.from_numpy(np.arange(24, dtype=np.float32).reshape(4, 6))
    return {"x": x, "rows": x[1:3], "cols": x[:, ::2], "t": x.t(), "offset": x[2, 1:],
            "expanded": x[0:1].expand(3, 6), "detached": x[1:].detach(),
            "other": ember.ones(2)}


def _torch_views():
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    return {"x": x, "rows": x[1:3], "cols": x[:, ::2], "t": x.t(), "offset": x[2, 1:],
            "expanded": x[0:1].expand(3, 6), "detached": x[1:].detach(),
            "other": torch.ones(2)}


def _check_views(loaded, reference):
    """Values, strides, storage offsets and storage sharing as in `reference` (torch's)."""
    for name, want in reference.items():
        got = loaded[name]
        same_values(got, want)
        assert tuple(got.stride()) == tuple(want.stride()), name
        assert got.storage_offset() == want.storage_offset(), name
        assert got.untyped_storage().nbytes() == want.untyped_storage().nbytes(), name
    for a in reference:
        for b in reference:
            assert (ptr(loaded[a]) == ptr(loaded[b])) == (ptr(reference[a]) == ptr(reference[b]))


@needs_torch
def test_ember_views_reach_torch_sharing_storage(tmp_path):
    path = tmp_path / "views.pt"
    ember.save(_ember_views(), path)
    for loaded in (torch.load(path, weights_only=True),
                   torch.load(path, weights_only=True, mmap=True)):
        _check_views(loaded, _torch_views())
        loaded["x"][2, 3] = 100.0  # one storage: the write shows through every view
        assert loaded["offset"][2] == 100.0 and loaded["t"][3, 2] == 100.0


@needs_torch
def test_torch_views_reach_ember_sharing_storage(tmp_path):
    path = tmp_path / "views.pt"
    torch.save(_torch_views(), path)
    for loaded in (ember.load(path), ember.load(path, mmap=True)):
        _check_views(loaded, _torch_views())
        loaded["x"][2, 3] = 100.0
        assert loaded["offset"][2].item() == 100.0 and loaded["t"][3, 2].item() == 100.0
        assert loaded["offset"]._version == loaded["x"]._version  # one version counter


def test_views_round_trip_in_ember(tmp_path):
    path = tmp_path / "views.pt"
    saved = _ember_views()
    ember.save(saved, path)
    loaded = ember.load(path)
    for name, t in saved.items():
        same_values(loaded[name], t)
        assert loaded[name].stride() == t.stride()
    assert len({ptr(loaded[n]) for n in ("x", "rows", "cols", "t", "offset", "detached")}) == 1
    assert ptr(loaded["other"]) != ptr(loaded["x"])
    # a view saved alone still brings its whole storage, at its offset (as torch does)
    ember.save(saved["offset"], path)
    alone = ember.load(path)
    assert alone.storage_offset() == 13 and alone.untyped_storage().nbytes() == 96


@needs_torch
def test_tied_weights_saved_once(tmp_path):
    """Two names for one tensor (weight tying) are one record in the file."""
    w = ember.ones(4, 3)
    path = tmp_path / "tied.pt"
    ember.save(collections.OrderedDict(emb=w.detach(), head=w.detach()), path)
    with zipfile.ZipFile(path) as z:
        assert len([n for n in z.namelist() if "/data/" in n]) == 1
    loaded = torch.load(path, weights_only=True)
    assert ptr(loaded["emb"]) == ptr(loaded["head"])


def _record_sizes(path):
    with zipfile.ZipFile(path) as z:
        return sorted(i.file_size for i in z.infolist() if "/data/" in i.filename)


@needs_torch
def test_storage_extent_matches_torch(tmp_path):
    """A slice of a NumPy array saves its own rows (torch's from_numpy storage), a view of a
    tensor saves its whole base (torch's storage), detached copies join their original."""
    big = np.arange(40, dtype=np.float32).reshape(10, 4)
    e = ember.arange(12, dtype=ember.float32).reshape(3, 4)
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    ember.save({"rows": ember.from_numpy(big[2:4]), "view": e[1], "same": e[2:].detach()},
               tmp_path / "e.pt")
    torch.save({"rows": torch.from_numpy(big[2:4]), "view": t[1], "same": t[2:].detach()},
               tmp_path / "t.pt")
    assert _record_sizes(tmp_path / "e.pt") == _record_sizes(tmp_path / "t.pt") == [32, 48]
    _check_views(torch.load(tmp_path / "e.pt"), torch.load(tmp_path / "t.pt"))


class Tagged(ember.Tensor):
    """A tensor subclass without a torch counterpart."""


class AsParameter(ember.Tensor):
    """A subclass that asks to be saved as torch's Parameter through the hook."""

    def _ember_torch_reduce(self):
        return ("torch._utils._rebuild_parameter",
                (self.detach(), False, collections.OrderedDict()))


def test_tensor_subclasses(tmp_path):
    path = tmp_path / "sub.pt"
    tagged = Tagged._make(np.arange(3, dtype=np.float32))
    ember.save({"t": tagged}, path)
    with pytest.raises(pickle.UnpicklingError, match="Tagged"):
        ember.load(path)
    loaded = ember.load(path, weights_only=False)["t"]
    assert type(loaded) is Tagged and loaded.tolist() == [0.0, 1.0, 2.0]
    hooked = AsParameter._make(np.arange(4, dtype=np.float32))
    ember.save({"p": hooked, "view": hooked[1:]}, path)  # the hook builds a new tensor
    if torch is not None:
        loaded = torch.load(path, weights_only=True)
        assert isinstance(loaded["p"], torch.nn.Parameter) and not loaded["p"].requires_grad
        assert loaded["p"].tolist() == [0.0, 1.0, 2.0, 3.0]
        assert ptr(loaded["p"]) == ptr(loaded["view"])
    assert ember.load(path)["view"].tolist() == [1.0, 2.0, 3.0]


def test_negative_strides_are_saved_as_a_copy(tmp_path):
    array = np.arange(6, dtype=np.int32)[::-1]
    path = tmp_path / "flip.pt"
    ember.save(ember.Tensor._make(array), path)  # from_numpy refuses negative strides
    np.testing.assert_array_equal(as_numpy(ember.load(path)), array)
    if torch is not None:
        np.testing.assert_array_equal(torch.load(path).numpy(), array)


# ----------------------------------------------------------------------------------------------
# shapes, containers, flags


@needs_torch
def test_zero_dim_and_empty_tensors_both_ways(tmp_path):
    arrays = {"zero_d": np.array(3.5, dtype=np.float32), "empty": np.zeros((0, 3), np.int64),
              "empty_1d": np.zeros(0, np.float16), "one": np.ones((1, 1, 1), np.float64)}
    path = tmp_path / "shapes.pt"
    ember.save({k: ember_tensor(v) for k, v in arrays.items()}, path)
    from_ember = torch.load(path, weights_only=True)
    torch.save({k: torch_tensor(v) for k, v in arrays.items()}, path)
    from_torch = ember.load(path)
    for name, array in arrays.items():
        same_values(from_ember[name], torch_tensor(array))
        same_values(from_torch[name], torch_tensor(array))


def _nested(m, tensor):
    return {"list": [tensor([1, 2]), (tensor([3.0]), "text", None)],
            "numbers": {"int": 3, "float": 0.5, "bool": True, "big": 2 ** 70},
            "tuple": (1, [tensor([[True]])], {"deep": {"deeper": tensor(7)}}),
            "bytes": b"\x00\x01", "set": {1, 2}, "dtype": m.float16, "size": m.Size([2, 3]),
            "device": m.device("cpu")}


def _compare_nested(a, b):
    if isinstance(b, dict):
        assert list(a) == list(b)
        for key in b:
            _compare_nested(a[key], b[key])
    elif isinstance(b, (list, tuple)) and not hasattr(b, "numel"):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            _compare_nested(x, y)
    elif hasattr(b, "numel") and hasattr(b, "dtype"):
        same_values(a, b)
    else:
        assert str(a).replace("ember", "torch") == str(b).replace("ember", "torch")


@needs_torch
def test_nested_containers_both_ways(tmp_path):
    path = tmp_path / "nested.pt"
    ember.save(_nested(ember, ember.tensor), path)
    _compare_nested(torch.load(path, weights_only=True), _nested(torch, torch.tensor))
    torch.save(_nested(torch, torch.tensor), path)
    loaded = ember.load(path)
    _compare_nested(loaded, _nested(ember, ember.tensor))
    assert loaded["dtype"] is ember.float16 and isinstance(loaded["size"], ember.Size)


@needs_torch
def test_requires_grad_and_parameters_both_ways(tmp_path):
    path = tmp_path / "grad.pt"
    leaf = ember.ones(2, requires_grad=True)
    ember.save({"leaf": leaf, "computed": leaf * 2, "plain": ember.ones(2)}, path)
    loaded = torch.load(path, weights_only=True)
    assert [loaded[k].requires_grad for k in ("leaf", "computed", "plain")] == [True, True,
                                                                                False]
    assert all(loaded[k].is_leaf for k in loaded)
    torch.save({"leaf": torch.ones(2, requires_grad=True), "plain": torch.ones(2),
                "param": torch.nn.Parameter(torch.ones(3)),
                "frozen": torch.nn.Parameter(torch.ones(3), requires_grad=False)}, path)
    loaded = ember.load(path)
    assert loaded["leaf"].requires_grad and not loaded["plain"].requires_grad
    assert loaded["param"].requires_grad and not loaded["frozen"].requires_grad
    assert loaded["leaf"].is_leaf and loaded["param"].is_leaf


@needs_torch
def test_parameters_reach_torch_as_parameters(tmp_path):
    nn = pytest.importorskip("ember.nn")
    path = tmp_path / "param.pt"
    p = nn.Parameter(ember.arange(3, dtype=ember.float32))
    ember.save({"p": p, "again": p, "data": p.detach()}, path)
    loaded = torch.load(path, weights_only=True)
    assert isinstance(loaded["p"], torch.nn.Parameter) and loaded["p"].requires_grad
    assert loaded["again"] is loaded["p"]
    assert ptr(loaded["data"]) == ptr(loaded["p"])
    back = ember.load(path)
    assert isinstance(back["p"], nn.Parameter) and back["again"] is back["p"]
    same_values(back["p"], p)


@needs_torch
def test_tensor_attributes_both_ways(tmp_path):
    path = tmp_path / "attrs.pt"
    t = ember.ones(2)
    t.note = "kept"
    ember.save(t, path)
    assert torch.load(path, weights_only=True).note == "kept"
    s = torch.zeros(2)
    s.note = "also kept"
    torch.save(s, path)
    assert ember.load(path).note == "also kept"


@needs_torch
def test_state_dict_and_optimizer_state_from_torch(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 3)).sum().backward()
    optimizer.step()
    path = tmp_path / "ckpt.pt"
    torch.save({"model": model.state_dict(), "optim": optimizer.state_dict(), "epoch": 3}, path)
    loaded = ember.load(path)
    state = model.state_dict()
    assert isinstance(loaded["model"], collections.OrderedDict)
    assert list(loaded["model"]) == list(state)
    assert loaded["model"]._metadata == state._metadata  # torch's per-module versions
    for key, value in state.items():
        same_values(loaded["model"][key], value)
    want = optimizer.state_dict()
    got = loaded["optim"]
    assert got["param_groups"] == want["param_groups"]  # floats, tuples, lists of ints
    assert sorted(got["state"]) == sorted(want["state"])
    for index, slots in want["state"].items():
        for name, value in slots.items():
            same_values(got["state"][index][name], value)
    assert loaded["epoch"] == 3


@needs_torch
def test_ember_state_dict_like_checkpoint_loads_into_torch(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    state = collections.OrderedDict(
        (k, ember.from_numpy(v.detach().numpy().copy())) for k, v in model.state_dict().items())
    state._metadata = collections.OrderedDict({"": {"version": 1}})
    path = tmp_path / "sd.pt"
    ember.save(state, path)
    fresh = torch.nn.Linear(3, 2)
    fresh.load_state_dict(torch.load(path, weights_only=True))
    for key, value in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[key], value)
    assert torch.load(path, weights_only=True)._metadata == state._metadata


# ----------------------------------------------------------------------------------------------
# the legacy (pre-zip) format


@needs_torch
def test_legacy_format_both_ways(tmp_path):
    path = tmp_path / "legacy.pt"
    torch.save(_torch_views(), path, _use_new_zipfile_serialization=False)
    _check_views(ember.load(path), _torch_views())
    ember.save(_ember_views(), path, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(path)
    _check_views(torch.load(path, weights_only=True), _torch_views())
    _check_views(ember.load(path), _torch_views())
    with pytest.raises(RuntimeError, match="mmap"):
        ember.load(path, mmap=True)


# ----------------------------------------------------------------------------------------------
# the file itself


def _local_headers(path):
    """(name, offset of the record's data) for each record, from the local headers."""
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            start = info.header_offset
            name_length, extra_length = struct.unpack("<HH", raw[start + 26:start + 30])
            yield info.filename, start + 30 + name_length + extra_length


def test_zip_layout(tmp_path):
    path = tmp_path / "layout.pt"
    ember.save({"a": ember.ones(3), "b": ember.zeros(5, dtype=ember.int8)}, path)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None  # every CRC right
        assert z.read("archive/version") == b"3\n"
        assert z.read("archive/byteorder") == b"little"
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        names = z.namelist()
    assert names[0] == "archive/data.pkl"
    data = [(n, offset) for n, offset in _local_headers(path) if "/data/" in n]
    assert len(data) == 2 and all(offset % 64 == 0 for _, offset in data)
    with zipfile.ZipFile(path) as z:
        assert z.read("archive/data.pkl")[:2] == b"\x80\x02"  # protocol 2, as torch writes


@needs_torch
def test_zip64_records(tmp_path, monkeypatch):
    """Past 4 GiB a record needs ZIP64 fields; lowering the limits exercises them small."""
    monkeypatch.setattr(serialization._ZipWriter, "LIMIT", 16)
    monkeypatch.setattr(serialization._ZipWriter, "COUNT_LIMIT", 3)
    path = tmp_path / "zip64.pt"
    values = {f"t{i}": ember.arange(10 * (i + 1), dtype=ember.float32) for i in range(4)}
    ember.save(values, path)
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
    for loaded in (torch.load(path, weights_only=True), torch.load(path, mmap=True),
                   ember.load(path), ember.load(path, mmap=True)):
        for name, t in values.items():
            same_values(loaded[name], t)


@needs_torch
def test_big_endian_file_is_swapped(tmp_path):
    """A file written on a big-endian machine: both torch and ember swap it on load."""
    path = tmp_path / "little.pt"
    values = {"f": ember.arange(4, dtype=ember.float32), "i": ember.arange(3, dtype=ember.int16),
              "b": ember.tensor([1, 2], dtype=ember.uint8)}
    ember.save(values, path)
    big = tmp_path / "big.pt"
    dtypes = {"0": np.float32, "1": np.int16, "2": np.uint8}
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(big, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            key = info.filename.rsplit("/", 1)[-1]
            if info.filename.endswith("byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                data = np.frombuffer(data, dtypes[key]).byteswap().tobytes()
            dst.writestr(info.filename, data)
    for loaded in (torch.load(big, weights_only=True), ember.load(big)):
        for name, t in values.items():
            same_values(loaded[name], t)


def test_file_objects(tmp_path):
    buffer = io.BytesIO()
    ember.save({"a": ember.arange(3)}, buffer)
    buffer.seek(0)
    assert ember.load(buffer)["a"].tolist() == [0, 1, 2]

    class WriteOnly:  # a pipe-like destination: no seek, no tell
        def __init__(self):
            self.chunks = []

        def write(self, data):
            self.chunks.append(bytes(data))
            return len(data)

    sink = WriteOnly()
    ember.save(ember.arange(4), sink)
    payload = b"".join(sink.chunks)

    class ReadOnly:  # and a source that cannot seek
        def __init__(self, data):
            self._f = io.BytesIO(data)

        def read(self, n=-1):
            return self._f.read(n)

    assert ember.load(ReadOnly(payload)).tolist() == [0, 1, 2, 3]
    if torch is not None:
        assert torch.load(io.BytesIO(payload)).tolist() == [0, 1, 2, 3]


def test_save_is_atomic(tmp_path):
    path = tmp_path / "model.pt"
    ember.save({"a": ember.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ember.save({"a": ember.zeros(2), "bad": lambda: None}, path)  # lambdas don't pickle
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.pt"]  # no temporary file left behind
    ember.save({"a": ember.zeros(2)}, str(path))  # str paths work too, and replace
    assert ember.load(path)["a"].tolist() == [0.0, 0.0]


# ----------------------------------------------------------------------------------------------
# weights_only


def _zip_with_pickle(path, data_pkl):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", data_pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("layout", ["zip", "legacy", "legacy header"])
def test_weights_only_refuses_a_malicious_pickle(tmp_path, layout):
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"w": [1, _Evil(marker)]}, protocol=2)
    path = tmp_path / "evil.pt"
    if layout == "zip":
        _zip_with_pickle(path, payload)
    else:
        with open(path, "wb") as f:
            if layout == "legacy header":
                f.write(payload)  # where the magic number should be
            else:
                for header in (serialization.MAGIC_NUMBER, serialization.PROTOCOL_VERSION, {}):
                    pickle.dump(header, f, protocol=2)
                f.write(payload)
                pickle.dump([], f, protocol=2)
    error = pickle.UnpicklingError if layout != "legacy header" else RuntimeError
    with pytest.raises(error) as info:
        ember.load(path)
    assert not marker.exists()
    if layout != "legacy header":
        assert "Weights only load failed" in str(info.value)
        assert f"GLOBAL {os.system.__module__}.system" in str(info.value)
        if torch is not None:  # torch refuses the same file
            with pytest.raises(pickle.UnpicklingError):
                torch.load(path, weights_only=True)
            assert not marker.exists()


class Point:
    """A user class that may be allowed for weights_only loading."""

    def __init__(self, x):
        self.x = x


def test_safe_globals_and_weights_only_false(tmp_path):
    path = tmp_path / "point.pt"
    ember.save({"p": Point(3), "t": ember.ones(1)}, path)
    with pytest.raises(pickle.UnpicklingError, match=r"test_serialization\.Point"):
        ember.load(path)
    with serialization.safe_globals([Point]):
        assert ember.load(path)["p"].x == 3
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path)  # the context manager's allowance is gone
    assert ember.load(path, weights_only=False)["p"].x == 3
    serialization.add_safe_globals([Point])
    try:
        assert serialization.get_safe_globals() == [Point]
        assert ember.load(path)["p"].x == 3
    finally:
        serialization.clear_safe_globals()


@needs_torch
def test_whole_torch_model_loads_as_ember_modules(tmp_path):
    nn = pytest.importorskip("ember.nn")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2))
    path = tmp_path / "model.pt"
    torch.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.container.Sequential"):
        ember.load(path)
    loaded = ember.load(path, weights_only=False)
    assert isinstance(loaded, nn.Sequential) and isinstance(loaded[0], nn.Linear)
    same_values(loaded[0].weight, model[0].weight)
    # and back: ember's classes are written under torch's names
    ember.save(loaded, path)
    again = torch.load(path, weights_only=False)
    assert isinstance(again, torch.nn.Sequential) and isinstance(again[0], torch.nn.Linear)
    assert torch.equal(again[0].weight, model[0].weight)


# ----------------------------------------------------------------------------------------------
# broken and foreign files


def _checkpoint_bytes(**kwargs):
    buffer = io.BytesIO()
    ember.save({"a": ember.arange(100, dtype=ember.float32), "b": [1, 2]}, buffer, **kwargs)
    return buffer.getvalue()


@pytest.mark.parametrize("case", ["empty", "text", "random", "truncated zip", "cut data",
                                  "truncated legacy", "zip without data.pkl", "plain pickle"])
def test_broken_files_raise_a_clear_error(tmp_path, case):
    good, legacy = _checkpoint_bytes(), _checkpoint_bytes(_use_new_zipfile_serialization=False)
    path = tmp_path / f"{case.replace(' ', '_')}.pt"
    if case == "zip without data.pkl":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("archive/constants.pkl", b"")
    else:
        path.write_bytes({
            "empty": b"",
            "text": b"hello, this is not a checkpoint\n",
            "random": np.random.default_rng(0).integers(1, 255, 300, dtype=np.uint8).tobytes(),
            "truncated zip": good[:len(good) // 2],
            "cut data": good[:300] + good[700:],
            "truncated legacy": legacy[:len(legacy) - 100],
            "plain pickle": pickle.dumps([1, 2, 3]),
        }[case])
    with pytest.raises(RuntimeError) as info:
        ember.load(path)
    assert path.name in str(info.value)


@needs_torch
def test_dtypes_ember_lacks_are_named(tmp_path):
    path = tmp_path / "complex.pt"
    torch.save({"z": torch.zeros(2, dtype=torch.complex32)}, path)
    with pytest.raises(NotImplementedError, match="(?i)complex"):
        ember.load(path)


# ----------------------------------------------------------------------------------------------
# map_location and mmap


def _save_as_cuda(path, monkeypatch):
    """A checkpoint whose storages say they were saved on 'cuda:0'."""
    original = serialization._Pickler._storage_id

    def on_cuda(self, storage, storage_type):
        pid = original(self, storage, storage_type)
        return pid[:3] + ("cuda:0",) + pid[4:]

    with monkeypatch.context() as m:
        m.setattr(serialization._Pickler, "_storage_id", on_cuda)
        ember.save({"w": ember.arange(3, dtype=ember.float32)}, path)


def test_map_location(tmp_path, monkeypatch):
    path = tmp_path / "cuda.pt"
    _save_as_cuda(path, monkeypatch)
    if not ember._backend.cuda_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            ember.load(path)
        with pytest.raises(RuntimeError, match="CUDA"):
            ember.load(path, map_location="cuda")
    seen = []

    def keep_on_cpu(storage, location):
        seen.append(location)
        return storage

    for where in ("cpu", ember.device("cpu"), {"cuda:0": "cpu"}, keep_on_cpu,
                  lambda storage, location: storage.cpu()):
        loaded = ember.load(path, map_location=where)
        assert loaded["w"].device == ember.device("cpu")
        assert loaded["w"].tolist() == [0.0, 1.0, 2.0]
    assert seen == ["cuda:0"]
    with pytest.raises(TypeError):
        ember.load(path, map_location=3.5)
    if torch is not None:  # the same file in torch (a CPU build): same behaviour
        assert torch.load(path, map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0]
        if not torch.cuda.is_available():
            with pytest.raises(RuntimeError, match="CUDA"):
                torch.load(path)


def test_mmap_is_copy_on_write(tmp_path):
    path = tmp_path / "mapped.pt"
    ember.save({"w": ember.zeros(64), "v": ember.ones(3)}, path)
    before = path.read_bytes()
    loaded = ember.load(path, mmap=True)
    loaded["w"].add_(5)
    assert loaded["w"].tolist() == [5.0] * 64
    assert path.read_bytes() == before  # the file never changes
    with pytest.raises(RuntimeError, match="mmap"):
        ember.load(io.BytesIO(before), mmap=True)


# ----------------------------------------------------------------------------------------------
# storages


@needs_torch
def test_untyped_storage_matches_torch():
    e = ember.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    pairs = [(lambda x: x, lambda x: x[1:]), (lambda x: x, lambda x: x.t()),
             (lambda x: x, lambda x: x.detach()), (lambda x: x[1:], lambda x: x[:, 2]),
             (lambda x: x, lambda x: x.clone())]
    for f, g in pairs:
        assert (ptr(f(e)) == ptr(g(e))) == (ptr(f(t)) == ptr(g(t)))
        assert f(e).untyped_storage().nbytes() == f(t).untyped_storage().nbytes()
        assert g(e).untyped_storage().nbytes() == g(t).untyped_storage().nbytes()
    storage = e[1].untyped_storage()
    assert storage.size() == len(storage) == 48 and storage.device == ember.device("cpu")
    assert storage.tolist() == list(t.untyped_storage().tolist())
    assert ember.UntypedStorage(5).nbytes() == 5


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_storage_objects_round_trip(tmp_path):
    path = tmp_path / "storage.pt"
    x = ember.arange(4, dtype=ember.int32)
    ember.save({"s": x.untyped_storage(), "x": x}, path)
    loaded = ember.load(path)
    assert isinstance(loaded["s"], ember.UntypedStorage)
    assert loaded["s"].tolist() == x.untyped_storage().tolist()
    if torch is not None:
        s = torch.load(path, weights_only=True)["s"]
        assert list(s.tolist()) == x.untyped_storage().tolist()


# ----------------------------------------------------------------------------------------------
# plain pickling (pickle.dumps, copy.copy)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_round_trip(dtype):
    t = ember_tensor(sample(dtype, (2, 3)))
    back = pickle.loads(pickle.dumps(t))
    same_values(back, t)
    assert back.stride() == t.stride()


def test_pickle_keeps_views_grads_and_attributes():
    x = ember.arange(12, dtype=ember.float32).reshape(3, 4).requires_grad_()
    x.grad = ember.ones(3, 4)
    with ember.no_grad():
        view = x.detach()[1:, ::2]
    x.tag = "hello"
    x2, view2 = pickle.loads(pickle.dumps((x, view)))
    assert x2.requires_grad and x2.is_leaf and x2.tag == "hello"
    same_values(x2.grad, x.grad)
    same_values(view2, view)
    assert view2.storage_offset() == view.storage_offset() and view2.stride() == view.stride()
    with ember.no_grad():
        x2[1, 0] = 100.0
    assert view2[0, 0].item() == 100.0  # the unpickled view shares the unpickled base


def test_copy_copy_shares_memory_like_torch():
    x = ember.arange(4, dtype=ember.float32)
    y = copy.copy(x)
    y[0] = 100.0
    assert x[0].item() == 100.0
    z = copy.deepcopy(x)
    z[1] = -1.0
    assert x[1].item() == 1.0


@needs_torch
def test_pickle_module_other_than_pickle_is_refused(tmp_path):
    import types

    other = types.ModuleType("other_pickle")
    with pytest.raises(NotImplementedError):
        ember.save(ember.ones(1), tmp_path / "x.pt", pickle_module=other)

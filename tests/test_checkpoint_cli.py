"""`python -m ember.checkpoint info FILE`: listing checkpoints without loading their data.

Expected names, dtypes, shapes, sizes and storage sharing come from the torch objects that
were saved (or from the ember ones, for ember-written files)."""
import collections
import os
import pickle
import subprocess
import sys
import zipfile

import pytest

import ember
from ember import checkpoint
from ember.utils import safetensors as est

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "ember.checkpoint", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


def torch_state():
    torch.manual_seed(0)
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    return collections.OrderedDict([
        ("encoder", {"weight": base, "rows": base[1:], "bias": torch.zeros(4, dtype=torch.half)}),
        ("layers", [torch.ones(2, 2, dtype=torch.int64), torch.nn.Parameter(torch.ones(3))]),
        ("step", torch.tensor(5)),
        ("epoch", 3),
    ])


def expected(state):
    """(name, dtype, shape, nbytes) per tensor and the groups of names sharing a storage."""
    rows, groups = [], collections.defaultdict(list)

    def walk(obj, path):
        if isinstance(obj, torch.Tensor):
            name = ".".join(path)
            rows.append((name, str(obj.dtype).replace("torch.", ""), tuple(obj.shape),
                         obj.numel() * obj.element_size()))
            groups[obj.untyped_storage().data_ptr()].append(name)
        elif isinstance(obj, dict):
            for key, value in obj.items():
                walk(value, path + [str(key)])
        elif isinstance(obj, (list, tuple)):
            for i, value in enumerate(obj):
                walk(value, path + [str(i)])

    walk(state, [])
    return rows, sorted(g for g in groups.values() if len(g) > 1)


@needs_torch
@pytest.mark.parametrize("legacy", [False, True])
def test_describe_torch_checkpoint(tmp_path, legacy):
    state = torch_state()
    path = tmp_path / "ckpt.pt"
    torch.save(state, path, _use_new_zipfile_serialization=not legacy)
    summary = checkpoint.describe(path)
    rows, shared = expected(state)
    assert [(t.name, t.dtype, t.shape, t.nbytes) for t in summary.tensors] == rows
    assert sorted(summary.shared().values()) == shared
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes()
                for t in (state["encoder"]["weight"], state["encoder"]["bias"],
                          *state["layers"], state["step"])}
    assert summary.total_bytes == sum(storages.values())
    kinds = {t.name: t.kind for t in summary.tensors}
    assert kinds["layers.1"] == "Parameter" and kinds["step"] == "tensor"
    assert {t.name: t.offset for t in summary.tensors}["encoder.rows"] == 4


@needs_torch
def test_cli_output(tmp_path):
    path = tmp_path / "ckpt.pt"
    state = torch_state()
    torch.save(state, path)
    result = run_cli("info", path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "PyTorch zip checkpoint, 6 tensors in 5 storages" in out
    lines = {line.split()[0]: line.split() for line in out.splitlines()[2:] if line.strip()}
    assert lines["encoder.weight"][1:4] == ["float32", "[3,", "4]"]
    assert lines["encoder.bias"][1:4] == ["float16", "[4]", "8"]
    assert "storage 0 (48 bytes): encoder.weight, encoder.rows" in out
    tensors = [state["encoder"]["weight"], state["encoder"]["bias"], *state["layers"],
               state["step"]]
    assert f"total: {sum(t.untyped_storage().nbytes() for t in tensors)} bytes" in out


def test_describe_ember_checkpoint_and_safetensors(tmp_path):
    x = ember.arange(6, dtype=ember.float32)
    path = tmp_path / "e.pt"
    ember.save({"x": x, "tail": x[2:], "flag": ember.tensor([True])}, path)
    summary = checkpoint.describe(path)
    assert [(t.name, t.dtype, t.shape, t.nbytes, t.offset) for t in summary.tensors] == [
        ("x", "float32", (6,), 24, 0), ("tail", "float32", (4,), 16, 2),
        ("flag", "bool", (1,), 1, 0)]
    assert list(summary.shared().values()) == [["x", "tail"]]
    assert summary.total_bytes == 25
    st_path = tmp_path / "e.safetensors"
    est.save_file({"w": ember.ones(2, 3, dtype=ember.bfloat16)}, st_path, metadata={"a": "b"})
    summary = checkpoint.describe(st_path)
    assert summary.format == "safetensors" and summary.metadata == {"a": "b"}
    assert [(t.name, t.dtype, t.shape, t.nbytes) for t in summary.tensors] == [
        ("w", "bfloat16", (2, 3), 12)]
    result = run_cli("info", st_path)
    assert result.returncode == 0 and "metadata a: b" in result.stdout


def test_info_reads_no_tensor_data_and_runs_nothing(tmp_path, monkeypatch):
    """Only data.pkl is opened (sizes come from the zip directory), and a pickle naming
    os.system is listed with an inert stand-in, never executed."""
    path = tmp_path / "ckpt.pt"
    ember.save({"w": ember.ones(4), "b": ember.zeros(2)}, path)
    opened = []
    real_open = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        opened.append(getattr(name, "filename", name))
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    summary = checkpoint.describe(path)
    assert [t.name for t in summary.tensors] == ["w", "b"] and summary.total_bytes == 24
    assert opened == ["archive/data.pkl"]
    monkeypatch.undo()

    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    evil = tmp_path / "evil.pt"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"x": Evil(), "t": [1]}, protocol=2))
    assert checkpoint.describe(evil).tensors == []
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"", b"just text\n", b"PK\x03\x04 broken zip", None])
def test_cli_errors(tmp_path, capsys, content):
    path = tmp_path / "bad.pt"
    if content is not None:  # None: the file does not exist
        path.write_bytes(content)
    assert checkpoint.main(["info", str(path)]) == 1
    captured = capsys.readouterr()
    assert "bad.pt" in captured.err and captured.out == ""


@needs_torch
def test_describe_whole_pickled_model(tmp_path):
    """A pickled nn.Module (classes never imported) lists as its state_dict would."""
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    path = tmp_path / "model.pt"
    torch.save(model, path)
    summary = checkpoint.describe(path)
    state = model.state_dict()
    assert [t.name for t in summary.tensors] == list(state)
    assert [t.shape for t in summary.tensors] == [tuple(v.shape) for v in state.values()]
    assert {t.name for t in summary.tensors if t.kind == "Parameter"} == {
        name for name, _ in model.named_parameters()}

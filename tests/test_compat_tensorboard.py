"""ember.utils.tensorboard.SummaryWriter writes event files TensorBoard reads back with the
same contents as torch's writer; without the package, the import fails as torch's does."""
import subprocess
import sys

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
# imported here, not inside a test: importing them installs an import hook (the state guard
# in conftest.py would take that for the test's doing)
pytest.importorskip("torch.utils.tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

import ember.utils.tensorboard  # noqa: E402,F401


def _write(lib, folder):
    from importlib import import_module

    writer_cls = import_module(f"{lib.__name__}.utils.tensorboard").SummaryWriter
    values = lib.tensor(np.linspace(-1, 1, 101, dtype=np.float32))
    with writer_cls(log_dir=str(folder)) as writer:
        for step in range(3):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
            writer.add_scalars("lr", {"a": 0.1 * step, "b": 0.2}, step)
        writer.add_histogram("weights", values, 0)
        writer.add_image("img", lib.ones(3, 4, 5) * 0.5, 0)
        writer.add_text("note", "hello", 0)


def _read(folder):
    events = EventAccumulator(str(folder), size_guidance={"tensors": 0}).Reload()
    tags = events.Tags()
    scalars = [(e.step, round(e.value, 6)) for e in events.Scalars("loss")]
    histogram = events.Histograms("weights")[0].histogram_value
    image = events.Images("img")[0]
    text = events.Tensors("note/text_summary")[0].tensor_proto.string_val
    return (sorted(tags["scalars"]), scalars, (histogram.min, histogram.max, histogram.num,
                                                round(histogram.sum, 4)),
            (image.width, image.height), list(text))


def test_events_read_back_like_torchs(tmp_path):
    _write(ember, tmp_path / "ember")
    _write(torch, tmp_path / "torch")
    assert _read(tmp_path / "ember") == _read(tmp_path / "torch")
    series = sorted(p.name for p in (tmp_path / "ember").iterdir() if p.is_dir())
    assert series == sorted(p.name for p in (tmp_path / "torch").iterdir() if p.is_dir())


def test_unsupported_methods_say_so(tmp_path):
    from ember.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(NotImplementedError, match="add_graph: needs a traced"):
            writer.add_graph(ember.nn.Linear(2, 2))
        assert writer.get_logdir() == str(tmp_path)


def test_without_the_package_the_import_error_is_torchs():
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    import ember.utils.tensorboard\nexcept ImportError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "TensorBoard logging requires TensorBoard version 1.15 or above"

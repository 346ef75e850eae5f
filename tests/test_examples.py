"""The examples: the demo trains to its promised accuracy, saves and reloads a checkpoint, plots,
and runs unchanged under real PyTorch with only the import swapped."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "train_digits.py")


def _load_example():
    sys.path.insert(0, os.path.dirname(EXAMPLE))
    try:
        import train_digits
    finally:
        sys.path.pop(0)
    return train_digits


@pytest.mark.slow
def test_digits_demo_reaches_high_accuracy_on_a_reduced_budget():
    demo = _load_example()
    model, test_loader, history = demo.train(epochs=6, quiet=True)
    accuracy, _ = demo.evaluate(model, test_loader)
    assert accuracy >= 0.95, f"test accuracy {accuracy:.3f} after 6 epochs"
    assert history["train_loss"][-1] < history["train_loss"][0]


def test_demo_checkpoint_and_plot(tmp_path):
    demo = _load_example()
    model, test_loader, history = demo.train(epochs=1, quiet=True)
    import ember

    path = tmp_path / "model.pt"
    ember.save(model.state_dict(), path)
    again = demo.DigitNet()
    again.load_state_dict(ember.load(path))
    assert demo.evaluate(again, test_loader) == demo.evaluate(model, test_loader)
    pytest.importorskip("matplotlib")
    plot = demo.save_plot(history, tmp_path / "curves.png")
    assert os.path.getsize(plot) > 1000


def test_example_runs_unchanged_under_torch(tmp_path):
    """Swap the imports for torch's and run one epoch with real PyTorch."""
    pytest.importorskip("torch")
    source = open(EXAMPLE).read()
    swaps = {"import ember as torch": "import torch",
             "from ember import nn": "from torch import nn",
             "from ember.utils.data import": "from torch.utils.data import"}
    for old, new in swaps.items():
        assert old in source
        source = source.replace(old, new)
    assert "ember" not in source.replace("import ember", "").split('"""', 2)[2]
    script = tmp_path / "train_digits_torch.py"
    script.write_text(source.replace('os.path.join(HERE, "..", "data"',
                                     f'os.path.join({os.path.dirname(EXAMPLE)!r}, "..", "data"'))
    out = subprocess.run([sys.executable, str(script), "--epochs", "1", "--out",
                          str(tmp_path / "runs")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "test accuracy" in out.stdout

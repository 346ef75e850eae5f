"""examples/train_cifar_resnet.py: a few steps in ember, and the same file run unchanged
under real torch + torchvision with only the import lines swapped."""
import math
import os
import subprocess
import sys

from ._torchvision import import_torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "train_cifar_resnet.py")
SWAPS = {"import ember as torch": "import torch",
         "from ember.utils.data import DataLoader": "from torch.utils.data import DataLoader",
         "from ember.vision import datasets, models, transforms":
             "from torchvision import datasets, models, transforms"}


def _load_example():
    sys.path.insert(0, os.path.dirname(EXAMPLE))
    try:
        import train_cifar_resnet
    finally:
        sys.path.pop(0)
    return train_cifar_resnet


def test_example_trains_a_few_steps_in_ember():
    example = _load_example()
    model, losses, accuracy = example.train(steps=3, batch_size=8, train_size=16,
                                            test_size=8, quiet=True)
    assert len(losses) == 3 and all(math.isfinite(x) for x in losses)
    assert 0.0 <= accuracy <= 1.0
    assert model.fc.out_features == 10


def test_example_runs_unchanged_under_torch_and_torchvision(tmp_path):
    import_torchvision()
    source = open(EXAMPLE).read()
    for old, new in SWAPS.items():
        assert old in source
        source = source.replace(old, new)
    assert "ember" not in source.split('"""', 2)[2]
    # torchvision's compiled ops do not load beside the CPU torch: define their schemas first
    prelude = ("import sys\nsys.path.insert(0, %r)\nfrom tests._torchvision import "
               "import_torchvision\nimport_torchvision()\n" % os.path.join(HERE, ".."))
    script = tmp_path / "train_cifar_resnet_torch.py"
    head, doc, body = source.split('"""', 2)
    script.write_text(head + '"""' + doc + '"""\n' + prelude + body)  # keep __doc__
    out = subprocess.run([sys.executable, str(script), "--quick"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "trained 3 steps" in out.stdout

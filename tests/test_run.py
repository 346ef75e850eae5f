"""`python -m ember.run`: an unmodified PyTorch program runs on ember, as Python would run it
(argv, __main__, sys.path[0], tracebacks), with `torch[.*]` mapped onto `ember[.*]` and
`torchvision[.*]` onto `ember.vision[.*]` -- also in children started with "spawn"."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ember_run(tmp_path, source, *args, module=None, name="prog.py"):
    """Write `source` to tmp_path/name and run it through the runner, from tmp_path."""
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=ROOT)
    target = ["-m", module] if module else [str(tmp_path / name)]
    return subprocess.run([sys.executable, "-m", "ember.run", *target, *args],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def test_the_program_sees_its_own_argv_main_and_path(tmp_path):
    done = ember_run(tmp_path / "sub", """\
        import sys
        import torch
        print(sys.argv[1:], __name__, sys.path[0] == __file__.rsplit("/", 1)[0])
        """, "--epochs", "2", name="prog.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['--epochs', '2'] __main__ True"


def test_torch_names_are_ember_modules_and_classes(tmp_path):
    done = ember_run(tmp_path, """\
        import sys
        import ember
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.utils.data import DataLoader
        from torch.optim.lr_scheduler import StepLR
        import torch.backends.cudnn as cudnn
        import torch.onnx, torch.jit, torch.amp, torch.cuda.amp, torch.multiprocessing
        assert sys.modules["torch"] is ember and torch is ember
        assert torch.Tensor is ember.Tensor and nn.Linear is ember.nn.Linear
        assert F is ember.nn.functional and DataLoader is ember.utils.data.DataLoader
        assert StepLR is ember.optim.lr_scheduler.StepLR and cudnn is ember.backends.cudnn
        assert sys.modules["torch.nn.functional"] is ember.nn.functional
        assert ember.__spec__.name == "ember"  # the alias did not rename ember's own module
        print("ok")
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_missing_torch_module_names_both_sides(tmp_path):
    done = ember_run(tmp_path, "import torch\nimport torch.not_a_module\n")
    assert done.returncode == 1
    assert ("ModuleNotFoundError: No module named 'torch.not_a_module' (ember has no "
            "'ember.not_a_module')") in done.stderr


def test_the_traceback_starts_at_the_users_code(tmp_path):
    done = ember_run(tmp_path, """\
        import torch

        def train():
            raise ValueError("bad batch")

        train()
        """)
    assert done.returncode == 1
    frames = [line for line in done.stderr.splitlines() if line.strip().startswith("File ")]
    assert str(tmp_path / "prog.py") in frames[0] and "line 6" in frames[0]
    assert not any("runpy" in f or "ember/run.py" in f for f in frames)
    assert done.stderr.rstrip().endswith("ValueError: bad batch")


def test_exit_status_is_the_programs(tmp_path):
    assert ember_run(tmp_path, "import sys\nsys.exit(3)\n").returncode == 3
    assert ember_run(tmp_path, "raise SystemExit('bye')\n").returncode == 1


def test_run_a_module_with_dash_m(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").touch()
    done = ember_run(tmp_path, """\
        import sys
        import torch
        print(__name__, sys.argv[1:], torch.__name__)
        """, "x", module="pkg.train", name="pkg/train.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "__main__ ['x'] ember"


def test_torchvision_maps_onto_ember_vision(tmp_path):
    """Checked with a stand-in ember.vision package (put in sys.modules by the program)."""
    done = ember_run(tmp_path, """\
        import sys, types
        import ember
        vision = types.ModuleType("ember.vision")
        vision.__path__ = []
        models = types.ModuleType("ember.vision.models")
        models.resnet18 = lambda: "a resnet"
        vision.models = models
        sys.modules.update({"ember.vision": vision, "ember.vision.models": models})
        import torchvision
        import torchvision.models as tvm
        from torchvision.models import resnet18
        assert torchvision is vision and tvm is models
        print(resnet18())
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "a resnet"


def test_without_ember_vision_torchvision_is_a_clear_error(tmp_path):
    import importlib.util

    if importlib.util.find_spec("ember.vision") is not None:
        pytest.skip("ember.vision exists: the mapping is checked for real elsewhere")
    done = ember_run(tmp_path, "import torchvision\n")
    assert "No module named 'torchvision' (ember has no 'ember.vision')" in done.stderr


def test_spawned_children_map_torch_too(tmp_path):
    done = ember_run(tmp_path, """\
        import torch
        import torch.multiprocessing as mp

        def child(rank, queue):
            import sys
            queue.put((rank, torch.__name__, sys.modules["torch"].__name__))

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            queue = ctx.SimpleQueue()
            mp.spawn(child, args=(queue,), nprocs=2)
            print(sorted(queue.get() for _ in range(2)))
        """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[(0, 'ember', 'ember'), (1, 'ember', 'ember')]"


def test_import_ember_as_torch_needs_no_hook():
    done = subprocess.run([sys.executable, "-c", "import sys, ember as torch; "
                           "print(torch.nn.Linear(2, 2).weight.shape, 'torch' in sys.modules)"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=ROOT),
                          timeout=120)
    assert done.stdout.strip() == "ember.Size([2, 2]) False", done.stderr


def test_usage_without_a_script():
    done = subprocess.run([sys.executable, "-m", "ember.run"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert done.returncode == 2 and "usage: python -m ember.run" in done.stderr


def test_ember_name_mapping():
    from ember.run import ember_name

    assert ember_name("torch") == "ember"
    assert ember_name("torch.nn.functional") == "ember.nn.functional"
    assert ember_name("torchvision.models.resnet") == "ember.vision.models.resnet"
    assert ember_name("torchaudio") is None and ember_name("torchx") is None

"""`python -m ember.audit script.py`: every missing torch API a script touches is reported,
with its call sites, and the script keeps running where it can."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def audit(tmp_path, source, *args):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-m", "ember.audit", str(script), *args],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    return result, str(script)


def report_entries(stderr):
    """{api name: [call sites]} from the report."""
    entries = {}
    current = None
    for line in stderr.splitlines():
        if line.startswith("  ") and not line.startswith("      "):
            current = line.split()[0]
            entries[current] = []
        elif line.startswith("      ") and current is not None:
            entries[current].append(line.strip())
    return entries


def test_three_missing_apis_are_all_reported(tmp_path):
    result, script = audit(tmp_path, """\
        import sys
        import torch
        import torch.nn as nn
        from torch.utils.data import DataLoader, TensorDataset

        x = torch.randn(8, 4)
        total = torch.masked.sum(x)
        fold = nn.Fold3dNotReal(2)
        y = x.some_missing_method()
        model = nn.Linear(4, 2)
        for xb, in DataLoader(TensorDataset(x), batch_size=4):
            model(xb).sum().backward()
        again = x.some_missing_method()
        print("finished", sys.argv[1:], tuple(model.weight.grad.shape))
        """, "--epochs", "1")
    assert result.returncode == 1
    assert "finished ['--epochs', '1'] (2, 4)" in result.stdout  # it ran to the end
    entries = report_entries(result.stderr)
    assert entries == {"torch.Tensor.some_missing_method": [f"{script}:9", f"{script}:13"],
                       "torch.masked.sum": [f"{script}:7"],
                       "torch.nn.Fold3dNotReal": [f"{script}:8"]}
    assert "3 torch API(s)" in result.stderr
    assert "The script ran to the end." in result.stderr


def test_missing_module_import_and_module_method(tmp_path):
    result, script = audit(tmp_path, """\
        import torch
        import torch.nn as nn
        from torch.distributions_not_real import Normal

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                return self.fc(x)

        net = Net()
        net.fancy_missing_hook(print)
        dist = Normal(0, 1)
        print(net(torch.ones(1, 2)).shape)
        """)
    entries = report_entries(result.stderr)
    assert entries["torch.distributions_not_real.Normal"] == [f"{script}:3"]
    assert entries["torch.nn.Module.fancy_missing_hook"] == [f"{script}:14"]
    assert len(entries) == 2
    assert result.returncode == 1


def test_a_script_that_fails_is_reported_where_it_stopped(tmp_path):
    result, script = audit(tmp_path, """\
        import torch
        out = torch.masked.amax(torch.ones(3))
        value = torch.cat([torch.ones(3), out])
        """)
    assert result.returncode == 1
    assert entries_names(result.stderr) == ["torch.masked.amax"]
    assert f"The script stopped at {script}:3: TypeError" in result.stderr


def entries_names(stderr):
    return sorted(report_entries(stderr))


def test_a_clean_script_passes(tmp_path):
    result, _ = audit(tmp_path, """\
        import torch
        import torch.nn.functional as F
        x = torch.randn(3, 4, requires_grad=True)
        F.relu(x).sum().backward()
        print(x.grad.shape)
        """)
    assert result.returncode == 0, result.stderr
    assert "every torch API used by" in result.stderr
    assert report_entries(result.stderr) == {}

"""The probability examples: REINFORCE (examples/reinforce.py) learns its corridor and the VAE
(examples/vae.py) improves its ELBO, briefly, under ember; both run unchanged under PyTorch
with only their import lines swapped."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
SWAPS = {"import ember as torch": "import torch", "from ember import nn": "from torch import nn",
         "from ember.distributions import": "from torch.distributions import",
         "from ember.utils.data import": "from torch.utils.data import"}


def _load(name):
    sys.path.insert(0, EXAMPLES)
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_reinforce_learns_the_corridor():
    reinforce = _load("reinforce")
    policy, history = reinforce.train(episodes=80, quiet=True)
    assert sum(history[-20:]) / 20 > reinforce.random_policy_return() + 0.5
    assert reinforce.greedy_steps(policy) == 9


def test_vae_improves_its_elbo():
    vae = _load("vae")
    model, history = vae.train(epochs=2, limit=10, quiet=True)
    assert history["test_elbo"][-1] > history["test_elbo"][0] + 5


@pytest.mark.slow
@pytest.mark.parametrize("name,args,expected", [
    ("reinforce.py", ["--episodes", "20"], "greedy policy reaches the goal"),
    ("vae.py", ["--epochs", "1"], "test ELBO"),
])
def test_examples_run_unchanged_under_torch(tmp_path, name, args, expected):
    pytest.importorskip("torch")
    source = open(os.path.join(EXAMPLES, name)).read()
    for old, new in SWAPS.items():
        source = source.replace(old, new)
    body = source.split('"""', 2)[2]
    assert "ember" not in body, f"{name} uses ember beyond its import lines"
    source = source.replace('os.path.join(HERE, "..", "data"',
                            f'os.path.join({EXAMPLES!r}, "..", "data"')
    script = tmp_path / name
    script.write_text(source)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")  # one core each under -n
    out = subprocess.run([sys.executable, str(script)] + args, capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert expected in out.stdout

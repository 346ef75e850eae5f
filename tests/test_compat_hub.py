"""ember.hub works offline: the hub folder as torch computes it, weights and entry points
from the local hub cache, and an error naming the URL when a file would need downloading."""
import hashlib
import os

import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.fixture
def hub_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    return tmp_path / "home" / "hub"


def test_get_dir_follows_torch_home_as_torch_does(hub_home, tmp_path):
    assert ember.hub.get_dir() == torch.hub.get_dir() == str(hub_home)
    ember.hub.set_dir(str(tmp_path / "elsewhere"))
    assert ember.hub.get_dir() == str(tmp_path / "elsewhere")


def test_weights_saved_by_torch_load_from_the_cache(hub_home):
    url = "https://download.example.org/models/tiny-0123abcd.pth"
    checkpoints = hub_home / "checkpoints"
    checkpoints.mkdir(parents=True)
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    torch.save(net.state_dict(), checkpoints / "tiny-0123abcd.pth")
    state = ember.hub.load_state_dict_from_url(url, map_location="cpu")
    assert list(state) == ["weight", "bias"]
    assert state["weight"].tolist() == net.weight.tolist()
    model = ember.nn.Linear(3, 2)
    model.load_state_dict(state)
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "0123abcd"'):
        ember.hub.load_state_dict_from_url(url, check_hash=True)
    good = hashlib.sha256((checkpoints / "tiny-0123abcd.pth").read_bytes()).hexdigest()[:8]
    os.rename(checkpoints / "tiny-0123abcd.pth", checkpoints / f"tiny-{good}.pth")
    ember.hub.load_state_dict_from_url(url.replace("0123abcd", good), check_hash=True)


def test_a_missing_file_is_an_error_naming_the_url(hub_home):
    url = "https://download.example.org/models/absent.pth"
    with pytest.raises(RuntimeError, match="cannot download https://download.example.org/"
                                           "models/absent.pth") as error:
        ember.hub.load_state_dict_from_url(url)
    assert str(hub_home / "checkpoints" / "absent.pth") in str(error.value)
    with pytest.raises(RuntimeError, match="cannot download"):
        ember.hub.download_url_to_file(url, "x.pth")
    with pytest.raises(RuntimeError, match="github.com/owner/repo"):
        ember.hub.load("owner/repo", "model")


def test_entry_points_from_a_local_or_cached_repository(hub_home, tmp_path):
    hubconf = """\
import helper_module
dependencies = ["torch"]

def tiny(out_features=2):
    '''A tiny linear model.'''
    import torch
    return torch.nn.Linear(3, out_features) if helper_module.OK else None
"""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(hubconf.replace("import torch", "import ember as torch"))
    (repo / "helper_module.py").write_text("OK = True\n")
    model = ember.hub.load(str(repo), "tiny", source="local", out_features=4)
    assert isinstance(model, ember.nn.Linear) and model.out_features == 4
    cached = hub_home / "owner_repo_main"
    cached.mkdir(parents=True)
    (cached / "hubconf.py").write_text(hubconf.replace("import torch", "import ember as torch"))
    (cached / "helper_module.py").write_text("OK = True\n")
    assert ember.hub.load("owner/repo", "tiny").out_features == 2
    assert "tiny" in ember.hub.list("owner/repo")
    assert ember.hub.help("owner/repo", "tiny") == "A tiny linear model."
    with pytest.raises(RuntimeError, match="Cannot find callable absent in hubconf"):
        ember.hub.load(str(repo), "absent", source="local")

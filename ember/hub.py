"""ember.hub (torch.hub), offline: models and weights from the local hub cache.

ember never downloads. Where torch would fetch a file, ember looks where torch would have
stored it -- the hub cache, `get_dir()`: `$TORCH_HOME/hub` (default `~/.cache/torch/hub`) --
and uses the file if it is there; otherwise it raises a RuntimeError naming the URL and the
path to put the file at. So weights downloaded once by PyTorch (or copied there by hand)
load without a network:

    state = ember.hub.load_state_dict_from_url(url)   # <hub>/checkpoints/<file name>
    model = ember.hub.load("owner/repo", "resnet18")  # <hub>/owner_repo_main/hubconf.py
    model = ember.hub.load("/path/to/repo", "net", source="local")
"""
import hashlib
import importlib.util
import os
import re
import sys
from urllib.parse import urlparse

__all__ = ["get_dir", "set_dir", "load", "list", "help", "load_state_dict_from_url",
           "download_url_to_file"]

_hub_dir = None
_HASH = re.compile(r"-([a-f0-9]*)\.")


def get_dir():
    """The hub cache folder: set_dir's, else $TORCH_HOME/hub, else ~/.cache/torch/hub."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    """Use folder `d` as the hub cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _offline(url, path):
    return RuntimeError(f"ember.hub cannot download {url}: ember works offline. Put the file "
                        f"at {path} (where torch.hub keeps it) and call again.")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Would download `url` to `dst`: ember raises, naming both (it never downloads)."""
    raise _offline(url, dst)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """`ember.load` of the file `url` names, from `model_dir` (default
    `<hub>/checkpoints`); a RuntimeError naming the URL when it is not there."""
    from .serialization import load as load_file

    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    name = file_name or os.path.basename(urlparse(url).path)
    path = os.path.join(model_dir, name)
    if not os.path.exists(path):
        raise _offline(url, path)
    if check_hash:
        _check_hash(path, name)
    return load_file(path, map_location=map_location, weights_only=weights_only)


def _check_hash(path, name):
    """torch's convention: `name-<sha256 prefix>.ext` must match the file's SHA-256."""
    match = _HASH.search(name)
    if match is None:
        return
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if not digest.hexdigest().startswith(match.group(1)):
        raise RuntimeError(f'invalid hash value (expected "{match.group(1)}", got '
                           f'"{digest.hexdigest()}")')


def _repo_dir(repo_or_dir, source):
    """The folder holding hubconf.py: the folder itself for source='local', else the cached
    checkout `<hub>/<owner>_<repo>_<ref>` (ref as given, else main, then master)."""
    if source == "local":
        return repo_or_dir
    if source != "github":
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    repo, _, ref = repo_or_dir.partition(":")
    owner, _, name = repo.partition("/")
    for branch in [ref] if ref else ["main", "master"]:
        folder = os.path.join(get_dir(), f"{owner}_{name}_{branch.replace('/', '_')}")
        if os.path.isdir(folder):
            return folder
    url = f"https://github.com/{repo}/archive/{ref or 'main'}.zip"
    raise _offline(url, os.path.join(get_dir(), f"{owner}_{name}_{ref or 'main'}"))


def _hubconf(folder):
    path = os.path.join(folder, "hubconf.py")
    if not os.path.exists(path):
        raise FileNotFoundError(f"Cannot find hubconf.py in {folder}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)  # hubconf imports its repository's own modules
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


def _entrypoint(module, model):
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point `model` of the repository's hubconf.py with `*args, **kwargs`; the
    repository is a local folder (source='local') or a checkout already in the hub cache."""
    module = _hubconf(_repo_dir(repo_or_dir, source))
    return _entrypoint(module, model)(*args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo=None,  # noqa: A001
         verbose=True):
    """The entry points a cached repository's hubconf.py offers."""
    module = _hubconf(_repo_dir(github, "github"))
    return [name for name in dir(module) if callable(getattr(module, name))
            and not name.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo=None):
    """The docstring of a cached repository's entry point."""
    return _entrypoint(_hubconf(_repo_dir(github, "github")), model).__doc__

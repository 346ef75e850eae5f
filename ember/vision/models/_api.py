"""Pretrained weights and the model registry: `Weights`, `WeightsEnum`, `get_model`, ...

A model builder (`resnet18(weights=ResNet18_Weights.DEFAULT)`) names its checkpoint by URL.
The file is looked up where torch keeps downloads, `$TORCH_HOME/hub/checkpoints/<file name>`
(TORCH_HOME defaults to `$XDG_CACHE_HOME/torch`, else `~/.cache/torch`), downloaded there
with urllib when missing (its SHA-256 checked against the hash prefix in the file name, as
torch's `check_hash=True` does), and read with `ember.load`. Without a network the error
names the URL and the path to put the file at.

Read next: `resnet.py`, the first builder that uses these.
"""
import enum
import fnmatch
import functools
import hashlib
import inspect
import os
import re
import shutil
import sys
import tempfile
import urllib.request
import warnings
from dataclasses import dataclass
from typing import Callable

import ember

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights",
           "get_weight", "list_models"]


@dataclass
class Weights:
    """One checkpoint: its URL, the preprocessing it expects, and its metadata."""
    url: str
    transforms: Callable
    meta: dict

    def __eq__(self, other):
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        mine, theirs = self.transforms, other.transforms
        if isinstance(mine, functools.partial) and isinstance(theirs, functools.partial):
            return (mine.func, mine.args, mine.keywords) == \
                (theirs.func, theirs.args, theirs.keywords)
        return mine == theirs


class WeightsEnum(enum.Enum):
    """The checkpoints of one model (`ResNet50_Weights.IMAGENET1K_V2`, `.DEFAULT`)."""

    @classmethod
    def verify(cls, obj):
        """`obj` as a member of this enum: a member, its name as a string, or None."""
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but "
                                f"received {obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        """The checkpoint's state_dict (from the hub cache, downloaded if missing)."""
        return load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        """Where the checkpoint is published."""
        return self.value.url

    @property
    def transforms(self):
        """The preprocessing class (call it to get the transform: `weights.transforms()`)."""
        return self.value.transforms

    @property
    def meta(self):
        """categories, num_params, min_size, recipe, metrics, ..."""
        return self.value.meta


def _hub_dir():
    torch_home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join("~", ".cache")), "torch")
    return os.path.join(os.path.expanduser(torch_home), "hub")


_HASH_PREFIX = re.compile(r"-([a-f0-9]*)\.")  # resnet18-f37072fd.pth: sha256 starts f37072fd


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=True):
    """torch.hub.load_state_dict_from_url: the checkpoint cached under
    `<hub dir>/checkpoints`, downloaded first when it is not there."""
    model_dir = model_dir or os.path.join(_hub_dir(), "checkpoints")
    name = file_name or os.path.basename(urllib.request.urlparse(url).path)
    path = os.path.join(model_dir, name)
    if not os.path.exists(path):
        match = _HASH_PREFIX.search(name)
        _download(url, path, match.group(1) if check_hash and match else None, progress)
    return ember.load(path, map_location=map_location or "cpu", weights_only=weights_only)


def _download(url, path, hash_prefix, progress):
    """Fetch `url` to `path` through a temporary file; check the SHA-256 prefix if given."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if progress:
        sys.stderr.write(f'Downloading: "{url}" to {path}\n')
    digest = hashlib.sha256()
    fd, partial = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=30) as response:
            for chunk in iter(lambda: response.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        if hash_prefix and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                               f'"{digest.hexdigest()}")')
        shutil.move(partial, path)
    except OSError as e:
        raise RuntimeError(f"could not download the weights {url} ({e}); without a network, "
                           f"download the file elsewhere and put it at {path}") from None
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def _ovewrite_named_param(kwargs, param, new_value):
    """Set kwargs[param] to what the weights need, refusing a conflicting user value."""
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got "
                             f"{kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def handle_legacy_interface(**weights):
    """Accept torchvision's pre-0.13 `pretrained=True/False` (keyword, or the first positional
    argument) for `weights=`, with its deprecation warnings. Each keyword maps a weights
    parameter to (legacy parameter name, the weights that `True` stands for)."""
    def outer(builder):
        @functools.wraps(builder)
        def inner(*args, **kwargs):
            if len(args) > 1:
                raise TypeError(f"{builder.__name__}() takes at most 1 positional argument "
                                f"({len(args)} given)")
            if args:  # resnet18(True): a positional argument fills the weights parameter
                kwargs[next(iter(weights))] = args[0]
            for param, (legacy, default) in weights.items():
                _translate_legacy(builder.__name__, kwargs, param, legacy, default)
            return builder(**kwargs)
        return inner
    return outer


def _translate_legacy(name, kwargs, param, legacy, default):
    missing = object()
    value = kwargs.get(param, missing)
    if (value is missing and legacy not in kwargs) or value is None or \
            isinstance(value, WeightsEnum) or (isinstance(value, str) and value != "legacy"):
        return
    positional = value is not missing  # a bool passed as `weights` (or positionally)
    if positional:
        kwargs[legacy] = kwargs.pop(param)
    pretrained = kwargs.pop(legacy)
    chosen = None
    if pretrained:
        chosen = default(kwargs) if callable(default) else default
        if not isinstance(chosen, WeightsEnum):
            raise ValueError(f"No weights available for model {name}")
    if not positional:
        warnings.warn(f"The parameter '{legacy}' is deprecated since 0.13 and may be removed "
                      f"in the future, please use '{param}' instead.")
    message = (f"Arguments other than a weight enum or `None` for '{param}' are deprecated "
               f"since 0.13 and may be removed in the future. The current behavior is "
               f"equivalent to passing `{param}={chosen}`.")
    if pretrained:
        message += (f" You can also use `{param}={type(chosen).__name__}.DEFAULT` to get the "
                    "most up-to-date weights.")
    warnings.warn(message)
    kwargs[param] = chosen


BUILTIN_MODELS = {}


def register_model(name=None):
    """Decorator: list a builder under `name` (its own name by default) for get_model."""
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered builders, optionally of one module, filtered by
    fnmatch patterns."""
    names = {k for k, fn in BUILTIN_MODELS.items()
             if module is None or fn.__module__.rsplit(".", 1)[0] == module.__name__}
    if include:
        patterns = [include] if isinstance(include, str) else include
        names = {n for p in patterns for n in fnmatch.filter(names, p)}
    if exclude:
        patterns = [exclude] if isinstance(exclude, str) else exclude
        names -= {n for p in patterns for n in fnmatch.filter(names, p)}
    return sorted(names)


def get_model_builder(name):
    """The builder function registered as `name`."""
    try:
        return BUILTIN_MODELS[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    """Build the registered model `name` with keyword arguments (weights=..., ...)."""
    return get_model_builder(name)(**config)


def get_model_weights(name):
    """The WeightsEnum class of a builder (given by name or as the function)."""
    builder = get_model_builder(name) if isinstance(name, str) else name
    weights = getattr(builder, "_weights_enum", None)
    if weights is None:
        raise ValueError("The method is missing the 'weights' argument.")
    return weights


def get_weight(name):
    """A weights member from its full name, e.g. "ResNet50_Weights.IMAGENET1K_V2"."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    from .. import models

    candidate = getattr(models, enum_name, None)
    if not (inspect.isclass(candidate) and issubclass(candidate, WeightsEnum)):
        raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be "
                         "retrieved.")
    return candidate[value_name]


def builder(weights_enum, legacy_default):
    """Decorate a model builder: register it, accept `pretrained=`, and remember its weights
    enum (for get_model_weights)."""
    def wrap(fn):
        fn._weights_enum = weights_enum
        wrapped = handle_legacy_interface(weights=("pretrained", legacy_default))(fn)
        wrapped._weights_enum = weights_enum
        return register_model()(wrapped)
    return wrap


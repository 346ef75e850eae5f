"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (and the
deprecated Container).

Children are registered under their position ("0", "1", ...) or key, so state_dict keys match
torch's ("layers.0.weight"). Deleting from a Sequential or ModuleList renumbers what remains,
as torch does; slicing a Sequential keeps the original keys. ParameterList and ParameterDict
wrap plain tensors into Parameters (other objects are stored as plain attributes).

Read next: `linear.py`.
"""
import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent, _typename

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]


class Container(Module):
    """Deprecated in torch: a Module whose keyword arguments become its children."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


def _abs_index(idx, size):
    """A Python index (negative counts from the end) checked against `size`."""
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size if size else idx


def _renumber(module):
    """Keys "0".."n-1" in the current order (after a deletion or an insertion)."""
    object.__setattr__(module, "_modules", {str(i): m for i, m in
                                            enumerate(module._modules.values())})


class Sequential(Module):
    """Modules applied in order: `Sequential(a, b)(x) == b(a(x))`; also from an OrderedDict,
    whose keys become the children's names."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_abs_index(idx, len(self))]

    def __setitem__(self, idx, module):
        setattr(self, list(self._modules)[_abs_index(idx, len(self))], module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                delattr(self, key)
        else:
            delattr(self, list(self._modules)[_abs_index(idx, len(self))])
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        combined = Sequential()
        for layer in (*self, *other):
            combined.append(layer)
        return combined

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other):
        """`seq * 3`: the same modules (shared, not copied) three times."""
        self._check_factor(other)
        combined = Sequential()
        for i, module in enumerate(list(self) * other):
            combined.add_module(str(i), module)
        return combined

    __rmul__ = __mul__

    def __imul__(self, other):
        self._check_factor(other)
        modules = list(self)
        for i, module in enumerate(modules * (other - 1)):
            self.add_module(str(len(modules) + i), module)
        return self

    def _check_factor(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def append(self, module):
        """Add `module` at the end, named by its position; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert `module` before position `index` (negative counts from the end) and renumber the
        children "0", "1", ...; returns self. Raises IndexError outside [-len, len]."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules = list(self._modules.values())
        modules.insert(index, module)
        object.__setattr__(self, "_modules", {str(i): m for i, m in enumerate(modules)})
        return self

    def extend(self, sequential):
        """Append every module of an iterable (another Sequential, a list); returns self."""
        for module in sequential:
            self.append(module)
        return self

    def pop(self, key):
        """Remove and return the module at index `key`."""
        module = self[key]
        del self[key]
        return module

    def forward(self, input):
        """Feed `input` through the children in order, each one's output being the next one's input,
        and return the last output."""
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered (so their parameters are the parent's)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx, module):
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self))))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate((*self, *other)):
            combined.add_module(str(i), module)
        return combined

    def append(self, module):
        """Add `module` at the end, named by its position; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        """Append every module of an iterable; returns self. Raises TypeError for a non-iterable."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def insert(self, index, module):
        """Insert before `index` (Python list semantics, so negative indices work too)."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        object.__setattr__(self, "_modules", {})
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def pop(self, key):
        """Remove and return the module at index `key`; the later ones are renumbered."""
        module = self[key]
        del self[key]
        return module

    def __repr__(self):
        """Runs of identical consecutive children print once: "(0-2): 3 x Linear(...)"."""
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        runs = []  # [first index, last index, repr]
        for i, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = []
        for first, last, text in runs:
            if first == last:
                line = f"({first}): {text}"
            else:
                line = f"({first}-{last}): {last - first + 1} x {text}"
            lines.append(_addindent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove the module under `key` and return it."""
        value = self[key]
        del self[key]
        return value

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """The `(key, module)` pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules):
        """From a mapping (its order) or an iterable of (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(modules).__name__}")
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for key, module in _pairs(modules, "ModuleDict"):
            self[key] = module


def _pairs(items, owner):
    """(key, value) from an iterable of pairs, with torch's errors for anything else."""
    for j, item in enumerate(items):
        if not isinstance(item, Iterable):
            # torch's message has no space after "is"
            raise TypeError(f"{owner} update sequence element #{j} should be Iterable; "
                            f"is{type(item).__name__}")
        if len(item) != 2:
            raise ValueError(f"{owner} update sequence element #{j} has length {len(item)}; "
                             "2 is required")
        yield item[0], item[1]


class ParameterList(Module):
    """A list of parameters registered as "0", "1", ...; tensors are wrapped in Parameter."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx):
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, param):
        # every way of adding an entry ends here: the one place that wraps tensors
        setattr(self, self._key(idx), _as_parameter(param))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __iadd__(self, params):
        return self.extend(params)

    def append(self, value):
        """Add `value` at the end (a plain tensor is wrapped in Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Append every value of an iterable; returns self. A single tensor is refused (TypeError)
        rather than split into its rows."""
        # a Tensor is iterable, but is never unpacked into entries
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_describe(p, str(p.dtype) if isinstance(p, Tensor) else '')}"
                         for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters under string keys; tensors are wrapped in Parameter."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key):
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a "
                            f"string (type is '{type(key).__name__}'). Open an issue on github "
                            "if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        # every way of adding an entry ends here: the one place that wraps tensors
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters (not copies of them), in the same order.
        """
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        """The value under `key`; if absent, first store `default` there (a tensor is wrapped in
        Parameter)."""
        if key not in self:
            self[key] = default
        return self[key]

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """The `(key, parameter)` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The parameters, in insertion order."""
        return (self[k] for k in self._keys)

    def get(self, key, default=None):
        """The value under `key`, or `default` if there is none."""
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with every key of `keys` mapped to `default`."""
        return ParameterDict((k, default) for k in keys)

    def pop(self, key):
        """Remove the value under `key` and return it."""
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove and return the most recently inserted `(key, value)` pair."""
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def clear(self):
        """Remove every entry."""
        for key in list(self._keys):
            del self[key]

    def update(self, parameters):
        """From an OrderedDict / ParameterDict (their order), a plain mapping (sorted by key,
        as torch does), or an iterable of (key, value) pairs."""
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            f"key/value pairs, but got {type(parameters).__name__}")
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = list(parameters.items())
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = list(_pairs(parameters, "ParameterDict"))
        for key, value in items:
            self[key] = value

    def __or__(self, other):
        combined = self.copy()
        combined.update(other)
        return combined

    def __ror__(self, other):
        combined = other.copy()
        combined.update(self)
        return combined

    def __ior__(self, other):
        self.update(other)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_describe(p, _typename(p) if isinstance(p, Tensor) else '')}"
                         for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")


def _as_parameter(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(p, type_text):
    """One entry of a ParameterList/Dict repr: "Parameter containing: [float32 of size 2x3]"
    (the list shows the dtype, the dict the tensor type, as in torch)."""
    if not isinstance(p, Tensor):
        return f"Object of type: {type(p).__name__}"
    size = "x".join(str(n) for n in p.shape)
    device = f" ({p.device})" if p.device.type != "cpu" else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{type_text} of size {size}{device}]"

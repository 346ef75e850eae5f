"""`Module`: the base class of every layer and model, with torch's registration design.

Assigning a `Parameter`, a `Module` or a registered buffer to an attribute puts it in
`_parameters`, `_modules` or `_buffers` (see `__setattr__`), in assignment order. Everything
else walks those three dicts: `named_parameters()`, `state_dict()` keys ("fc1.weight"),
`to()`, `train()`, `__repr__`. Because the order and names are torch's, a state_dict saved by
PyTorch loads into the same model written with ember, and the other way round.

    model.fc1 = Linear(2, 3)      ->  model._modules["fc1"]
    self.weight = Parameter(w)    ->  self._parameters["weight"]
    self.register_buffer("m", t)  ->  self._buffers["m"]   (persistent: in the state_dict)

`__call__` runs forward pre-hooks, `forward`, then forward hooks; full backward hooks wrap the
inputs and outputs in identity autograd nodes. All of that lives in `_hooks.py`, which also
holds the global hooks (`register_module_forward_hook`, ...) re-exported here as in torch.

Read next: `_hooks.py`, then `container.py` (Sequential, ModuleList, ModuleDict, ...).
"""
import inspect
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _dtype as dt
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter
from . import _hooks
from ._hooks import (  # noqa: F401 (torch's public names here)
    register_module_backward_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_backward_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook",
           "register_module_buffer_registration_hook"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

# hook(module, name, value) -> None or a replacement value, run on every registration
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()


def register_module_module_registration_hook(hook):
    """Register `hook(module, name, submodule)`, run whenever any module registers a submodule; a
    non-None return replaces the submodule. Returns a handle whose `remove()` unregisters it."""
    return RemovableHandle(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """Register `hook(module, name, param)`, run whenever any module registers a parameter; a
    non-None return replaces the parameter. Returns a handle whose `remove()` unregisters it."""
    return RemovableHandle(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook):
    """Register `hook(module, name, buffer)`, run whenever any module registers a buffer; a non-None
    return replaces the buffer. Returns a handle whose `remove()` unregisters it."""
    return RemovableHandle(_global_buffer_registration_hooks, hook)


def _run_registration_hooks(hooks, module, name, value):
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What `load_state_dict` returns: the keys it could not match."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text, spaces):
    """Indent every line but the first (nested reprs)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _typename(value):
    """torch.typename: 'ember.FloatTensor' for tensors, the qualified class name otherwise."""
    if isinstance(value, Tensor):
        return value.type()
    cls = type(value)
    module = cls.__module__ or ""
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


class Module:
    """Base class for all neural network modules; subclasses define `forward`."""

    dump_patches = False
    _version = 1  # stored in state_dict()._metadata; layers bump it when their format changes
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # object.__setattr__: these are plain attributes, and our __setattr__ needs them first
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_is_full_backward_hook", None)
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())
        setattr_(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """Compute the module's output from its inputs; every subclass overrides it.

        Call the module itself (`model(x)`) rather than `forward`: `__call__` also runs the forward
        and backward hooks registered on it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    # ------------------------------------------------------------------------------------------
    # registration

    def register_parameter(self, name, param):
        """Add a parameter (or None: a declared but absent one, like Linear(bias=False))."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                                f"'{name}' (torch.nn.Parameter or None required)")
            if param.grad_fn is not None:
                raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                                 f"parameters must be created explicitly. To express '{name}' "
                                 "as a function of another Tensor, compute the value in the "
                                 "forward() method.")
        param = _run_registration_hooks(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a tensor that is module state but not trained; persistent buffers are saved in
        the state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):  # the marker class has done its job: store a Tensor
            tensor = tensor.detach().requires_grad_(tensor.requires_grad)
        tensor = _run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def _check_name(self, name, kind, registry):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    def add_module(self, name, module):
        """Add a child module (or None); it is visible as an attribute and in state_dict keys."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        # torch checks these in a different order than for parameters and buffers
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        module = _run_registration_hooks(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of `add_module`."""
        self.add_module(name, module)

    def __setattr__(self, name, value):
        """Route Parameters, Modules and Buffers (and values for names already registered as
        one of those) into their registries; anything else is a plain attribute."""
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, self.__dict__, buffers, modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, self.__dict__, params, buffers, self._non_persistent_buffers_set)
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = _run_registration_hooks(_global_module_registration_hooks, self,
                                                    name, value)
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            self._set_buffer_attr(name, value)
        else:
            object.__setattr__(self, name, value)

    def _set_buffer_attr(self, name, value):
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)")
        if isinstance(value, Buffer):
            persistent = value.persistent
        else:
            persistent = name not in self._non_persistent_buffers_set
        # subclasses sometimes override register_buffer without the `persistent` argument
        register = self.register_buffer
        if getattr(register, "__func__", None) is Module.register_buffer or \
                "persistent" in inspect.signature(register).parameters:
            self.register_buffer(name, value, persistent)
        elif persistent:
            self.register_buffer(name, value)
        else:
            raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                               "implements register_buffer() without the persistent argument "
                               "is not allowed.")

    def __getattr__(self, name):
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            found = d.get(registry)
            if found is not None and name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = dir(type(self)) + list(self.__dict__) + list(self._parameters) + \
            list(self._modules) + list(self._buffers)
        # "0", "1" (Sequential children) are not valid attribute names
        return sorted(k for k in keys if not k[0].isdigit())

    # ------------------------------------------------------------------------------------------
    # traversal

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        """(dotted name, value) for every member of every module; a value reached twice
        (a tied weight) is reported once unless remove_duplicate=False."""
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or value in seen:
                    continue
                if remove_duplicate:
                    seen.add(value)
                yield (module_prefix + ("." if module_prefix else "") + name, value)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Yield `(dotted name, parameter)` for this module's parameters and, with recurse=True, its
        submodules', each parameter once unless remove_duplicate=False."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        """Yield the parameters of this module (and, with recurse=True, of its submodules), each
        once; the usual argument of an optimizer."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Yield `(dotted name, buffer)` for this module's buffers and, with recurse=True, its
        submodules', persistent or not."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        """Yield the buffers of this module (and, with recurse=True, of its submodules), persistent
        or not."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        """Yield `(name, module)` for the direct submodules, each once, in registration order."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        """Yield the direct submodules, each once, in registration order."""
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Depth-first, parents before children. `memo` holds the modules already seen, as
        in torch; iterative, so very deep models do not hit the recursion limit."""
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if module in memo:
                continue
            if remove_duplicate:
                memo.add(module)
            yield name, module
            children = [(name + ("." if name else "") + child_name, child)
                        for child_name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    def modules(self):
        """Yield this module and every module below it, depth-first, each once."""
        for _, module in self.named_modules():
            yield module

    def get_submodule(self, target):
        """The module at a dotted path ("encoder.layers.0")."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless strict, add) the module at a dotted path."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter at a dotted path ("encoder.0.weight"); raises AttributeError if the path is
        missing or is not a Parameter."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at a dotted path ("bn.running_mean"); raises AttributeError if the path is
        missing or is not a buffer."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    # ------------------------------------------------------------------------------------------
    # modes and gradients

    def train(self, mode=True):
        """Set training mode (mode=True) or evaluation mode on this module and all its submodules;
        returns self.

        Only modules that behave differently in training (Dropout, BatchNorm, ...) look at
        `self.training`."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Set evaluation mode on this module and its submodules (`train(False)`); returns self. It
        does not turn off gradient tracking: use `no_grad()` for that."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set `requires_grad` on every parameter (e.g. False to freeze them); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Drop every parameter's gradient (or, with set_to_none=False, fill it with zeros)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def share_memory(self):
        """Move every parameter and buffer (and existing gradient) into shared memory, in
        place (Tensor.share_memory_), so processes started afterwards update the same
        weights -- Hogwild training."""
        return self._apply(lambda t: t.share_memory_())

    def compile(self, *args, **kwargs):
        """torch's in-place `Module.compile(**torch.compile's kwargs)`: the arguments are
        checked as ember.compile checks them; calls then run as before (ember compiles
        nothing: see ember/_compile.py)."""
        from ..._compile import compile as compile_fn

        compile_fn(self.__call__, *args, **kwargs)

    # ------------------------------------------------------------------------------------------
    # conversion

    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data with fn(data). The Parameter objects
        stay the same (optimizers hold them) and so do their `.grad` tensors, converted too."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
                if param.grad is not None:
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Call fn(module) on every child (recursively), then on self: e.g. custom init."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """`to(device)`, `to(dtype)`, `to(device, dtype)`, `to(tensor)`: floating (and complex)
        parameters and buffers take the dtype; all take the device. `non_blocking` and
        `memory_format` are accepted as layout/speed hints: ember copies synchronously and
        keeps each tensor's layout (the values are the same either way)."""
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            keeps_dtype = not (t.is_floating_point() or t.is_complex())
            return t.to(device=device, dtype=None if keeps_dtype else dtype)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers become uninitialised tensors of the same shape on `device`."""
        from ..._creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        """Move every parameter and buffer to the CPU, in place; returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move every parameter and buffer to a CUDA device (the current one if `device` is None),
        in place; returns self."""
        return self._apply(lambda t: t.cuda(device))

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        """Cast floating-point parameters and buffers to float32, in place; integer and bool tensors
        are left alone. Returns self."""
        return self._cast_floats(dt.float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64, in place; integer and bool tensors
        are left alone. Returns self."""
        return self._cast_floats(dt.float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16, in place; integer and bool tensors
        are left alone. Returns self."""
        return self._cast_floats(dt.float16)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16, in place; integer and bool
        tensors are left alone. Returns self."""
        return self._cast_floats(dt.bfloat16)

    def type(self, dst_type):
        """Cast every parameter and buffer, whatever its dtype, to `dst_type` (a dtype or a tensor
        type name such as "torch.FloatTensor"); returns self."""
        return self._apply(lambda t: t.type(dst_type))

    # ------------------------------------------------------------------------------------------
    # state dict

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of parameters and persistent buffers under dotted names, with torch's
        `_metadata` ({module prefix: {"version": module._version}})."""
        if args:  # the deprecated positional form state_dict(destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:  # the private hook's old contract: it may replace
                destination = result
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self):
        """Override (with `set_extra_state`) to save non-tensor state under "_extra_state"."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        """Override (with `get_extra_state`) to restore the object that `get_extra_state` saved
        under "_extra_state" in the state_dict; `load_state_dict` calls it."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from `state_dict` into this module's parameters and buffers (or, with
        assign=True, put the given tensors in their place).

        Returns (missing_keys, unexpected_keys); with strict=True any of those, or a shape
        mismatch, raises RuntimeError listing them all, as torch does."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # a copy: pre-hooks may edit it
        if metadata is not None:
            state_dict._metadata = metadata
        self._load_recursive(state_dict, "", metadata, assign, (missing, unexpected, errors))
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _load_recursive(self, state_dict, prefix, metadata, assign, reports):
        """Each module loads its own entries, then its children theirs (each child sees only
        the keys under its prefix); post-hooks run once the subtree is loaded."""
        missing, unexpected, errors = reports
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if assign:
            local_metadata["assign_to_params_buffers"] = True
        # strict=True here always: it only controls key reporting, load_state_dict decides
        self._load_from_state_dict(state_dict, prefix, local_metadata, True, missing,
                                   unexpected, errors)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_dict = {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}
                child._load_recursive(child_dict, child_prefix, metadata, assign, reports)
        result = _IncompatibleKeys(missing, unexpected)
        for hook in self._load_state_dict_post_hooks.values():
            if hook(self, result) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook``"
                                   " are not expected to return new values, if "
                                   "incompatible_keys need to be modified, it should be done "
                                   "inplace.")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own parameters and persistent buffers (not its children's);
        layers override it to convert old formats (see `_version`)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        local_state = {k: v for k, v in self._parameters.items() if v is not None}
        local_state.update((k, v) for k, v in self._buffers.items()
                           if v is not None and k not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, target in local_state.items():
            key = prefix + name
            if key in state_dict:
                self._load_one(name, key, target, state_dict[key], assign, error_msgs)
            elif strict:
                missing_keys.append(key)
        self._load_extra_state(state_dict, prefix, strict, missing_keys, unexpected_keys)
        if strict:
            extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                if (dot and head not in self._modules) or (not dot and head not in local_state):
                    unexpected_keys.append(key)

    def _load_one(self, name, key, target, value, assign, error_msgs):
        if not isinstance(value, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected '
                              f"torch.Tensor or Tensor-like object from checkpoint but "
                              f"received {type(value)}")
            return
        if target.ndim == 0 and value.shape == (1,):  # checkpoints from torch 0.3
            value = value[0]
        if value.shape != target.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{target.shape}.")
            return
        try:
            with no_grad():
                if not assign:
                    target.copy_(value)
                elif isinstance(target, Parameter):
                    if not isinstance(value, Parameter):
                        value = Parameter(value, requires_grad=target.requires_grad)
                    else:
                        value.requires_grad_(target.requires_grad)
                    setattr(self, name, value)
                else:
                    setattr(self, name, value)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                              f"the model are {target.size()} and whose dimensions in the "
                              f"checkpoint are {value.size()}, an exception occurred : "
                              f"{ex.args}.")

    def _load_extra_state(self, state_dict, prefix, strict, missing_keys, unexpected_keys):
        key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if key in state_dict:
                self.set_extra_state(state_dict[key])
            elif strict:
                missing_keys.append(key)
        elif strict and key in state_dict:
            unexpected_keys.append(key)

    def register_state_dict_pre_hook(self, hook):
        """`hook(module, prefix, keep_vars)` before this module's entries are saved."""
        return RemovableHandle(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata)` after; edits in place."""
        hook._from_public_api = True
        return RemovableHandle(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        """The older private form, whose hook may return a replacement state_dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return RemovableHandle(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WrappedHook(hook,
                                                                  self if with_module else None)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """`hook(module, incompatible_keys)` after this module's subtree loaded; may edit the
        key lists in place (returning a value is an error)."""
        return RemovableHandle(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------------------------------
    # calling and hooks (the machinery is in _hooks.py)

    def __call__(self, *args, **kwargs):
        if self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or \
                self._backward_pre_hooks or _hooks.any_global_hooks():
            return _hooks.call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    _call_impl = __call__

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """`hook(module, args)` (or `hook(module, args, kwargs)`) before forward; may return
        replacement args (or (args, kwargs))."""
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """`hook(module, args, output)` (or with kwargs before output) after forward; a
        non-None return replaces output. always_call: also run when forward raised."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """`hook(module, grad_output)` before the gradients w.r.t. the inputs are computed;
        may return a replacement grad_output."""
        handle = RemovableHandle(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """`hook(module, grad_input, grad_output)` once the input gradients are known; may
        return a replacement grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Deprecated torch form: `hook(module, grad_input, grad_output)` on the grad_fn of the
        output, so grad_input are that last op's input gradients, not the module's."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return RemovableHandle(self._backward_hooks, hook)

    # ------------------------------------------------------------------------------------------
    # printing and pickling

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """One line (or several) shown inside the parentheses of this module's repr."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_addindent(repr(module), 2)}"
                       for name, module in self._modules.items()]
        text = self._get_name() + "("
        if len(extra_lines) == 1 and not child_lines:
            text += extra_lines[0]
        elif extra_lines or child_lines:
            text += "\n  " + "\n  ".join(extra_lines + child_lines) + "\n"
        return text + ")"

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        # modules pickled by older versions lack the newer registries
        for name in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_backward_pre_hooks", "_state_dict_hooks",
                     "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)


class _WrappedHook:
    """A load-state-dict pre-hook, called with its module first when registered publicly."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.module = module

    def __call__(self, *args, **kwargs):
        if self.module is not None:
            return self.hook(self.module, *args, **kwargs)
        return self.hook(*args, **kwargs)


def _remove_from(name, *registries):
    for registry in registries:
        if registry is None or name not in registry:
            continue
        if isinstance(registry, set):
            registry.discard(name)
        else:
            del registry[name]


def _parse_to(args, kwargs):
    """(device, dtype) from Module.to's forms: (device), (dtype), (tensor), (device, dtype),
    each with optional non_blocking / memory_format keywords."""
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "memory_format", "copy"}
    if unknown:
        raise TypeError(f"to() got an unexpected keyword argument '{sorted(unknown)[0]}'")
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        device, dtype = rest[0].device, rest[0].dtype
        rest.pop(0)
    elif rest and isinstance(rest[0], dt.dtype):
        dtype = rest.pop(0)
    elif rest and not isinstance(rest[0], bool):
        device = rest.pop(0)
        if rest and isinstance(rest[0], dt.dtype):
            dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):  # non_blocking: copies are synchronous here
        rest.pop(0)
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments - got {args}")
    return device, dtype

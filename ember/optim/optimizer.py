"""`Optimizer`: torch's surface (param_groups, state, zero_grad, step(closure), state_dict, hooks).

Each concrete optimizer supplies two small methods:

    _init_state(p, state, group)       its per-parameter buffers, as tensors (so state_dicts
                                       hold tensors, exchangeable with torch's)
    _update(param, grad, state, group, step)
                                       the math for one parameter on raw arrays, in place

The base class walks the groups and the parameters that have a gradient, creates a state the
first time a parameter is seen (kept only if the optimizer stored something in it: SGD
without momentum keeps none, like torch), counts `step` (a 0-d float32 tensor, as in torch)
for optimizers whose state has one, runs the updates (on the thread pool when the parameters
are large: each update touches only its own parameter and state), and bumps each parameter's
version counter (an in-place change of a parameter invalidates graphs that saved it, exactly
as in torch). An optimizer that needs the whole group at once (LBFGS) overrides `step`
instead. A user's `_update` must therefore not share anything between parameters.

Every `step` -- the base one and any subclass's, user optimizers included -- runs the step
hooks around it (`__init_subclass__` wraps it), so hooks behave as in torch.

state_dict() layout (torch's):
    {"state": {0: {"step": tensor(3.), "exp_avg": ...}, 1: {...}},
     "param_groups": [{"lr": 0.001, ..., "params": [0, 1]}]}
Parameters are numbered in group order; the numbers are how a state_dict maps back. Like
torch, state_dict() returns the live state tensors (no copies) and load_state_dict() adopts
the given tensors unless they need a cast to the parameter's dtype or device.

Read next: sgd.py and adam.py (the two-method pattern), then lr_scheduler.py.
"""
import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from itertools import chain

from numpy import ndarray

from .. import _creation
from .. import _dtype as dt
from .._backend import device_of
from .._parallel import SPLIT_ELEMENTS, get_num_threads, parallel_map
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _Required:
    """Marks a hyperparameter with no default (`SGD(params)` without lr raises)."""

    def __repr__(self):
        return "<required parameter>"


required = _Required()

# boolean/None options added over torch's versions: filled in when loading a state_dict
_FLAGS = {"maximize", "foreach", "differentiable", "capturable", "fused", "nesterov", "amsgrad",
          "centered", "decoupled_weight_decay"}


def _shares(work):
    """The (param, state, step) updates dealt out as one list per thread, whole parameters
    each, largest first to the lightest list -- or one list where threads would not pay:
    CPU arrays only, and SPLIT_ELEMENTS a thread at least. An update is a handful of
    memory-bound passes over its parameter; on two cores, AdamW over a GPT's 3.2M parameters
    took 5.5 ms instead of 8.1, SGD with momentum over an MLP's 1.9M 0.5 instead of 1.0."""
    sizes = [p._data.size if type(p._data) is ndarray else 0 for p, _, _ in work]
    count = min(get_num_threads(), len(work), sum(sizes) // SPLIT_ELEMENTS)
    if count < 2 or not all(sizes):
        return [work]
    shares, loads = [[] for _ in range(count)], [0] * count
    for size, item in sorted(zip(sizes, work), key=lambda pair: -pair[0]):
        lightest = loads.index(min(loads))
        shares[lightest].append(item)
        loads[lightest] += size
    return shares


_global_pre_hooks = OrderedDict()
_global_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Run `hook(optimizer, args, kwargs)` before every optimizer's step."""
    return RemovableHandle(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Run `hook(optimizer, args, kwargs)` after every optimizer's step."""
    return RemovableHandle(_global_post_hooks, hook)


def _with_step_hooks(step):
    """Wrap a `step` method so the pre and post hooks run around it. `args` as the hooks see
    it includes the optimizer itself, as in torch. A subclass step that calls
    `super().step()` runs the hooks once, not twice."""
    if getattr(step, "_runs_step_hooks", False):
        return step

    @functools.wraps(step)
    def hooked_step(*args, **kwargs):
        self = args[0]
        if self.__dict__.get("_in_step"):
            return step(*args, **kwargs)
        self._in_step = True
        try:
            for hook in chain(_global_pre_hooks.values(),
                              self._optimizer_step_pre_hooks.values()):
                result = hook(self, args, kwargs)
                if result is None:
                    continue
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
            out = step(*args, **kwargs)
            for hook in chain(self._optimizer_step_post_hooks.values(),
                              _global_post_hooks.values()):
                hook(self, args, kwargs)
            return out
        finally:
            self._in_step = False

    hooked_step._runs_step_hooks = True
    return hooked_step


def _as_tensor(array):
    """Wrap a raw array (a new state buffer) as a tensor on the array's device."""
    return Tensor._make(array, device=device_of(array))


def _to_scalar(value):
    """A 1-element tensor hyperparameter (torch allows `lr=torch.tensor(0.01)`) as a float."""
    return value.item() if isinstance(value, Tensor) else value


class Optimizer:
    """The base class of the optimizers: holds `param_groups` (a list of dicts, each with "params"
    and its hyperparameters, `defaults` filling in what a group omits) and `state` (per-parameter
    tensors, keyed by the parameter).

    `params` is an iterable of tensors, of `(name, tensor)` pairs, or of group dicts. A subclass
    either implements `_init_state` and `_update` (the math for one parameter; the base `step` walks
    the groups, counts `step` and runs the hooks), or overrides `step` itself, as a torch optimizer
    does."""

    # state entries that torch keeps as 0-d float32 tensors; old checkpoints held numbers
    _scalar_state_keys = ("step",)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Add a group: a dict with "params" (tensors, or (name, tensor) pairs as from
        `named_parameters()`) and optional hyperparameter overrides. Like torch, the dict
        itself becomes the group."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        param_group["params"] = params
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__module__}.{type(p).__name__}")
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        existing = set()
        for group in self.param_groups:
            existing.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not existing.isdisjoint(id(p) for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Drop every gradient (the default), or zero it in place (set_to_none=False)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    # ------------------------------------------------------------------------------------------
    # stepping

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group):
        """Update the group's parameters (override for a whole-group update). Each update is
        independent of the others, so large groups share them out over the thread pool."""
        work = []
        for p in group["params"]:
            if p.grad is None:
                continue
            # .get: indexing the defaultdict would store an empty state for SGD without momentum
            state = self.state.get(p)
            if state is None:
                state = {}
            if not state:
                self._init_state(p, state, group)
            step = state.get("step")
            if step is not None:
                step._data += 1
                step = float(step._data)
            work.append((p, state, step))

        def update(share):
            with no_grad():  # grad mode is per thread: a pool thread's is on
                for p, state, step in share:
                    self._update(p._data, p.grad._data, state, group, step)
        try:
            parallel_map(update, _shares(work))
        finally:  # even a failed step may have changed any of them: graphs that saved one
            for p, _, _ in work:  # must see it
                p._vc.value += 1
        for p, state, _ in work:
            if state:
                self.state[p] = state

    def _init_state(self, p, state, group):
        """Create the per-parameter buffers (momentum, moving averages, ...)."""

    @staticmethod
    def _new_step():
        return _creation.tensor(0.0, dtype=dt.float32)

    def _update(self, param, grad, state, group, step):
        """Update `param` (an array) in place from `grad`; `state` holds tensors."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    # ------------------------------------------------------------------------------------------
    # hooks

    @staticmethod
    def _register(hooks, hook, prepend=False):
        handle = RemovableHandle(hooks, hook)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """`hook(optimizer, args, kwargs)` before step; may return new (args, kwargs)."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """`hook(optimizer, args, kwargs)` after step."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """`hook(optimizer)` before state_dict() builds its result."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """`hook(optimizer, state_dict)`; a non-None return replaces the state_dict."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """`hook(optimizer, state_dict)` before loading; a non-None return is loaded instead."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """`hook(optimizer)` after loading."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ------------------------------------------------------------------------------------------
    # state dict

    def state_dict(self):
        """The optimizer's state as torch lays it out: `{"state": {index: {name: tensor}},
        "param_groups": [{..., "params": [indices]}]}`, parameters numbered in group order. The
        state tensors are the live ones, not copies, as in torch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            # numbered by position, so a (warned-about) duplicate parameter skips a number
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {index[id(k)] if isinstance(k, Tensor) else k: v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a state saved by `state_dict` (here or by torch) into an optimizer built over the
        same parameters, matching them by position. Raises ValueError if the number of groups or of
        parameters in a group differs; state tensors are cast to their parameter's dtype and device
        where needed, as in torch."""
        state_dict = dict(state_dict)
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                            chain.from_iterable(g["params"] for g in self.param_groups)))
        state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                p = by_index[key]
                policy = _group_of(key, state_dict["param_groups"])
                state[p] = _cast_state(p, value, policy)
            else:
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        """Also the last step of load_state_dict: fills in what older checkpoints lack."""
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        for group in self.param_groups:  # flags that older checkpoints may lack
            for name in _FLAGS.intersection(self.defaults):
                group.setdefault(name, self.defaults[name])
        self.defaults.setdefault("differentiable", False)
        for per_param in self.state.values():
            for key in self._scalar_state_keys:
                value = per_param.get(key) if isinstance(per_param, dict) else None
                if value is not None and not isinstance(value, Tensor):
                    per_param[key] = _creation.tensor(float(value), dtype=dt.float32)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _group_of(index, saved_groups):
    """The saved group that holds parameter number `index` (its fused/capturable flags decide
    how `step` is loaded)."""
    for group in saved_groups:
        if index in group["params"]:
            return group
    return {}


def _cast_state(param, value, group, key=None):
    """torch's loading policy: `step` stays as saved (float32 on the parameter's device when
    fused/capturable); every other tensor takes the parameter's device, and its dtype when the
    parameter is floating. Containers (LBFGS keeps lists) are walked."""
    if isinstance(value, Tensor):
        if key == "step":
            if group.get("fused") or group.get("capturable"):
                return value.to(dtype=dt.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, group, key=k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return type(value)(_cast_state(param, v, group) for v in value)
    return value


Optimizer.step = _with_step_hooks(Optimizer.step)

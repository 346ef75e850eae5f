"""Process-wide state a test might change and must put back: the guard in conftest.py takes a
snapshot before each test and compares after it. A test that leaves any of it changed fails
(its teardown reports what changed) and the state is restored, so the next test -- in any order,
in any process -- starts from the same place.

Each entry is (name, read, write): `read()` returns a comparable value, `write(value)` restores
it. torch is imported here where it is installed (most test modules import it anyway), so that
the first test that uses it in a process is guarded too.
"""
import os
import sys
import warnings

import numpy as np

import ember
from ember import _parallel
from ember._tensor_str import PRINT_OPTS
from ember.autograd import anomaly_mode, grad_mode

# Set by others, not by tests: pytest sets PYTEST_CURRENT_TEST around each phase of a test, and
# torch sets TORCHINDUCTOR_CACHE_DIR the first time it imports its compiler (an optimizer's
# first step does), in whichever test that happens to be.
_NOT_A_TESTS_DOING = {"PYTEST_CURRENT_TEST", "TORCHINDUCTOR_CACHE_DIR"}


def _environ():
    return {k: v for k, v in os.environ.items() if k not in _NOT_A_TESTS_DOING}


def _set_environ(saved):
    for name in set(_environ()) - set(saved):
        del os.environ[name]
    os.environ.update(saved)


def _filters():
    """The warnings filters, less the one SymPy adds when torch first imports it (lazily, in
    whichever test first needs it)."""
    return [f for f in warnings.filters
            if not getattr(f[2], "__module__", "").startswith("sympy")]


def _set_filters(saved):
    sympy = [f for f in warnings.filters if f not in saved and f not in _filters()]
    warnings.filters[:] = saved + sympy


def _print_options():
    return dict(vars(PRINT_OPTS))


def _set_print_options(saved):
    vars(PRINT_OPTS).update(saved)


def _grad_state():
    return (grad_mode.state.grad_enabled, grad_mode.state.inference)


def _set_grad_state(saved):
    grad_mode.state.grad_enabled, grad_mode.state.inference = saved


def _anomaly():
    return (anomaly_mode.enabled, anomaly_mode.check_nan)


def _set_anomaly(saved):
    anomaly_mode.enabled, anomaly_mode.check_nan = saved


def _autocast():
    from ember.amp import autocast_mode as ac
    from ember.ops import _dispatch

    return ({d: (st.enabled, st.dtype) for d, st in ac._state.items()}, ac._cache_enabled,
            ac._nesting, _dispatch._autocast)


def _set_autocast(saved):
    from ember.amp import autocast_mode as ac
    from ember.ops import _dispatch

    devices, ac._cache_enabled, ac._nesting, _dispatch._autocast = saved
    for device, (enabled, dtype) in devices.items():
        ac._state[device].enabled, ac._state[device].dtype = enabled, dtype


def _backend_flags():
    from ember.backends import cuda, cudnn, mkldnn

    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    return ({n: getattr(cudnn, n) for n in names}, dict(vars(cuda.matmul)), dict(cuda._sdp),
            {n: getattr(mkldnn, n) for n in ("enabled", "deterministic", "allow_tf32")})


def _set_backend_flags(saved):
    from ember.backends import cuda, cudnn, mkldnn

    flags, matmul, sdp, onednn = saved
    vars(cudnn).update(flags)
    vars(cuda.matmul).update(matmul)
    cuda._sdp.update(sdp)
    vars(mkldnn).update(onednn)


EMBER_STATE = [
    ("ember default dtype", ember.get_default_dtype, ember.set_default_dtype),
    ("ember default device", ember.get_default_device, ember.set_default_device),
    ("ember grad mode", _grad_state, _set_grad_state),
    ("ember anomaly mode", _anomaly, _set_anomaly),
    ("ember threads", _parallel.get_num_threads, _parallel.set_num_threads),
    ("ember print options", _print_options, _set_print_options),
    ("ember autocast", _autocast, _set_autocast),
    ("ember backends flags", _backend_flags, _set_backend_flags),
    ("environment variables", _environ, _set_environ),
    ("warnings filters", lambda: _filters(), _set_filters),
    ("numpy error handling", np.geterr, lambda saved: np.seterr(**saved)),
    ("current directory", os.getcwd, os.chdir),
    ("sys.path", lambda: list(sys.path), lambda p: sys.path.__setitem__(slice(None), p)),
    ("import hooks", lambda: list(sys.meta_path),
     lambda p: sys.meta_path.__setitem__(slice(None), p)),
]


def _torch_state(torch):
    return [
        ("torch default dtype", torch.get_default_dtype, torch.set_default_dtype),
        ("torch default device", lambda: _torch_device(torch),
         lambda saved: torch.set_default_device(None if saved[1] == 0 else saved[0])),
        ("torch grad mode", torch.is_grad_enabled, torch.set_grad_enabled),
        ("torch anomaly mode", torch.is_anomaly_enabled, torch.set_anomaly_enabled),
        ("torch threads", torch.get_num_threads, torch.set_num_threads),
        ("torch deterministic algorithms", torch.are_deterministic_algorithms_enabled,
         torch.use_deterministic_algorithms),
        ("torch print options", lambda: dict(vars(torch._tensor_str.PRINT_OPTS)),
         lambda saved: vars(torch._tensor_str.PRINT_OPTS).update(saved)),
    ]


def _torch_device(torch):
    """torch's default device and its count of torch-function modes: `set_default_device` pushes
    a mode even for "cpu", under which some functions behave differently (l1_loss drops its
    weight), so a test that leaves one behind changes torch even when the device reads "cpu"."""
    return (torch.get_default_device(), torch._C._len_torch_function_stack())


def entries():
    """Every guarded entry, torch's included where torch is installed."""
    torch = torch_module()
    return EMBER_STATE if torch is None else EMBER_STATE + _torch_state(torch)


def torch_module():
    """torch, or None where it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def snapshot():
    return {name: (read(), write) for name, read, write in entries()}


def changed_since(before):
    """Names of the entries that differ from `before`, each restored as it is found."""
    changed = []
    for name, read, write in entries():
        old, _ = before[name]
        new = read()
        if new != old:
            changed.append(f"{name} ({_difference(old, new)})")
            write(old)
    return changed


def _difference(old, new):
    """What changed, briefly: the keys of a dict, else the two values."""
    if isinstance(old, dict):
        keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        return ", ".join(map(str, keys))
    text = f"{old!r} -> {new!r}"
    return text if len(text) < 300 else text[:300] + "..."

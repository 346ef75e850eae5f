"""Shared fixtures: a `device` fixture (cpu, plus cuda when CuPy sees a GPU), seeding (ember's
generator and the test modules' own NumPy generators), the process-wide state guard
(tests/_state.py), and `one_torch_thread` for modules that compare with torch's thread-hungry
kernels."""
import zlib

import numpy as np
import pytest

import ember

from . import _state

DEVICES = ["cpu"] + (["cuda"] if ember._backend.cuda_available() else [])


@pytest.fixture(autouse=True)
def _restores_process_state():
    """Every test leaves the process as it found it (tests/_state.py lists what is compared):
    a test that does not fails here, naming what it changed, and the state is put back. This
    fixture comes first, so it compares after every other fixture (monkeypatch included) has
    undone its own changes."""
    before = _state.snapshot()
    yield
    changed = _state.changed_since(before)
    if changed:
        pytest.fail(f"the test changed process-wide state and did not restore it: "
                    f"{', '.join(changed)}", pytrace=False)


@pytest.fixture(autouse=True)
def _fresh_module_generators(request):
    """A module-level NumPy generator (`rng = np.random.default_rng(0)`) would hand each test
    data that depends on which tests drew from it before, in the same process: under a random
    order and several processes, different data each run. So during each test, every such
    generator of its module is replaced by one seeded from the test's own name: the same data
    for the same test, whatever ran before it."""
    module = request.module
    seed = zlib.crc32(request.node.nodeid.encode())
    saved = {name: value for name, value in vars(module).items()
             if isinstance(value, np.random.Generator)}
    for name in saved:
        setattr(module, name, np.random.default_rng(seed))
    yield
    for name, value in saved.items():
        setattr(module, name, value)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    """Each test starts both libraries' generators from the same seed, whatever ran before."""
    ember.manual_seed(0)
    torch = _state.torch_module()
    if torch is not None:
        torch.manual_seed(0)
    yield


@pytest.fixture(scope="module")
def one_torch_thread():
    """torch's CPU kernels slow down a lot when threads compete (as under pytest -n); a module
    uses this with `pytestmark = pytest.mark.usefixtures("one_torch_thread")`."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

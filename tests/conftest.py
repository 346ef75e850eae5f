"""Shared fixtures: a `device` fixture (cpu, plus cuda when CuPy sees a GPU), seeding, and
`one_torch_thread` for modules that compare with torch's thread-hungry kernels."""
import pytest

import ember

DEVICES = ["cpu"] + (["cuda"] if ember._backend.cuda_available() else [])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)
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

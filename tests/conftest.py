"""Shared fixtures: a `device` fixture (cpu, plus cuda when CuPy sees a GPU) and seeding."""
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

"""Every op against PyTorch (forward, dtype, shape, gradients), plus float64 gradcheck.

The rows live in tests/specs/. `test_every_op_has_a_spec` fails when an op is registered
(ember.ops.REGISTRY) but no row exercises it.
"""
import numpy as np
import pytest

import ember
from ember.ops import REGISTRY

from .oracle import check, on_test_device, to_ember
from .specs import SPECS

CASES = [pytest.param(spec, i, id=f"{spec.name}-{i}") for spec in SPECS
         for i in range(len(spec.cases))]
GRADCHECKS = [pytest.param(spec, id=spec.name) for spec in SPECS if spec.grad and spec.gradcheck]


@pytest.mark.parametrize("spec,case", CASES)
def test_against_torch(spec, case):
    pytest.importorskip("torch")
    check(spec.fn, spec.inputs(case), grad=spec.grad, rtol=spec.rtol, atol=spec.atol,
          grad_rtol=spec.grad_rtol, grad_atol=spec.grad_atol)


@pytest.mark.parametrize("spec", GRADCHECKS)
def test_gradcheck(spec):
    """Rules agree with finite differences (float64, first case with floating inputs)."""
    for case in range(len(spec.cases)):
        inputs = spec.float64_inputs(case)
        if any(isinstance(x, np.ndarray) and x.dtype in (np.float64, np.complex128) and x.size
               for x in inputs):
            break
    else:
        pytest.skip("no case with floating inputs")
    tensors = [to_ember(x, True) for x in inputs]

    def fn(*args):
        with on_test_device():
            return spec.fn(ember, *args)

    assert ember.autograd.gradcheck(fn, tensors, eps=1e-6, atol=1e-5, rtol=1e-3)


# ops that only do something on a second device; their tests live where that device runs
TESTED_ELSEWHERE = {"to_device": "tests/test_cuda.py (needs a GPU)"}


def test_every_op_has_a_spec():
    covered = {name for spec in SPECS for name in spec.ops} | set(TESTED_ELSEWHERE)
    missing = sorted(set(REGISTRY) - covered)
    assert not missing, f"ops without a test row in tests/specs/: {missing}"

"""Import real torchvision (the oracle for ember.vision) beside the CPU build of torch.

torchvision 0.28's wheel is built against the CUDA torch, so its compiled ops (`_C.so`) do not
load here; its Python parts work, except that importing it registers fake kernels for
`torchvision::nms` and `torchvision::qnms`, which fails when those operators were never
defined. `import_torchvision()` defines the two schemas (as the compiled library would) in a
`torch.library` fragment kept alive for the session, then imports torchvision. Its compiled ops
(nms, roi_align, ...) still do not run: tests of ember.vision.ops compare with the ops'
definitions instead.

    from ._torchvision import import_torchvision
    torchvision = import_torchvision()   # skips the module's tests only where it is missing
"""
import importlib.util
import os

import pytest

_SCHEMAS = ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
            "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_fragment = None  # the torch.library fragment holding the schemas (must outlive the import)


def _define_missing_schemas(torch):
    global _fragment
    missing = [s for s in _SCHEMAS if not _has_op(torch, s.split("(")[0])]
    if missing and _fragment is None:
        _fragment = torch.library.Library("torchvision", "FRAGMENT")
        for schema in missing:
            _fragment.define(schema)


def _has_op(torch, name):
    try:
        getattr(torch.ops.torchvision, name)
    except (AttributeError, RuntimeError):
        return False
    return True


def import_torchvision():
    """torchvision, importable beside the CPU torch; a skip only where it is not installed
    (CI installs it: `make` runs pip install --no-deps torchvision==0.28.0), and a failure if
    CI is set and it is missing, so the comparison tests cannot vanish silently there."""
    torch = pytest.importorskip("torch")
    if importlib.util.find_spec("torchvision") is None:
        if os.environ.get("CI"):
            pytest.fail("torchvision is not installed (make installs torchvision==0.28.0)")
        pytest.skip("torchvision is not installed")
    _define_missing_schemas(torch)
    import torchvision

    return torchvision

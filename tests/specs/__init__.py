"""The differential test table: one `Spec` row per public op (see tests/test_ops.py).

Each family has its own module (pointwise.py, reduce.py, ...) defining `SPECS`; this package
collects them all.
"""
import importlib
import pkgutil

from ._spec import B, I, Spec, T  # noqa: F401

SPECS = []
for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_"):
        SPECS.extend(importlib.import_module(f"{__name__}.{_info.name}").SPECS)

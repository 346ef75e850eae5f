"""Every public callable has a docstring.

Public means: reachable from a public module of ember (no `_` anywhere in its dotted path; the
op layer `ember.ops` is internal and its functions are reached through the namespaces they are
published into), named without a leading `_`, and defined by ember. A class needs a docstring
of its own; its own public methods count too, and a method may inherit its docstring from the
method it overrides (as `inspect.getdoc` does), e.g. a module's `forward` from
`nn.Module.forward`.
"""
import importlib
import inspect
import pkgutil
import types

import pytest

import ember

INTERNAL = ("ember.ops",)


def _public_module_names():
    names = ["ember"]
    for info in pkgutil.walk_packages(ember.__path__, "ember."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or info.name.startswith(INTERNAL):
            continue
        names.append(info.name)
    return names


def _defined_by_ember(value):
    return str(getattr(value, "__module__", "") or "").startswith("ember")


def _has_doc(value):
    if inspect.isclass(value):  # a class's own: its base's says what the base is
        return bool((value.__dict__.get("__doc__") or "").strip())
    return bool((inspect.getdoc(value) or "").strip())


def _undocumented(module):
    """`module`'s public callables (and their classes' public methods) without a docstring."""
    missing = []
    for name in dir(module):
        value = getattr(module, name, None)
        if name.startswith("_") or isinstance(value, types.ModuleType) or not callable(value):
            continue
        if not _defined_by_ember(value):
            continue
        if not _has_doc(value):
            missing.append(name)
        if inspect.isclass(value):
            missing.extend(f"{name}.{m}" for m in _undocumented_methods(value))
    return missing


def _undocumented_methods(cls):
    for name, raw in vars(cls).items():
        function = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
        if name.startswith("_") or not inspect.isfunction(function):
            continue
        if not _has_doc(getattr(cls, name)):
            yield name


@pytest.mark.parametrize("module_name", _public_module_names())
def test_every_public_callable_has_a_docstring(module_name):
    module = importlib.import_module(module_name)
    assert _undocumented(module) == []


def test_the_check_sees_a_missing_docstring():
    module = types.ModuleType("ember.example")

    def documented():
        """Here."""

    def bare():
        pass

    class Thing:
        """A thing."""

        def method(self):
            pass

    for value in (documented, bare, Thing):
        value.__module__ = "ember.example"
        setattr(module, value.__name__, value)
    assert _undocumented(module) == ["Thing.method", "bare"]

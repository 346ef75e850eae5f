"""mkdocs hook: the API pages list their members explicitly.

A page of docs/api/ holds `::: ember.<namespace>`; this hook gives that directive the list of
the namespace's public members (`public_members`), so that a page shows what the namespace
offers -- also the functions published into it from the op layer -- and not what it merely
imports. tests/test_docstrings.py checks the same members for docstrings.
"""
import importlib
import inspect
import re
import types

_DIRECTIVE = re.compile(r"^::: (ember[\w.]*)$", re.MULTILINE)


def public_members(namespace):
    """The names a namespace offers: its `__all__`, or else its public names whose value ember
    defines (functions, classes and other callables; modules and re-exported outside objects
    are left out)."""
    module_or_class = _resolve(namespace)
    names = getattr(module_or_class, "__all__", None)
    if names is None:
        names = [n for n in dir(module_or_class) if not n.startswith("_")]
    return sorted(n for n in names if _offered(getattr(module_or_class, n, None)))


def _offered(value):
    if value is None or isinstance(value, types.ModuleType) or not callable(value):
        return False
    return str(getattr(value, "__module__", "")).startswith("ember")


def _resolve(dotted):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute)
        return obj
    raise ImportError(dotted)


def on_page_markdown(markdown, page, **kwargs):
    """Expand each `::: ember.x` directive with its member list."""
    def expand(match):
        target = match.group(1)
        if inspect.isclass(_resolve(target)):
            return match.group(0)  # a class page shows the class's own members
        members = ", ".join(public_members(target))
        return f"{match.group(0)}\n    options:\n      members: [{members}]"
    return _DIRECTIVE.sub(expand, markdown)

"""`python -m ember.audit script.py [args]`: run a PyTorch script on ember and list every torch
API it touched that ember lacks -- all of them, not just the first.

How:
  * an import hook answers `import torch`, `import torch.nn as nn`, `from torch.utils.data
    import DataLoader` ... with ember's modules, seen through thin proxies that record failed
    attribute lookups. A torch module ember does not have (`torch.masked`) is recorded where it
    was imported and answered with a stub module;
  * ember's classes (Tensor, Module, Optimizer, ...) get a `__getattr__` that records a
    failed lookup made from the user's code (`x.some_missing_method`, `model.missing_hook`);
  * a missing name is answered with a *stub*: attributes of a stub are recorded as deeper
    names (`torch.masked` then `torch.masked.sum`), calling it gives a silent placeholder that
    absorbs further use, so the script goes on as far as it can.
  * a keyword argument an ember function does not take (`torch.flip(x, dims=[0])`) is recorded
    like a missing name, `torch.flip(dims=)`, and the call answered with a placeholder; for a
    method (`x.flip(dims=[0])`) the script stops there, and that is recorded the same way.
At the end a report lists each missing API with its call sites (file:line), grouped by name.
Its headline says what the run proved: when the script stopped early (an import error, an
unsupported argument, any exception) it says so and where -- a script that stopped cannot
vouch for the APIs it never reached. The exit code is 1 if anything was missing (or the script
failed), else the script's own.

Only lookups made from code outside ember are recorded; names starting with "_" fail as usual
(Python's protocols probe those), and ember's own code never sees a stub.

Read next: nothing -- this is the end of the tour of the tools.
"""
import functools
import importlib
import importlib.abc
import importlib.util
import os
import re
import runpy
import sys
import traceback
import types

__all__ = ["main", "Audit"]

_EMBER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_PUBLIC = ("", "nn", "nn.functional", "nn.init", "nn.utils", "optim", "optim.lr_scheduler",
           "utils", "utils.data", "autograd", "linalg", "profiler", "random", "cuda")


class Audit:
    """The record of one run: missing API name -> [call sites]."""

    def __init__(self):
        self.missing = {}
        self.proxies = {}  # ember module name -> proxy
        self.patched = set()
        self.watched = {}  # id(ember function) -> its keyword-watching wrapper

    def record(self, name, site):
        """Note that the missing API `name` was used at `site` ("file:line"), once per site."""
        sites = self.missing.setdefault(name, [])
        if site not in sites:
            sites.append(site)

    def refine(self, parent, child, site):
        """`torch.masked.sum` looked up where `torch.masked` was: keep the precise one."""
        sites = self.missing.get(parent)
        if sites and site in sites:
            sites.remove(site)
            if not sites:
                del self.missing[parent]
        self.record(child, site)

    def report(self, script, error):
        """The text printed at the end: the headline, then each missing API and its sites."""
        count = len(self.missing)
        if error:
            lines = [f"ember audit: {script} stopped early -- {error}",
                     f"ember audit: {count} torch API(s) missing in ember up to there"
                     + (":" if count else " (the rest of the script was not checked).")]
        elif count:
            lines = [f"ember audit: {count} torch API(s) used by {script} are missing in ember:"]
        else:
            lines = [f"ember audit: every torch API used by {script} exists in ember."]
        for name in sorted(self.missing):
            sites = self.missing[name]
            lines.append(f"  {name}  ({len(sites)} call site{'s' if len(sites) > 1 else ''})")
            lines.extend(f"      {site}" for site in sites)
        lines.append(f"The script stopped at {error}" if error else "The script ran to the end.")
        return "\n".join(lines)


_audit = None


# ----------------------------------------------------------------------------------------------
# call sites


def _user_frame(depth=2):
    """The innermost frame outside ember and the import machinery, or None."""
    frame = sys._getframe(depth)
    while frame is not None:
        path = frame.f_code.co_filename
        if not (path.startswith(_EMBER_DIR) or path.startswith("<frozen")):
            return frame
        frame = frame.f_back
    return None


def _site(frame):
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else "?"


def _from_user(depth=2):
    """Is the code doing this lookup the user's (not ember's, not a C caller's)?"""
    path = sys._getframe(depth).f_code.co_filename
    return not path.startswith(_EMBER_DIR)


# ----------------------------------------------------------------------------------------------
# stubs


class _Stub:
    """Stands in for a missing torch API `name`: looking into it records deeper names."""

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        child = f"{self._name}.{attr}"
        _audit.refine(self._name, child, _site(_user_frame()))
        return _Stub(child)

    def __call__(self, *args, **kwargs):
        return _Placeholder()

    def __mro_entries__(self, bases):
        return (object,)  # `class Net(torch.MissingBase)` still defines a class

    def __repr__(self):
        return f"<missing torch API {self._name}>"


class _Placeholder:
    """The result of calling a missing API: absorbs whatever is done with it, records nothing
    (what went wrong is already recorded)."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __len__(self):
        return 0

    def __getitem__(self, key):
        return self

    def __setitem__(self, key, value):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __float__(self):
        return 0.0

    def __int__(self):
        return 0

    __index__ = __int__

    def __format__(self, spec):
        return "<missing>"

    def __repr__(self):
        return "<result of a missing torch API>"


def _absorb(name):
    def method(self, *args):
        return self
    method.__name__ = name
    return method


for _op in ("add", "sub", "mul", "truediv", "floordiv", "matmul", "pow", "mod", "neg", "pos",
            "abs", "radd", "rsub", "rmul", "rtruediv", "rmatmul", "rpow", "lt", "le", "gt", "ge"):
    setattr(_Placeholder, f"__{_op}__", _absorb(f"__{_op}__"))


class _StubModule(types.ModuleType):
    """A torch module ember does not have (`import torch.fft`)."""

    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        child = f"{self.__name__}.{attr}"
        _audit.refine(self.__name__, child, _site(_user_frame()))
        return _Stub(child)


# ----------------------------------------------------------------------------------------------
# torch -> ember


class _ModuleProxy(types.ModuleType):
    """`torch.<path>` seen as ember's module, recording the names ember lacks."""

    def __init__(self, torch_name, module):
        super().__init__(torch_name)
        object.__setattr__(self, "_ember", module)
        if hasattr(module, "__path__"):
            self.__path__ = []
        self.__file__ = getattr(module, "__file__", None)
        self.__doc__ = module.__doc__

    def __getattr__(self, attr):
        module = object.__getattribute__(self, "_ember")
        try:
            value = getattr(module, attr)
        except AttributeError:
            value = _submodule(module.__name__ + "." + attr)
            if value is None:
                if attr.startswith("_"):
                    raise
                name = f"{self.__name__}.{attr}"
                _audit.record(name, _site(_user_frame()))
                return _Stub(name)
        return _wrap(value, self.__name__)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_ember"))


def _submodule(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _torch_name(ember_name):
    return "torch" + ember_name[len("ember"):]


_KEYWORD = re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'")


def _keyword_name(error):
    """`flip(dims=)` for "flip() got an unexpected keyword argument 'dims'", else None."""
    match = _KEYWORD.search(str(error))
    return f"{match.group(1)}({match.group(2)}=)" if match else None


def _watch_keywords(fn, owner):
    """`fn` (an ember function reached through a torch module) wrapped so that a keyword
    argument it does not take is recorded as `torch.<module>.<name>(<keyword>=)` and the call
    answered with a placeholder."""
    watched = _audit.watched.get(id(fn))
    if watched is not None:
        return watched

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            name = _keyword_name(e)
            # only a failure to bind the arguments: the callee never ran (no deeper frame)
            if name is None or e.__traceback__.tb_next is not None or not kwargs:
                raise
            _audit.record(f"{owner}.{name}", _site(_user_frame()))
            return _Placeholder()
    _audit.watched[id(fn)] = call
    return call


def _wrap(value, owner=None):
    """Ember modules come back as proxies; ember classes are made to record misses, ember
    functions to record unsupported keyword arguments."""
    if isinstance(value, types.FunctionType) and owner is not None and \
            value.__module__.split(".")[0] == "ember":
        return _watch_keywords(value, owner)
    if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "ember":
        proxy = _audit.proxies.get(value.__name__)
        if proxy is None:
            proxy = _audit.proxies[value.__name__] = _ModuleProxy(_torch_name(value.__name__),
                                                                  value)
        return proxy
    if isinstance(value, type) and value.__module__.split(".")[0] == "ember":
        _watch_class(value)
    return value


def _watch_class(cls):
    """Record failed attribute lookups on instances of ember classes (from user code): wrap
    each ember class's own `__getattr__` (Module has one), or give the most basic ember class
    in the hierarchy one (Tensor, for Parameter too)."""
    ours = [k for k in cls.__mro__ if k.__module__.split(".")[0] == "ember"]
    for klass in ours:
        if klass not in _audit.patched and "__getattr__" in klass.__dict__:
            _audit.patched.add(klass)
            _patch_getattr(klass, klass.__dict__["__getattr__"])
    if ours and not any("__getattr__" in k.__dict__ for k in cls.__mro__):
        _audit.patched.add(ours[-1])
        _patch_getattr(ours[-1], None)


def _patch_getattr(klass, original):
    def __getattr__(self, attr):
        if original is not None:
            try:
                return original(self, attr)
            except AttributeError:
                if attr.startswith("_") or not _from_user():
                    raise
        elif attr.startswith("_") or not _from_user():
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")
        owner = next(k for k in type(self).__mro__ if k.__module__.split(".")[0] == "ember")
        name = f"{_public_name(owner)}.{attr}"
        _audit.record(name, _site(_user_frame()))
        return _Stub(name)

    klass.__getattr__ = __getattr__


def _public_name(cls):
    """`torch.nn.Linear` for ember.nn.modules.linear.Linear: the shortest public path."""
    for path in _PUBLIC:
        module = sys.modules.get("ember" + ("." + path if path else ""))
        if module is not None and getattr(module, cls.__name__, None) is cls:
            return "torch" + ("." + path if path else "") + "." + cls.__name__
    return _torch_name(cls.__module__) + "." + cls.__name__


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of `torch` and `torch.*` resolve to ember (or a recorded stub)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        ember_name = "ember" + spec.name[len("torch"):]
        try:
            module = importlib.import_module(ember_name)
        except ModuleNotFoundError as e:
            if e.name is None or not ember_name.startswith(e.name):
                raise
            _audit.record(spec.name, _site(_user_frame()))
            return _StubModule(spec.name)
        return _wrap(module)

    def exec_module(self, module):
        pass


# ----------------------------------------------------------------------------------------------
# running a script


def run(script, args=()):
    """Run `script` with torch mapped to ember; returns (Audit, error text or None, exit code)."""
    global _audit
    _audit = Audit()
    import ember

    for path in _PUBLIC:
        module = _submodule("ember" + ("." + path if path else ""))
        for value in vars(module).values() if module is not None else ():
            if isinstance(value, type):
                _wrap(value)
    _wrap(ember.Tensor)
    finder = _TorchFinder()
    saved = (list(sys.argv), list(sys.path), {k: v for k, v in sys.modules.items()
                                              if k == "torch" or k.startswith("torch.")})
    for name in saved[2]:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    error, code = None, 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except Exception as e:  # the script's own failure is part of the report
        where = _failure_site(e)
        keyword = _keyword_name(e) if isinstance(e, TypeError) else None
        if keyword is not None:  # a method's unsupported keyword: listed like a missing name
            _audit.record(f"torch.Tensor.{keyword}" if _is_tensor_method(keyword) else keyword,
                          where)
        error = f"{where}: {type(e).__name__}: {e}"
        code = 1
    finally:
        sys.meta_path.remove(finder)
        sys.argv, sys.path[:] = saved[0], saved[1]
        for name in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(saved[2])
    return _audit, error, code


def _is_tensor_method(keyword_name):
    import ember

    return hasattr(ember.Tensor, keyword_name.split("(")[0])


def _failure_site(error):
    """The innermost frame of the traceback that is not ember's."""
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(_EMBER_DIR)]
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


def main(argv=None):
    """`python -m ember.audit script.py [args...]`: run the script with torch mapped to ember and
    print, to stderr, every torch API it used that ember lacks. Returns the exit status: 1 if
    anything was missing or the script raised, else the script's own."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ember.audit script.py [args...]\n\nRuns a PyTorch script with "
              "torch mapped to ember and lists every torch API it used that ember lacks.")
        return 0 if argv else 2
    audit, error, code = run(argv[0], argv[1:])
    sys.stdout.flush()
    print("\n" + audit.report(argv[0], error), file=sys.stderr)
    return 1 if audit.missing or error else code


if __name__ == "__main__":
    sys.exit(main())

"""`python -m ember.run script.py [args]`: run an unmodified PyTorch program on ember.

    python -m ember.run train.py --epochs 3       # the script sees sys.argv == ["train.py", ...]
    python -m ember.run -m mypackage.train --lr 1  # like `python -m mypackage.train --lr 1`
    ember-run train.py                             # the same, as a console script

An import hook (a `sys.meta_path` finder) answers `import torch` with `ember` itself and every
`torch.<path>` with `ember.<path>` (`torch.nn.functional` is `ember.nn.functional`), and
`torchvision[.<path>]` with `ember.vision[.<path>]`. It only maps names: nothing is patched, so
`sys.modules["torch"] is ember` and `torch.Tensor is ember.Tensor`. A path ember lacks fails
like any missing module, naming both sides:

    ModuleNotFoundError: No module named 'torch.fft' (ember has no 'ember.fft')

The program runs as Python would run it (`runpy`): its own `sys.argv`, `__main__`, and
`sys.path[0]` (the script's folder, or the current folder with -m), and an uncaught error
prints a traceback that starts at the user's code, not at this file.

Child processes started with the "spawn" or "forkserver" method (torch.multiprocessing,
DataLoader workers) re-import the main script in a fresh interpreter; they inherit `sys.path`,
whose first entry then is `ember/_drop_in/`: its `torch` and `torchvision` packages install
this hook again, so the child maps names the same way.

`import ember as torch` needs none of this. Read next: audit.py (the same mapping, recording
what is missing).
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys

__all__ = ["main", "install", "uninstall", "ember_name", "stand_in", "TorchFinder"]

# torch's top-level packages and where ember keeps each
_ROOTS = {"torch": "ember", "torchvision": "ember.vision"}
_DROP_IN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_drop_in")


def ember_name(name):
    """The ember module standing in for torch module `name` ('torch.nn' -> 'ember.nn'), or
    None for a name outside torch and torchvision."""
    root, dot, rest = name.partition(".")
    target = _ROOTS.get(root)
    if target is None:
        return None
    return target + dot + rest


class _Alias(importlib.abc.Loader):
    """Loads `torch.<path>` as the already imported `ember.<path>` module object."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system stamped the torch-named spec on the module: ember keeps its own
        module.__spec__ = self.spec


class TorchFinder(importlib.abc.MetaPathFinder):
    """The `sys.meta_path` finder mapping torch's module names onto ember's."""

    def find_spec(self, fullname, path=None, target=None):
        """A spec whose module is ember's, for `torch`, `torch.*`, `torchvision[.*]`."""
        if ember_name(fullname) is None:
            return None
        module = _ember_module(fullname)
        return importlib.machinery.ModuleSpec(fullname, _Alias(module),
                                              is_package=hasattr(module, "__path__"))


def _ember_module(torch_name):
    """Import and return the ember module standing in for `torch_name`."""
    target = ember_name(torch_name)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        # only the mapped module itself (or a parent) missing is "no such torch module"; a
        # missing dependency inside ember is its own error
        if e.name is None or not (target == e.name or target.startswith(e.name + ".")):
            raise
        raise ModuleNotFoundError(f"No module named '{torch_name}' (ember has no '{target}')",
                                  name=torch_name) from None


def stand_in(torch_name):
    """What `ember/_drop_in/<torch package>/__init__.py` runs in a spawned child: install the
    hook and make `torch_name` the ember module it maps to."""
    install()
    sys.modules[torch_name] = _ember_module(torch_name)


_finder = TorchFinder()


def install():
    """Map `torch` and `torchvision` onto ember for every later import in this process (and in
    spawned children). Modules already imported under those names are forgotten first."""
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    if _DROP_IN not in sys.path:
        sys.path.insert(1, _DROP_IN)  # ahead of site-packages, where a real torch may be
    for name in [n for n in sys.modules if ember_name(n) is not None]:
        if not sys.modules[name].__name__.startswith("ember"):
            del sys.modules[name]


def uninstall():
    """Undo `install()`: torch names are no longer mapped (modules imported stay imported)."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    if _DROP_IN in sys.path:
        sys.path.remove(_DROP_IN)
    for name in [n for n in sys.modules if ember_name(n) is not None]:
        if sys.modules[name].__name__.startswith("ember"):
            del sys.modules[name]


# ----------------------------------------------------------------------------------------------
# running a program

_USAGE = """usage: python -m ember.run script.py [args...]
       python -m ember.run -m package.module [args...]

Runs an unmodified PyTorch program with ember standing in for torch (and torchvision)."""


def main(argv=None):
    """The command line: run the script or module with the hook installed; returns the exit
    status (the program's own, or 1 after an uncaught exception)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv and argv[0] != "-m" else 2
    install()
    try:
        if argv[0] == "-m":
            _run_module(argv[1], argv[2:])
        else:
            _run_script(argv[0], argv[1:])
    except SystemExit as e:
        return e.code
    except BaseException as e:  # noqa: BLE001 -- reported like Python reports it
        _report(e)
        return 130 if isinstance(e, KeyboardInterrupt) else 1
    return 0


def _run_script(path, args):
    sys.argv = [path] + list(args)
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    runpy.run_path(path, run_name="__main__")


def _run_module(name, args):
    sys.argv = [name] + list(args)  # runpy replaces argv[0] with the module's file
    sys.path[0] = os.getcwd()
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def _report(error):
    """Print `error`'s traceback from the user's first frame on, as `python script.py` would
    (through sys.excepthook, so a program's own hook still sees it)."""
    tb = error.__traceback__
    while tb is not None and _is_runner_frame(tb.tb_frame):
        tb = tb.tb_next
    tb = tb or error.__traceback__
    sys.excepthook(type(error), error.with_traceback(tb), tb)


def _is_runner_frame(frame):
    path = frame.f_code.co_filename
    return path == __file__ or path == runpy.__file__ or path.startswith("<frozen")


if __name__ == "__main__":
    sys.exit(main())

"""A helper process: the second core for kernels made of two independent halves.

NumPy runs each elementwise call on one core. Threads share large calls well
(`_parallel.py`), but a recurrent layer's step is 10-25 small calls, each of which takes the
GIL to start: two threads running them side by side measured slower than one
(docs/PERFORMANCE.md). A second process has its own interpreter and GIL. So ember starts
one, the first time a kernel asks for it, and a large LSTM or GRU layer then walks half its
batch here and half there (`ops/nn/rnn.py`):

    side_by_side(fn, xp, mine, theirs, alone)   # fn(xp, *mine) here, fn(numpy, *theirs)
                                                # there; fn(xp, *alone) here without a helper

Arrays cross by reference when they lie in shared memory (`_shared_memory.empty`) and are
pickled otherwise, so a kernel puts its large arrays in shared memory. Until the helper is
up (its imports take ~0.2 s), or while another thread uses it, `side_by_side` runs the
whole here.

The helper is a plain `python -c ...` subprocess running `serve`, holding one end of a socket
pair (multiprocessing's "spawn" would re-run the user's script in it). It exits when this
process closes its end, at exit or in a crash. Its BLAS runs on one thread, and so does
ours while the two work side by side. It imports NumPy and the modules its kernels live in,
not the rest of ember (`_bare_imports`): with all of ember imported it held ~26 MiB more
private memory (17 MiB in all now, after an LSTM's steps), which counts in the peak memory
of a program that uses it. `ember.set_num_threads(1)` stops the splitting, and
EMBER_HELPER_PROCESS=0 in the environment keeps ember from starting a helper at all.
"""
import atexit
import importlib.machinery
import mmap
import os
import pickle
import select
import socket
import subprocess
import sys
import threading
import traceback

import numpy as np

from . import _shared_memory as shared
from ._blas import thread_control
from ._parallel import get_num_threads, one_blas_thread

__all__ = ["side_by_side", "usable"]

# `ember` as a bare package (sys.argv[2] is its directory), whose __init__, which imports all
# of ember, does not run in the helper; `_bare_imports` does the same for the subpackages
_BARE_EMBER = ("import sys, types; ember = types.ModuleType('ember'); "
               "ember.__path__ = [sys.argv[2]]; sys.modules['ember'] = ember")
_ENTRY = _BARE_EMBER + "; import ember._helper as h; h.serve(int(sys.argv[1]))"
_MESSAGE_BYTES = 1 << 20
_MAX_FDS = 250


class _SharedRef:
    """An ndarray in shared memory, as it crosses to the other process."""
    __slots__ = ("segment", "offset", "shape", "strides", "dtype")

    def __init__(self, segment, offset, shape, strides, dtype):
        self.segment, self.offset, self.shape, self.strides, self.dtype = \
            segment, offset, shape, strides, dtype

    def __reduce__(self):
        return _SharedRef, (self.segment, self.offset, self.shape, self.strides, self.dtype)


def _encode(value):
    if type(value) is np.ndarray:
        place = shared.where(value)
        if place is not None:
            return _SharedRef(*place, value.shape, value.strides, value.dtype.str)
    return value


def _send(sock, message, fds=()):
    socket.send_fds(sock, [pickle.dumps(message, pickle.HIGHEST_PROTOCOL)], list(fds))


def _receive(sock):
    data, fds, _, _ = socket.recv_fds(sock, _MESSAGE_BYTES, _MAX_FDS)
    if not data:
        raise EOFError
    return pickle.loads(data), fds


class _Helper:
    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
        env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        try:
            # its own session: a Ctrl-C in the terminal is for this process, which decides
            self.process = subprocess.Popen(
                [sys.executable, "-c", _ENTRY, str(theirs.fileno()),
                 os.path.dirname(os.path.abspath(__file__))],
                pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
                start_new_session=True)
        finally:
            theirs.close()
        self.socket = ours
        shared.tell_all()
        self.up = False
        self.lock = threading.Lock()  # one caller at a time

    def is_up(self):
        if not self.up and select.select([self.socket], [], [], 0)[0]:
            self.up = _receive(self.socket)[0] == "up"  # EOFError: it failed to start
        return self.up

    def submit(self, fn, args):
        # the call is pickled apart (and first: a call that cannot be sent must not swallow
        # the news), so that the helper learns the news even if the call fails there
        call = pickle.dumps((fn, [_encode(a) for a in args]), pickle.HIGHEST_PROTOCOL)
        if len(call) > _MESSAGE_BYTES // 2:  # large arrays must be in shared memory
            raise ValueError(f"{len(call)} bytes of arguments for ember's helper process")
        news = shared.take_news()
        fds = taken = [item[3] for item in news if item[0] == "map"]
        try:
            while len(fds) > _MAX_FDS:  # at most _MAX_FDS descriptors a message
                cut = [k for k, item in enumerate(news) if item[0] == "map"][_MAX_FDS]
                _send(self.socket, ([item[:3] for item in news[:cut]], None), fds[:_MAX_FDS])
                news, fds = news[cut:], fds[_MAX_FDS:]
            _send(self.socket, ([item[:3] for item in news], call), fds)
        finally:
            for fd in taken:
                os.close(fd)

    def wait(self):
        try:
            (status, detail), _ = _receive(self.socket)
        except (EOFError, OSError):
            code = self.process.poll()
            _retire()
            raise RuntimeError(f"ember's helper process (pid {self.process.pid}) stopped while "
                               f"running a kernel (exit code {code}); ember runs all work in "
                               "this process from now on") from None
        except BaseException:  # interrupted (Ctrl-C): its reply would answer the next call,
            # and it may still be writing to arrays about to be freed: stop it here and now
            self.process.kill()
            self.process.wait()
            _retire()
            raise
        if status != "done":
            raise RuntimeError(f"in ember's helper process:\n{detail}")

    def close(self):
        self.socket.close()  # the helper sees the end of its input and exits
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()


_helper = None
# set when a helper failed (everything runs in this process from then on), or when asked
_retired = os.environ.get("EMBER_HELPER_PROCESS", "1") == "0"


# an embedding application's sys.executable is not a Python interpreter: never start that
_PYTHON = os.path.basename(sys.executable or "").startswith("python")


def usable():
    """Whether kernels may share their work with a helper process at all."""
    return not _retired and _PYTHON and shared.available and thread_control is not None \
        and get_num_threads() >= 2


def _idle_helper():
    """The helper if it is up and free, else None (starting it the first time)."""
    global _helper
    try:
        if _helper is None:
            _helper = _Helper()
        if not _helper.is_up():
            return None
    except (OSError, EOFError):  # it cannot start here
        _retire()
        return None
    return _helper if _helper.lock.acquire(blocking=False) else None


def _retire():
    global _helper, _retired
    if _helper is not None:
        _helper.socket.close()
    _helper, _retired = None, True


def side_by_side(fn, xp, mine, theirs, alone):
    """fn(xp, *mine) in this process and fn(numpy, *theirs) in the helper, at once; or
    fn(xp, *alone) here when the helper is not at hand."""
    helper = _idle_helper() if usable() else None
    if helper is None:
        fn(xp, *alone)
        return
    try:
        try:
            helper.submit(fn, theirs)
        except OSError:  # it is gone; nothing has started yet
            _retire()
            fn(xp, *alone)
            return
        try:
            with one_blas_thread():
                fn(xp, *mine)
        finally:  # the helper may still be writing to the shared arrays: wait in any case
            helper.wait()
    finally:
        helper.lock.release()


@atexit.register
def _stop():
    if _helper is not None:
        _helper.close()


def _after_fork_in_child():
    """A forked child must not talk to its parent's helper; it starts its own if needed."""
    global _helper
    if _helper is not None:
        _helper.socket.close()  # the child's copy only
    _helper = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ----------------------------------------------------------------------------------------------
# the helper's side


class _BarePackages:
    """An import finder: ember's subpackages (`ember.ops`, ...) as bare packages, whose
    __init__ does not run."""

    def __init__(self, root):
        self.root = root  # the directory of the ember package

    def find_spec(self, name, path=None, target=None):
        if not name.startswith("ember."):
            return None
        directory = os.path.join(self.root, *name.split(".")[1:])
        if not os.path.isfile(os.path.join(directory, "__init__.py")):
            return None  # a module, or no package of ember's: found as usual
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [directory]  # no loader: a namespace package
        return spec


def _bare_imports():
    """In the helper (where `ember` is bare already, see _ENTRY): importing a kernel's module
    (`ember.ops.nn._rnn_steps`, named by a pickled function) runs that module alone, not the
    __init__ of each package above it. Such a module imports NumPy and the standard library
    only."""
    sys.meta_path.insert(0, _BarePackages(os.path.dirname(os.path.abspath(__file__))))
    from . import _allocator  # noqa: F401  (malloc keeps freed memory here too)


def serve(fd):
    """The helper's loop: run each kernel call sent over the socket `fd` until it closes."""
    _bare_imports()
    sock = socket.socket(fileno=fd)
    maps = {}  # segment id -> mmap of it
    try:
        _send(sock, "up")
    except OSError:  # the caller is already gone
        return
    while True:
        try:
            (news, call), fds = _receive(sock)
        except (EOFError, OSError):  # the caller closed its end (or is gone)
            return
        _follow(news, iter(fds), maps)
        if call is None:  # news only, no reply
            continue
        try:
            fn, args = pickle.loads(call)
            fn(np, *[_decode(a, maps) for a in args])
            reply = ("done", None)
        except Exception:  # reported to the caller, who raises it
            reply = ("error", traceback.format_exc())
        try:
            _send(sock, reply)
        except OSError:  # the caller is gone
            return


def _follow(news, fds, maps):
    """Map the new segments (their fds come in order) and drop the unmapped ones."""
    for item in news:
        if item[0] == "map":
            fd = next(fds)
            maps[item[1]] = mmap.mmap(fd, item[2])
            os.close(fd)
        else:
            maps.pop(item[1], None)


def _decode(value, maps):
    if type(value) is _SharedRef:
        return np.ndarray(value.shape, np.dtype(value.dtype), maps[value.segment],
                          value.offset, value.strides)
    return value


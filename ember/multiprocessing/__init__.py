"""ember.multiprocessing (torch.multiprocessing): Python's multiprocessing, with tensors that
cross process boundaries by sharing memory instead of being copied.

Everything of the standard module is here (`Process`, `Queue`, `SimpleQueue`, `Pool`,
`get_context`, `set_start_method`, `Manager`, ...), plus torch's `spawn` / `start_processes`
(spawn.py) and the sharing-strategy calls. Importing ember registers reducers on
multiprocessing's ForkingPickler (reductions.py), so a CPU tensor put on any queue, or passed
to a spawned process, arrives as a tensor on the *same* memory: its array is first moved into
a shared-memory segment in place (`Tensor.share_memory_()`), then the segment's file
descriptor travels (torch's "file_descriptor" strategy). That is what Hogwild-style training
needs: `model.share_memory()`, then several processes update the one set of weights.

With the "fork" start method children inherit shared segments directly; with "spawn" and
"forkserver" they receive them through the pickler. Under `python -m ember.run`, spawned
children map `import torch` onto ember too (see ../run.py).

Read next: reductions.py, spawn.py.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403 -- torch.multiprocessing re-exports them all

from .reductions import init_reductions
from .spawn import (
    ProcessContext,
    ProcessExitedException,
    ProcessRaisedException,
    SpawnContext,
    spawn,
    start_processes,
)

__all__ = list(multiprocessing.__all__) + [
    "spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessRaisedException",
    "ProcessExitedException", "init_reductions", "get_sharing_strategy",
    "set_sharing_strategy", "get_all_sharing_strategies"]

_strategy = "file_descriptor"


def get_all_sharing_strategies():
    """The strategies this platform offers: {'file_descriptor'} (memfd segments)."""
    return {"file_descriptor"}


def get_sharing_strategy():
    """The strategy used to share tensors: always 'file_descriptor'."""
    return _strategy


def set_sharing_strategy(new_strategy):
    """Choose how tensors are shared; only 'file_descriptor' exists in ember (torch's
    'file_system' names files in /dev/shm, which ember's memfd segments do not need)."""
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"unknown sharing strategy {new_strategy!r}; ember supports "
                         "'file_descriptor'")


init_reductions()

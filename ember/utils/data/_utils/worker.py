"""What runs inside a DataLoader worker process (torch.utils.data._utils.worker).

A worker is started with its own copy of the dataset (inherited through fork, or unpickled
under spawn), seeds its random generators, calls `worker_init_fn(worker_id)` and then
serves tasks until told to stop:

    index queue (one per worker)                 result queue (one, shared)
      (task_idx, index)         --> fetch -->      (task_idx, pickled batch or _WorkerError)
      _ResumeIteration()        --> new epoch -->  (_ResumeIteration, None)
      None                      --> exit

Results travel by pickling (see `_dumps`); ember tensors pickle through
serialization.reduce_tensor. Nothing is put in shared memory.

Seeds, as in torch: the main process draws one `base_seed` per iterator; worker `i` seeds
Python's `random` and ember's global generator with `base_seed + i`, and NumPy's global
generator from NumPy's own SeedSequence([i, base_seed]) (equal to what torch derives), so
random augmentation differs between workers and is reproducible from `ember.manual_seed`.

A worker never lingers: it leaves its loop when its main process dies (its parent pid
changes), and the main process joins or terminates every worker it started.

Read next: ../dataloader.py.
"""
import dataclasses
import io
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

import ember

from ...._tensor import Tensor
from ....serialization import reduce_tensor
from .fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]

# How often a waiting worker checks that its main process is still alive, and how often the
# main process checks that its workers are.
MP_STATUS_CHECK_INTERVAL = 1.0


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` returns inside a worker: its `id` (0 .. num_workers-1),
    `num_workers`, its `seed` and `dataset`, this process's copy of the dataset.

    `rng` and `worker_method` are torch's fields for thread workers (a thread's own
    generators); ember's workers are processes, so they stay None and "multiprocessing"."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """The current worker's WorkerInfo, or None in the main process. An IterableDataset's
    `__iter__` uses it to give each worker a different shard of the data."""
    return _worker_info


# ----------------------------------------------------------------------------------------------
# messages between the processes


class _ResumeIteration:
    """Sent to persistent workers at the start of each new epoch; echoed back as the ack."""


@dataclasses.dataclass
class _IterableDatasetStopIteration:
    """A worker's iterator over an IterableDataset is exhausted for this epoch."""
    worker_id: int


class _KeyErrorMessage(str):
    """KeyError's str() shows repr() of its argument; this keeps a multi-line message
    readable (the traceback text is not shown as one long quoted line)."""

    def __repr__(self):
        return str(self)


class _WorkerError:
    """An exception raised in a worker, carried to the main process as its type plus the
    formatted traceback text; `reraise()` raises the same type there, its message naming
    the worker and ending with the worker's traceback."""

    def __init__(self, worker_id):
        exc_type = sys.exc_info()[0]
        self.name = exc_type.__name__
        self.where = f"in DataLoader worker process {worker_id}"
        self.text = traceback.format_exc()
        # a class defined inside a function cannot be pickled: then RuntimeError stands in
        self.exc_type = exc_type if _picklable(exc_type) else RuntimeError

    def reraise(self):
        message = f"Caught {self.name} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:
            message = _KeyErrorMessage(message)
        try:
            error = self.exc_type(message)
        except Exception:
            # its constructor takes other arguments: the message matters more than the type
            raise RuntimeError(message) from None
        raise error


def _picklable(obj):
    try:
        pickle.dumps(obj)
    except Exception:
        return False
    return True


# ----------------------------------------------------------------------------------------------
# pickling results


class _ResultPickler(pickle.Pickler):
    """Pickles a batch for the trip to the main process. A tensor pickles the whole memory
    block it views, so a small view of a big tensor (a sample of a TensorDataset when
    batch_size=None) is copied to its own memory first: the pipe carries the view's bytes,
    not the dataset's."""

    def reducer_override(self, obj):
        if type(obj) is Tensor and _views_more_than_itself(obj):
            compact = obj.detach().clone()
            compact.requires_grad_(obj.requires_grad)
            return reduce_tensor(compact)
        return NotImplemented


def _views_more_than_itself(t):
    return t.untyped_storage().nbytes() > t.numel() * t.element_size()


def _dumps(data, worker_id):
    """`data` as bytes; if it cannot be pickled, the pickling error travels instead (a
    result the queue's feeder thread fails to pickle would be lost, and the main process
    would wait for it forever)."""
    buffer = io.BytesIO()
    try:
        _ResultPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(data)
    except Exception:
        return pickle.dumps(_WorkerError(worker_id))
    return buffer.getvalue()


# ----------------------------------------------------------------------------------------------
# the loop


def _seed(base_seed, worker_id):
    """Seed Python's, ember's and NumPy's global generators for this worker (see the module
    doc); returns the worker's seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def _worker_loop(iterable, dataset, index_queue, result_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of worker process `worker_id` (see the module doc for the protocol)."""
    global _worker_info
    try:
        seed = _seed(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        # an error in worker_init_fn (or in iter(dataset)) is the answer to the first task
        failure = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            failure = _WorkerError(worker_id)
        exhausted = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if task is None:
                break
            if isinstance(task, _ResumeIteration):
                exhausted = False
                fetcher = create_fetcher(iterable, dataset, auto_collation, collate_fn,
                                         drop_last)
                result_queue.put((task, None))
                continue
            if done_event.is_set() or exhausted:
                continue  # shutting down, or nothing left this epoch: the task is dropped
            task_idx, index = task
            if failure is not None:
                data, failure = failure, None
            else:
                data = _fetch(fetcher, index, iterable, worker_id)
                exhausted = isinstance(data, _IterableDatasetStopIteration)
            result_queue.put((task_idx, _dumps(data, worker_id)))
            del data, task, index
    except KeyboardInterrupt:
        pass  # the main process got it too and will shut us down
    if done_event.is_set():
        # nobody reads our last results: do not block at exit flushing them into the pipe
        result_queue.cancel_join_thread()
        result_queue.close()


def _fetch(fetcher, index, iterable, worker_id):
    """One batch, the end of an iterable dataset, or the error the fetch raised."""
    try:
        return fetcher.fetch(index)
    except StopIteration:
        if iterable:
            return _IterableDatasetStopIteration(worker_id)
        return _WorkerError(worker_id)
    except Exception:
        return _WorkerError(worker_id)

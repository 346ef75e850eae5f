"""DataLoader (torch.utils.data.dataloader): batches from a dataset, in this process or in
worker processes.

A loader combines a dataset with a sampler. For a map-style dataset the sampler yields
indices and a BatchSampler groups them (`batch_size=None` turns batching off: each index
gives one sample, passed through `default_convert`); for an IterableDataset a dummy,
endless sampler only counts, and the dataset's own iterator supplies the samples.

    DataLoader.__iter__ -> an iterator:
      _SingleProcessDataLoaderIter   num_workers == 0: fetch + collate right here
      _MultiProcessingDataLoaderIter num_workers > 0: worker processes fetch + collate

The multi-process iterator sends (task_idx, indices) round-robin to per-worker index queues,
keeping `prefetch_factor * num_workers` tasks in flight, and reads results from one shared
result queue. Results that arrive early wait in `_arrived` until their turn, so batches come
out in sampler order (unless `in_order=False`). Both iterators draw the same `base_seed` and
consume the sampler identically, so with the same seeds they give the same batches.

Shutdown (end of epoch, error, deletion, interpreter exit): set `done`, send None to every
index queue, join each worker briefly, terminate any that did not exit. A worker's exception
is re-raised here as the same type, its message naming the worker and carrying the worker's
traceback; the iterator is finished afterwards (torch keeps its workers running).

Differences from torch: batches travel by pickling, not shared memory; `pin_memory` is
accepted but does nothing (ember's host arrays need no pinning to be copied to a device).

Read next: ember/nn/ (the modules its batches feed).
"""
import atexit
import math
import multiprocessing
import os
import pickle
import queue
import warnings
import weakref
from typing import Generic, TypeVar

import ember

from . import _utils
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import create_fetcher
from ._utils.worker import (
    MP_STATUS_CHECK_INTERVAL,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _WorkerError,
    get_worker_info,
)
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _draw_seed

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_T_co = TypeVar("_T_co", covariant=True)


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        return create_fetcher(kind == _DatasetKind.Iterable, dataset, auto_collation,
                              collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: endless Nones (the dataset decides the samples)."""

    def __iter__(self):
        while True:
            yield None


class DataLoader(Generic[_T_co]):
    """Iterate over `dataset` in batches. See torch.utils.data.DataLoader for the meaning of
    every argument; this module's doc says how ember implements them."""

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None,
                 *, prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        prefetch_factor = _check_worker_options(num_workers, timeout, prefetch_factor,
                                                persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_options(shuffle, sampler, batch_sampler)
            sampler = _InfiniteConstantSampler()
        else:
            self._dataset_kind = _DatasetKind.Map
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    # -- attributes ------------------------------------------------------------------------

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got num_workers=0")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, name, value):
        if self._initialized and name in ("batch_size", "batch_sampler", "sampler",
                                          "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        """What the iterators draw from: index lists when batching, else single indices."""
        return self.batch_sampler if self._auto_collation else self.sampler

    # -- iteration -------------------------------------------------------------------------

    def __iter__(self):
        if not (self.persistent_workers and self.num_workers > 0):
            return self._get_iterator()
        # persistent workers: one iterator (and one set of processes) for every epoch
        if self._iterator is None or self._iterator._shutdown:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Map:
            return len(self._index_sampler)
        # an IterableDataset's own __len__ (if any) is trusted; the iterator warns if more
        # samples than that come out (see _BaseDataLoaderIter.__next__)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is None:
            return length
        if self.drop_last:
            return length // self.batch_size
        return math.ceil(length / self.batch_size)

    def check_worker_number_rationality(self):
        """Warn when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        cpus = cpus or os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. Our suggested max number of worker in current system is "
                          f"{cpus}, which is smaller than what this DataLoader is going to "
                          "create. Please be aware that excessive worker creation might get "
                          "DataLoader running slow or even freeze, lower the worker number to "
                          "avoid potential slowness/freeze if necessary.", stacklevel=2)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    """torch's checks of the process-related arguments; returns the prefetch factor."""
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle, sampler, batch_sampler):
    """An IterableDataset orders its own samples: no shuffle, sampler or batch_sampler."""
    if shuffle not in (False, None):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                         f"option, but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                         f"option, but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                         f"batch_sampler option, but got batch_sampler={batch_sampler}")


# ----------------------------------------------------------------------------------------------
# iterators


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        if loader.pin_memory and not ember._backend.cuda_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        # drawn whether or not there are workers, so the generator (and with it a shuffling
        # sampler) advances identically for any num_workers
        self._base_seed = _draw_seed(loader.generator)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        promised = self._IterableDataset_len_called
        if (self._dataset_kind == _DatasetKind.Iterable and promised is not None
                and self._num_yielded > promised):
            message = (f"Length of IterableDataset {self._dataset} was reported to be "
                       f"{promised}(when accessing len(dataloader)), but {self._num_yielded} "
                       "samples have been fetched. ")
            if self._num_workers > 0:
                message += ("For multiprocessing data-loading, this could be caused by not "
                            "properly configuring the IterableDataset replica at each worker.")
            warnings.warn(message, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            # as torch: a timeout only makes sense when waiting for workers
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0 "
                                 "(timeout needs num_workers > 0)")
        self._fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset,
                                                    self._auto_collation, self._collate_fn,
                                                    self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._fetcher.fetch(index)  # may raise StopIteration


# Iterators with live workers, shut down by an exit hook. atexit runs hooks last-registered
# first, so this runs before multiprocessing's own hook terminates daemonic children.
_live_iterators = weakref.WeakSet()
_python_exiting = False


@atexit.register
def _shutdown_live_iterators():
    global _python_exiting
    for it in list(_live_iterators):
        it._shutdown_workers()
    _python_exiting = True


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    # defaults that let __del__ run even when __init__ failed early
    _owner_pid = None
    _shutdown = False

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._worker_init_fn = loader.worker_init_fn
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._results = context.Queue()
        self._done = context.Event()
        self._index_queues = []
        self._workers = []
        _live_iterators.add(self)
        try:
            for worker_id in range(self._num_workers):
                self._start_worker(context, worker_id)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _start_worker(self, context, worker_id):
        index_queue = context.Queue()
        # never block this process's exit on indices a dead worker will not read
        index_queue.cancel_join_thread()
        worker = context.Process(
            target=_utils.worker._worker_loop, daemon=True,
            args=(self._dataset_kind == _DatasetKind.Iterable, self._dataset, index_queue,
                  self._results, self._done, self._auto_collation, self._collate_fn,
                  self._drop_last, self._base_seed, self._worker_init_fn, worker_id,
                  self._num_workers))
        worker.start()
        # listed only once started: only started processes can be joined
        self._index_queues.append(index_queue)
        self._workers.append(worker)

    def _reset(self, loader, first_iter=False):
        """Start an epoch: fresh bookkeeping, workers told to restart (persistent workers
        after the first epoch), then the first `prefetch_factor * num_workers` tasks sent."""
        super()._reset(loader, first_iter)
        self._send_idx = 0          # the next task number to send
        self._rcvd_idx = 0          # the next task number to hand out (in order)
        self._task_worker = {}      # task number -> worker, until handed out or skipped
        self._arrived = {}          # task number -> result that came before its turn
        self._active = [True] * self._num_workers   # False: its iterable ran dry this epoch
        self._in_flight = [0] * self._num_workers   # tasks sent and not yet handed out
        self._next_worker = 0
        if not first_iter:
            for index_queue in self._index_queues:
                index_queue.put(_ResumeIteration())
            # results of an abandoned epoch may come first: each worker's ack follows them
            acks = 0
            while acks < self._num_workers:
                task_idx, _ = self._get_result()
                acks += isinstance(task_idx, _ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        """Send the sampler's next index to the next worker that can take it."""
        worker_id = self._pick_worker()
        if worker_id is None:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_worker[self._send_idx] = worker_id
        self._in_flight[worker_id] += 1
        self._send_idx += 1

    def _pick_worker(self):
        """Round-robin over active workers; with in_order=False, skip workers already
        holding their share of the tasks in flight (so a slow worker does not hoard them)."""
        capacity = self._prefetch_factor * self._num_workers // max(sum(self._active), 1)
        for _ in range(self._num_workers):
            worker_id = self._next_worker
            self._next_worker = (worker_id + 1) % self._num_workers
            if self._active[worker_id] and (self._in_order
                                            or self._in_flight[worker_id] < capacity):
                return worker_id
        return None

    def _next_data(self):
        while True:
            if self._shutdown or not self._skip_to_next_task():
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if self._rcvd_idx in self._arrived:
                return self._hand_out(self._rcvd_idx, self._arrived.pop(self._rcvd_idx))
            task_idx, data = self._get_result()
            if isinstance(data, _IterableDatasetStopIteration):
                self._worker_ran_dry(data.worker_id)
                continue
            if task_idx == self._rcvd_idx or not self._in_order:
                return self._hand_out(task_idx, data)
            self._arrived[task_idx] = data

    def _skip_to_next_task(self):
        """Advance `_rcvd_idx` past tasks that will never be answered (sent to a worker whose
        iterable ran dry) or were already handed out (in_order=False). False: none left."""
        while self._rcvd_idx < self._send_idx:
            worker_id = self._task_worker.get(self._rcvd_idx)
            if worker_id is not None and (self._active[worker_id]
                                          or self._rcvd_idx in self._arrived):
                return True
            self._task_worker.pop(self._rcvd_idx, None)
            self._rcvd_idx += 1
        return False

    def _worker_ran_dry(self, worker_id):
        """Worker `worker_id` exhausted its copy of the IterableDataset for this epoch."""
        self._active[worker_id] = False
        if not self._persistent_workers:
            self._index_queues[worker_id].put(None)  # it may exit now
        self._try_put_index()

    def _hand_out(self, task_idx, data):
        worker_id = self._task_worker.pop(task_idx)
        self._in_flight[worker_id] -= 1
        if task_idx == self._rcvd_idx:
            self._rcvd_idx += 1
        if isinstance(data, _WorkerError):
            self._shutdown_workers()
            data.reraise()
        self._try_put_index()
        return data

    def _get_result(self):
        """The next (task_idx, data) from the result queue, waiting at most `timeout`
        seconds when one is set, and failing if a worker died."""
        if self._timeout > 0:
            item = self._try_get_result(self._timeout)
            if item is None:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return item
        while True:
            item = self._try_get_result(MP_STATUS_CHECK_INTERVAL)
            if item is not None:
                return item

    def _try_get_result(self, timeout):
        try:
            task_idx, payload = self._results.get(timeout=timeout)
        except queue.Empty:
            self._check_workers_alive()
            return None
        data = pickle.loads(payload) if isinstance(payload, bytes) else payload
        return task_idx, data

    def _check_workers_alive(self):
        dead = [w for w, active in zip(self._workers, self._active)
                if active and not w.is_alive()]
        if dead:
            pids = ", ".join(str(w.pid) for w in dead)
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")

    def _shutdown_workers(self):
        """Stop every worker: ask politely (done event + None), join briefly, then
        terminate stragglers. Safe to call twice, from __del__, and at interpreter exit."""
        if self._owner_pid != os.getpid() or self._shutdown:
            return  # done already, or a forked copy of this object in some other process
        self._shutdown = True
        _live_iterators.discard(self)
        try:
            self._done.set()
            for index_queue in self._index_queues:
                index_queue.put(None)
            for worker in self._workers:
                worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in [*self._index_queues, self._results]:
                q.cancel_join_thread()
                q.close()
        finally:
            for worker in self._workers:
                if worker.is_alive():
                    worker.terminate()
                    worker.join()

    def __del__(self):
        if not _python_exiting:
            self._shutdown_workers()

"""`Work` (what a collective with `async_op=True` returns) and the worker thread behind MPI.

    work = dist.all_reduce(t, async_op=True)   # queued; the caller goes on
    ...                                        # (backward keeps computing meanwhile)
    work.wait()                                # now t holds the sum

One thread per process makes every MPI call, in the order the program issued them, as
torch's own MPI backend does (ProcessGroupMPI's worker). So MPI never sees two threads at
once, every rank's collectives reach MPI in program order, and a blocking MPI call (which
releases the GIL) runs while the caller computes: that is how DDP's bucket all-reduces
overlap the rest of backward. The caller waits on an Event with the group's timeout, so a
rank whose partners never arrive gets a DistBackendError instead of hanging.

A send or a receive is only *posted* (Isend/Irecv) by its job, and completed by a second job
when the program waits for it: a blocking send would hold the queue, and two ranks that each
send before they receive would deadlock.

Read next: `_mpi.py`.
"""
import datetime
import queue
import threading

from ._types import DistBackendError

__all__ = ["Work", "Worker"]


def seconds(timeout):
    """A timeout given as a timedelta or a number of seconds, in seconds (None stays None)."""
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    return None if timeout is None else float(timeout)


class Work:
    """torch.distributed.Work: an operation queued on the worker thread. `wait()` blocks
    until it has run (raising what it raised, or a DistBackendError after the timeout);
    `is_completed()` asks without blocking."""

    def __init__(self, job, what, timeout, outputs=()):
        self._job = job
        self._what = what          # "all_reduce (float32 [2, 3]) on rank 1", for messages
        self._timeout = timeout    # seconds
        self._outputs = list(outputs)
        self._done = threading.Event()
        self._value = None
        self._error = None

    def _run(self):
        """Called by the worker thread."""
        try:
            self._value = self._job()
        except BaseException as error:  # handed to the waiting thread, not lost here
            self._error = error
        finally:
            self._job = None
            self._done.set()

    def wait(self, timeout=None):
        """Block until the operation has finished; True, as in torch. A `timeout` (timedelta
        or seconds; 0 or None: the group's) bounds the wait."""
        limit = seconds(timeout) or self._timeout
        if not self._done.wait(limit):
            raise DistBackendError(
                f"{self._what} timed out after {limit:g} s: a rank taking part did not join "
                "it (it may have died, hung, or be running a different collective)")
        if self._error is not None:
            raise DistBackendError(f"{self._what} failed: {self._error}") from self._error
        return True

    def is_completed(self):
        """Whether the operation has finished (successfully or not)."""
        return self._done.is_set()

    def is_success(self):
        """Whether the operation has finished without an error."""
        return self._done.is_set() and self._error is None

    def exception(self):
        """The error the operation raised, or None."""
        return self._error

    def result(self):
        """The operation's output tensors (after `wait()`)."""
        return list(self._outputs)

    def _value_after_wait(self):
        Work.wait(self)  # this job's own completion (a send's is its request's, see below)
        return self._value


class PointToPointWork(Work):
    """A send or receive: its job posts an MPI request; waiting completes it on the worker
    (see the module doc for why the two are separate jobs)."""

    def __init__(self, job, what, timeout, outputs, worker, source_of=None):
        super().__init__(job, what, timeout, outputs)
        self._worker = worker
        self._status = worker.mpi.Status()
        self._source_of = source_of  # status -> the sender's rank, for receives
        self._check = None           # the last queued Wait or Test job
        self._complete = False

    def wait(self, timeout=None):
        """Block until the message has been sent (or received)."""
        request = self._value_after_wait()
        if self._check is not None:  # a test in flight may complete (and free) the request
            self._complete = bool(self._check._value_after_wait())
            self._check = None
        if not self._complete:
            done = self._worker.submit(
                Work(lambda: request.Wait(self._status), self._what, self._timeout))
            self._complete = bool(done._value_after_wait())
        return True

    def is_completed(self):
        """Without blocking: True once a wait, or a test queued by an earlier call, found
        the message complete."""
        if not self._complete and self._check is not None and self._check.is_completed():
            self._complete = bool(self._check._value)
            self._check = None
        if not self._complete and self._check is None and self.is_success():
            request = self._value
            self._check = self._worker.submit(
                Work(lambda: request.Test(self._status), self._what, self._timeout))
        return self._complete

    def _source_rank(self):
        """The rank a receive got its message from (after `wait()`)."""
        self.wait()
        return self._source_of(self._status)


class Worker:
    """The thread that runs queued Work, one at a time, in submission order."""

    def __init__(self, mpi):
        self.mpi = mpi
        self._jobs = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="ember-distributed",
                                        daemon=True)
        self._thread.start()

    def submit(self, work):
        """Queue `work` to run after everything submitted before it; returns it."""
        self._jobs.put(work)
        return work

    def call(self, job, what, timeout):
        """Run `job()` on the worker thread and return its value (for setup calls that MPI
        must see in order with the collectives, such as splitting a communicator)."""
        return self.submit(Work(job, what, timeout))._value_after_wait()

    def _loop(self):
        while True:
            work = self._jobs.get()
            if work is None:
                return
            work._run()

    def stop(self, timeout):
        """Let queued work finish, then end the thread; False if it is stuck in MPI."""
        self._jobs.put(None)
        self._thread.join(timeout)
        return not self._thread.is_alive()

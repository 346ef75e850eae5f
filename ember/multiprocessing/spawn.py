"""`spawn(fn, args, nprocs)`: run `fn(i, *args)` in `nprocs` new processes and wait for them
(torch.multiprocessing.spawn).

Each child reports an exception's traceback on its own queue before exiting with status 1.
`ProcessContext.join()` waits for the children; when one fails it terminates the others and
raises ProcessRaisedException (with the child's traceback) or ProcessExitedException (a child
that died or exited non-zero), as torch does.
"""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback

__all__ = ["spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessException",
           "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    """A spawned process failed: `error_index` is its rank, `pid` its process id."""

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception; the message ends with its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero status or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    """What each child runs: `fn(i, *args)`, reporting an exception's traceback."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent was interrupted too and will stop the others
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The processes `start_processes(join=False)` started, to `join()` later."""

    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        """The children's process ids."""
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for the children; True once all exited cleanly, False on timeout. Raises when
        one failed (the others are terminated first)."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0 and failed is None:
                failed = index
        if failed is None:
            return not self.sentinels
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        raise self._error(failed)

    def _error(self, index):
        process = self.processes[index]
        queue = self.error_queues[index]
        if not queue.empty():
            trace = queue.get()
            return ProcessRaisedException(f"\n\n-- Process {index} terminated with the following "
                                          f"error:\n{trace}", index, process.pid)
        code = process.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            return ProcessExitedException(f"process {index} terminated with signal {name}",
                                          index, process.pid, code, name)
        return ProcessExitedException(f"process {index} terminated with exit code {code}",
                                      index, process.pid, code)


class SpawnContext(ProcessContext):
    """The deprecated name of what `spawn(join=False)` returns (a FutureWarning, as torch)."""

    def __init__(self, processes, error_queues):
        import warnings

        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      FutureWarning, stacklevel=2)
        super().__init__(processes, error_queues)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start `nprocs` processes running `fn(i, *args)` with `start_method`; join them unless
    `join=False` (then the ProcessContext is returned)."""
    context = multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        error_queue = context.SimpleQueue()
        process = context.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        processes.append(process)
        error_queues.append(error_queue)
    processes_context = ProcessContext(processes, error_queues)
    if not join:
        return processes_context
    while not processes_context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """`start_processes` with the "spawn" method (torch warns for others, and so does ember)."""
    if start_method != "spawn":
        import warnings

        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t"
                      " torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")

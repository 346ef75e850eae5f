"""The profiler: where the time (and the FLOPs, and the bytes) of a training step go.

    with profile(record_shapes=True, with_flops=True) as prof:
        with record_function("forward"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")     # chrome://tracing or ui.perfetto.dev

Three kinds of events, nested by time:
    user      `record_function("name")` ranges (and "ProfilerStep#N" with a schedule)
    op        every op through dispatch, forward or inside a backward rule: "ember::mul"
    backward  every node the engine runs, as torch names them: the node "MulBackward0" inside
              "autograd::engine::evaluate_function: MulBackward0"
An op event carries its input shapes (record_shapes), FLOPs (with_flops; formulas in
`utils/flop_counter.py`), the bytes it read and wrote (inputs + outputs), the memory its
outputs took (profile_memory: allocations only, frees are not seen) and the module it ran in
(with_modules, or inside `autograd.graph.track_modules`). `key_averages(group_by_module=True)`
totals the op events per module, submodules included.

Ops are seen through the observers in `autograd/_instrument.py`; with no profiler running
they cost one global test per op.

Read next: `ember/audit.py`.
"""
import enum
import json
import os
import sys
import threading
import time
import warnings
from contextlib import ContextDecorator
from time import perf_counter_ns

from ..autograd import _instrument
from ..utils.flop_counter import op_flops

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_recording = []  # profilers that are recording now (record_function reports to them)


class ProfilerActivity(enum.Enum):
    """What `profile(activities=...)` records: CPU (the default), CUDA. ember times every op on the
    host, so asking for CUDA only warns that kernels are not timed separately."""

    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What a `schedule` tells the profiler to do at a step: NONE (idle), WARMUP (profile, discard),
    RECORD, RECORD_AND_SAVE (record, then call on_trace_ready)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Which steps to record: after `skip_first` steps, cycles of `wait` idle steps, `warmup`
    steps (profiled but thrown away) and `active` recorded steps, `repeat` times (0: forever).
    The last active step of a cycle is RECORD_AND_SAVE: on_trace_ready runs after it."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    cycle = wait + warmup + active

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait  # the first cycle starts with its warmup
        if repeat and step >= repeat * cycle:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An on_trace_ready handler writing each trace as a chrome trace JSON file in dir_name."""
    if use_gzip:
        raise NotImplementedError("tensorboard_trace_handler(use_gzip=True) is not supported")

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{worker}.{time.time_ns() // 1000000}.pt.trace.json"))

    return handler


# ----------------------------------------------------------------------------------------------
# events


class FunctionEvent:
    """One timed range. Times are microseconds since the profiler started."""

    __slots__ = ("id", "name", "kind", "thread", "start_us", "end_us", "input_shapes", "flops",
                 "bytes", "cpu_memory_usage", "module", "stack", "cpu_children", "cpu_parent",
                 "seq", "args")

    def __init__(self, name, kind, thread, start_us, end_us, seq, input_shapes=(), flops=0,
                 nbytes=0, memory=0, module=None, stack=()):
        self.id = seq
        self.seq = seq
        self.name = name
        self.kind = kind
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.input_shapes = input_shapes
        self.flops = flops
        self.bytes = nbytes
        self.cpu_memory_usage = memory
        self.module = module
        self.stack = stack
        self.cpu_children = []
        self.cpu_parent = None
        self.args = None  # record_function's `args` string

    key = property(lambda self: self.name)
    count = 1
    is_user_annotation = property(lambda self: self.kind == "user")

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    cpu_time = cpu_time_total

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def time_range(self):
        return (self.start_us, self.end_us)

    def __repr__(self):
        return (f"<FunctionEvent {self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes} flops={self.flops}>")


class FunctionEventAvg:
    """Totals over events with the same key (name, plus input shapes when grouped so)."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.flops = 0
        self.bytes = 0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.is_user_annotation = False

    def add(self, event, self_time=None, self_memory=None):
        """Fold one event into this average (count, times, FLOPs, bytes, memory);
        `self_time`/`self_memory` override the event's own. Returns self."""
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total if self_time is None else self_time
        self.flops += event.flops
        self.bytes += event.bytes
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage if self_memory is None \
            else self_memory
        self.is_user_annotation = event.kind == "user"
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us flops={self.flops}>")


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "flops", "bytes",
              "cpu_memory_usage", "self_cpu_memory_usage")
_DEVICE_KEYS = ("cuda_time_total", "self_cuda_time_total", "device_time_total",
                "self_device_time_total", "cuda_time", "device_time", "cuda_memory_usage",
                "self_cuda_memory_usage", "device_memory_usage", "self_device_memory_usage")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with torch's reporting methods."""

    def __init__(self, events=(), profile_memory=False, with_flops=False, shapes=False):
        super().__init__(events)
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._shapes = shapes

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_module=False):
        """Events grouped by name (and input shapes), or by module with group_by_module."""
        if group_by_module:
            return self._by_module()
        groups = {}
        for e in self:
            key = e.name
            if group_by_input_shape:
                key = (e.name, str(e.input_shapes))
            if group_by_stack_n:
                key = (key, tuple(e.stack[:group_by_stack_n]))
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.name, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return EventList(groups.values(), self._profile_memory, self._with_flops,
                         group_by_input_shape)

    def _by_module(self):
        """Per module: the op events that ran in it or in its submodules (forward and
        backward); "self" counts only the ops that ran directly in it."""
        groups = {}
        for e in self:
            if e.kind != "op" or e.module is None:
                continue
            parts = e.module.split(".")
            for k in range(1, len(parts) + 1):
                name = ".".join(parts[:k])
                avg = groups.get(name)
                if avg is None:
                    avg = groups[name] = FunctionEventAvg(name)
                own = name == e.module
                avg.add(e, e.cpu_time_total if own else 0.0,
                        e.cpu_memory_usage if own else 0)
        ordered = [groups[k] for k in sorted(groups)]
        return EventList(ordered, self._profile_memory, self._with_flops, False)

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None,
              top_level_events_only=False, max_shapes_column_width=80):
        """A text table like torch's; sort_by one of "cpu_time_total", "self_cpu_time_total",
        "cpu_time", "count", "flops", "bytes", "cpu_memory_usage", "self_cpu_memory_usage"."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by in _DEVICE_KEYS:
                pass  # nothing runs on a device timer here: every row has 0, keep the order
            elif sort_by not in _SORT_KEYS:
                raise ValueError(f"table(): unknown sort_by {sort_by!r}; expected one of "
                                 f"{', '.join(_SORT_KEYS)}")
            else:
                rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        return _table(self, rows, max_name_column_width, max_shapes_column_width, header)

    def total_average(self):
        """One FunctionEventAvg, named "Total", summing every event."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def export_chrome_trace(self, path):
        """Write the events to `path` as a Chrome trace (JSON), viewable in chrome://tracing or
        Perfetto."""
        _export(self, path)


def _table(events, rows, name_width, shapes_width, header):
    total_self = sum(e.self_cpu_time_total for e in events) or 1.0
    columns = [("Name", lambda e: _clip(e.key, name_width), "<"),
               ("Self CPU %", lambda e: f"{100 * e.self_cpu_time_total / total_self:.2f}%", ">"),
               ("Self CPU", lambda e: _time(e.self_cpu_time_total), ">"),
               ("CPU total %", lambda e: f"{100 * e.cpu_time_total / total_self:.2f}%", ">"),
               ("CPU total", lambda e: _time(e.cpu_time_total), ">"),
               ("CPU time avg", lambda e: _time(e.cpu_time_total / max(e.count, 1)), ">")]
    if events._profile_memory:
        columns += [("CPU Mem", lambda e: _bytes(e.cpu_memory_usage), ">"),
                    ("Self CPU Mem", lambda e: _bytes(e.self_cpu_memory_usage), ">")]
    columns.append(("# of Calls", lambda e: str(e.count), ">"))
    if events._shapes:
        columns.append(("Input Shapes", lambda e: _clip(str(e.input_shapes), shapes_width),
                        ">"))
    if events._with_flops:
        columns.append(("Total FLOPs", lambda e: str(e.flops) if e.flops else "--", ">"))
    columns.append(("Total Bytes", lambda e: _bytes(e.bytes) if e.bytes else "--", ">"))
    cells = [[fn(e) for _, fn, _ in columns] for e in rows]
    widths = [max([len(title)] + [len(r[k]) for r in cells]) for k, (title, _, _) in
              enumerate(columns)]
    rule = "  ".join("-" * w for w in widths)

    def line(values):
        return "  ".join(v.ljust(w) if align == "<" else v.rjust(w)
                         for v, w, (_, _, align) in zip(values, widths, columns)).rstrip()

    out = ([header] if header else []) + [rule, line([c[0] for c in columns]), rule]
    out += [line(r) for r in cells]
    out += [rule, f"Self CPU time total: {_time(sum(e.self_cpu_time_total for e in events))}"]
    return "\n".join(out) + "\n"


def _clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def _time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _bytes(n):
    for size, unit in ((1 << 30, "Gb"), (1 << 20, "Mb"), (1 << 10, "Kb")):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def _export(events, path):
    """Chrome trace format: one complete ("X") event per range, times in microseconds."""
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
              "args": {"name": "ember"}}]
    for e in sorted(events, key=lambda e: (e.start_us, -e.end_us, e.seq)):
        args = {}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.flops:
            args["flops"] = e.flops
        if e.bytes:
            args["bytes"] = e.bytes
        if e.module is not None:
            args["module"] = e.module
        if e.args is not None:
            args["args"] = e.args
        trace.append({"ph": "X", "cat": {"op": "cpu_op", "user": "user_annotation"}.get(
                          e.kind, "cpu_op"),
                      "name": e.name, "pid": pid, "tid": e.thread, "ts": e.start_us,
                      "dur": e.end_us - e.start_us, "args": args})
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": trace}, f)


def _nest(events):
    """Set cpu_parent / cpu_children from the time ranges, per thread."""
    stacks = {}
    for e in sorted(events, key=lambda e: (e.start_us, -e.end_us, e.seq)):
        stack = stacks.setdefault(e.thread, [])
        while stack and stack[-1].end_us < e.end_us:  # it ended before e did: not a parent
            stack.pop()
        if stack:
            e.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(e)
        stack.append(e)


# ----------------------------------------------------------------------------------------------
# the profiler


class profile:
    """torch.profiler.profile: record ops, backward nodes and user ranges while active."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, use_cuda=None):
        if experimental_config is not None or execution_trace_observer is not None:
            raise NotImplementedError("profile(): experimental_config and "
                                      "execution_trace_observer are not supported by ember")
        activities = set(activities) if activities is not None else {ProfilerActivity.CPU}
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        if ProfilerActivity.CUDA in activities:
            warnings.warn("ember's profiler times ops on the host: CUDA kernels are not timed "
                          "separately", stacklevel=2)
        self.activities = activities
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.step_num = 0
        self._action = ProfilerAction.RECORD
        self._events = []
        self._t0 = None
        self._tracking = None
        self._step_start = None
        self._function_events = None

    # lifecycle

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start profiling (what `with profile(...)` does on entry): listen to the ops and backward
        nodes and enter the schedule's first action."""
        self._t0 = perf_counter_ns()
        self._action = self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD
        if self.with_modules:
            self._tracking = _instrument.track_modules().__enter__()
        _instrument.listen(self)
        self._enter_action()

    def stop(self):
        """Stop profiling (what leaving the `with` block does) and call `on_trace_ready` if a
        recording step was open."""
        self._close_step()
        self._set_recording(False)
        _instrument.unlisten(self)
        if self._tracking is not None:
            self._tracking.__exit__(None, None, None)
            self._tracking = None
        if self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) or \
                self.schedule is None:
            self._trace_ready()

    def step(self):
        """Mark the end of a training step (with a schedule: move to the next action)."""
        self._close_step()
        previous = self._action
        self.step_num += 1
        self._action = self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD
        if previous is ProfilerAction.RECORD_AND_SAVE:
            self._trace_ready()
        self._enter_action(previous)

    def _enter_action(self, previous=None):
        """Record in RECORD steps only (warmup steps are not kept, as in torch; ember's
        profiler has no start-up cost to absorb). A new recording window starts a new trace."""
        recording = self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if recording and previous is not ProfilerAction.RECORD and not self.acc_events:
            self._events = []
        self._set_recording(recording)
        if recording and self.schedule is not None:
            self._step_start = (perf_counter_ns(), next(_instrument._events))

    def _close_step(self):
        if self._step_start is not None:
            start, seq = self._step_start
            self._add(f"ProfilerStep#{self.step_num}", "user", start, perf_counter_ns(), seq)
            self._step_start = None

    def _trace_ready(self):
        self._function_events = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _set_recording(self, on):
        if on and self not in _recording:
            _recording.append(self)
        elif not on and self in _recording:
            _recording.remove(self)

    # listener methods (see autograd/_instrument.py)

    def on_op(self, op, args, attrs, outputs, inplace, start, end, seq):
        """Listener callback (see `ember.autograd._instrument`): called after each op runs while
        this is active, with the op, its arguments and outputs and the `perf_counter_ns` times
        around it. Records an event while the profiler is recording."""
        if self not in _recording:
            return
        shapes = [list(x.shape) if hasattr(x, "_data") else [] for x in args] \
            if self.record_shapes else ()
        if op.view:  # a view moves and allocates nothing
            nbytes = memory = 0
        else:
            nbytes = sum(x._data.nbytes for x in args if hasattr(x, "_data")) + \
                sum(o._data.nbytes for o in outputs)
            memory = sum(o._data.nbytes for o in outputs) \
                if self.profile_memory and not inplace else 0
        flops = op_flops(op, args, attrs, outputs) if self.with_flops else 0
        stack = _user_stack() if self.with_stack else ()
        self._add("ember::" + op.name, "op", start, end, seq, shapes, flops, nbytes, memory,
                  _instrument.current_module(), stack)

    def on_node(self, node, grads, in_grads, start, end, seq):
        """Listener callback (see `ember.autograd._instrument`): called after each backward node's
        rule runs while this is active. Records an event while the profiler is recording."""
        if self not in _recording:
            return
        name = node.name()
        module = node.metadata.get("module")
        # the same range twice: the outer one sorts first (a smaller sequence number)
        self._add("autograd::engine::evaluate_function: " + name, "backward", start, end,
                  seq - 0.5, module=module)
        self._add(name, "backward", start, end, seq, module=module)

    def _add(self, name, kind, start, end, seq, shapes=(), flops=0, nbytes=0, memory=0,
             module=None, stack=()):
        t0 = self._t0
        event = FunctionEvent(name, kind, threading.get_ident(), (start - t0) / 1e3,
                              (end - t0) / 1e3, seq, shapes, flops, nbytes, memory, module, stack)
        self._events.append(event)
        self._function_events = None
        return event

    # results

    def events(self):
        """Every recorded event, ordered by start time, with parents and children set."""
        if self._function_events is None:
            for e in self._events:
                e.cpu_children = []
                e.cpu_parent = None
            _nest(self._events)
            for e in reversed(sorted(self._events, key=lambda e: (e.start_us, -e.end_us, e.seq))):
                if e.kind != "op":  # a range holds the memory its ops allocated
                    e.cpu_memory_usage = sum(c.cpu_memory_usage for c in e.cpu_children)
            ordered = sorted(self._events, key=lambda e: (e.start_us, -e.end_us, e.seq))
            self._function_events = EventList(ordered, self.profile_memory, self.with_flops,
                                              False)
        return self._function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_module=False):
        """The recorded events grouped by name (optionally also by input shapes, or by module), as
        an EventList of FunctionEventAvg; `.table()` prints it."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_module)

    def export_chrome_trace(self, path):
        """Write the recorded events to `path` as a Chrome trace (JSON)."""
        self.events().export_chrome_trace(path)

    def total_average(self):
        """One FunctionEventAvg summing every recorded event."""
        return self.events().total_average()


def _user_stack(limit=5):
    """The innermost user frames (outside ember) as "file(line): function"."""
    frame = sys._getframe(2)
    out = []
    while frame is not None and len(out) < limit:
        path = frame.f_code.co_filename
        if not path.startswith(_EMBER_DIR):
            out.append(f"{path}({frame.f_lineno}): {frame.f_code.co_name}")
        frame = frame.f_back
    return tuple(out)


class record_function(ContextDecorator):
    """A named range in the profile: `with record_function("loss"):` or as a decorator.
    Costs one list test when no profiler is recording."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._open = []  # start of each entry not yet left (a decorated function may recurse)

    def __enter__(self):
        if _recording:
            self._open.append((perf_counter_ns(), next(_instrument._events)))
        else:
            self._open.append(None)
        return self

    def __exit__(self, *exc):
        opened = self._open.pop()
        if opened is not None:
            end = perf_counter_ns()
            for prof in tuple(_recording):
                prof._add(self.name, "user", opened[0], end, opened[1]).args = self.args
        return False

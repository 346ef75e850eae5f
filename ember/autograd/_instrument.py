"""Watching ember run: the observation points shared by the profiler, the FLOP counter and
`autograd.explain`, and the module tracker that tells them which nn.Module is running.

    ops/_dispatch.py    `call` and `dispatch_inplace` hand every op to `_dispatch._observer`
                        (one of a stack of observers: function transforms may sit above)
    autograd/engine.py  `_apply` hands every node's rule to `engine._observer`

Both are None unless some tool listens, so ordinary code pays one global test per op and one
per backward node. A tool subscribes with `listen(tool)`: the first listener sets the two
observers, the last one to leave clears them. A listener has two methods, called after the op
(or the node's rule) ran, with `perf_counter_ns` times and a sequence number taken at the start
(it orders events that start in the same nanosecond):

    on_op(op, args, attrs, outputs, inplace, start_ns, end_ns, seq)
    on_node(node, grads, in_grads, start_ns, end_ns, seq)

`track_modules()` stamps `node.metadata["module"]` on the nodes each module's forward creates,
with forward pre/post hooks on every module (nothing runs per op). Names follow torch's
FlopCounterMode: the outermost module called is its class name (`Sequential`), submodules add
their attribute path (`Sequential.0`). While a hook pair is active, `current_module()` names the
module whose forward is running, or in backward the module that created the running node.

The observers run single-threaded: while one op is being timed, ops that other threads run
are not seen.

Read next: `_graph_view.py` (drawing the graph) and `explain.py`.
"""
import itertools
import weakref
from time import perf_counter_ns

from . import graph

__all__ = ["listen", "unlisten", "track_modules", "current_module", "current_node"]

_listeners = []
_events = itertools.count()
current_node = None  # the node whose rule is running (backward), for module attribution


def listen(listener):
    """Start calling `listener.on_op` / `listener.on_node`."""
    from ..ops import _dispatch
    from . import engine

    if not _listeners:
        _dispatch.add_observer(_observe_op)
    _listeners.append(listener)
    engine._observer = _observe_node


def unlisten(listener):
    from ..ops import _dispatch
    from . import engine

    if listener in _listeners:
        _listeners.remove(listener)
        if not _listeners:
            _dispatch.remove_observer(_observe_op)
            engine._observer = None


def _observe_op(op, args, attrs, target):
    """Dispatch's observer: run the op (with the observer off, so it is not seen twice)."""
    from ..ops import _dispatch

    seq = next(_events)
    start = perf_counter_ns()
    result = _dispatch.call_below(_observe_op, op, args, attrs, target)
    end = perf_counter_ns()
    if target is None:
        outputs = result if type(result) is tuple else (result,)
        inputs = args
    else:
        outputs = (target,)
        inputs = (target,) + tuple(args)
    for listener in tuple(_listeners):
        listener.on_op(op, inputs, attrs, outputs, target is not None, start, end, seq)
    return result


def _observe_node(node, grads):
    """The engine's observer: run the node's rule, timed, then tell the listeners."""
    global current_node
    outer = current_node
    current_node = node
    seq = next(_events)
    start = perf_counter_ns()
    try:
        in_grads = node.apply(grads)
    finally:
        current_node = outer
    end = perf_counter_ns()
    for listener in tuple(_listeners):
        listener.on_node(node, grads, in_grads, start, end, seq)
    return in_grads


# ----------------------------------------------------------------------------------------------
# modules


class _Tracker:
    """One set of global module hooks, shared by every active `track_modules` block."""

    def __init__(self):
        self.users = 0
        self.handles = ()
        self.names = weakref.WeakKeyDictionary()  # module -> name
        self.stack = []                             # (name, first node sequence number)

    def enter(self, modules):
        if self.users == 0:
            from ..nn.modules._hooks import (
                register_module_forward_hook,
                register_module_forward_pre_hook,
            )

            self.handles = (register_module_forward_pre_hook(self.pre_hook),
                            register_module_forward_hook(self.post_hook, always_call=True))
        self.users += 1
        for module in modules:
            for name, sub in module.named_modules(prefix=type(module).__name__):
                self.names.setdefault(sub, name)

    def exit(self):
        self.users -= 1
        if self.users == 0:
            for handle in self.handles:
                handle.remove()
            self.handles = ()
            self.names = weakref.WeakKeyDictionary()
            self.stack.clear()

    def name_of(self, module):
        name = self.names.get(module)
        if name is None:
            name = self.names[module] = type(module).__name__
        return name

    def pre_hook(self, module, args):
        name = self.name_of(module)
        for child_name, child in module.named_children():
            self.names.setdefault(child, f"{name}.{child_name}")
        # nodes made from here on have larger sequence numbers (taking one is harmless)
        self.stack.append((name, next(graph._sequence)))

    def post_hook(self, module, args, output):
        if not self.stack:
            return None
        name, first = self.stack.pop()
        if output is not None:
            _stamp(_node_roots(output), first, name)
        return None


def _node_roots(output):
    """The grad_fn of every tensor in a (possibly nested) module output."""
    from .._tensor import Tensor

    roots = []
    todo = [output]
    while todo:
        x = todo.pop()
        if isinstance(x, Tensor):
            if x._grad_fn is not None:
                roots.append(x._grad_fn)
        elif isinstance(x, (tuple, list)):
            todo.extend(x)
        elif isinstance(x, dict):
            todo.extend(x.values())
    return roots


def _stamp(roots, first, name):
    """Name `name` on every node made since sequence number `first` that no inner module
    claimed. Inner modules finish first, so they stamp their nodes first; the walk goes on
    through their nodes, because the outer module may have made nodes below them."""
    seen = set()
    todo = [n for n in roots if n._seq >= first]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        node.metadata.setdefault("module", name)
        for child, _ in node.next_functions:
            # leaves' AccumulateGrad nodes have sequence number inf: they belong to no module
            if child is not None and first <= child._seq < _LEAF:
                todo.append(child)


_LEAF = float("inf")
_tracker = _Tracker()


class track_modules:
    """`with track_modules(model):` -- remember which module's forward made each graph node.

    Nodes made inside a module's forward get `node.metadata["module"]` (e.g. "Net.fc1"); the
    graph drawing shows it, the profiler and FlopCounterMode total per module. Without
    arguments every module is tracked and named when first called, like torch's
    FlopCounterMode; modules given are named from their attribute paths up front."""

    def __init__(self, *modules):
        self.modules = modules

    def __enter__(self):
        _tracker.enter(self.modules)
        return self

    def __exit__(self, *exc):
        _tracker.exit()
        return False


def current_module():
    """The name of the module running now (forward), or that made the running node (backward);
    None when no module is tracked or none is running."""
    if _tracker.stack:
        return _tracker.stack[-1][0]
    if current_node is not None:
        return current_node.metadata.get("module")
    return None

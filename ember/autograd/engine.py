"""The backward engine: from output gradients to leaf gradients, without recursion.

    1. discover   walk `next_functions` from the roots (an explicit stack, so a 100,000-op
                  chain is fine), counting for each node how many edges point at it;
    2. prune      with `inputs=` (or autograd.grad), keep only nodes that lead to an input;
    3. execute    a node runs once every node that feeds it has run (Kahn's algorithm, ties
                  broken by creation order, newest first, as torch's engine does). Its
                  output gradients are summed per slot, passed through tensor hooks, handed
                  to the rule; each resulting gradient is summed down to its input's shape
                  (the rules never undo broadcasting) and cast to the input's dtype (a
                  complex gradient of a real input keeps its real part: torch's convention
                  for complex autograd, see `_fit`);
    4. release    saved tensors are freed as each node finishes, unless retain_graph.

Rules run with grad mode off, unless create_graph=True: then they record a graph of their own
and the gradients can be differentiated again. Callbacks queued during a pass
(`queue_callback`, torch's `Variable._execution_engine.queue_callback`) run once it has
finished: DDP waits there for its last gradient all-reduce.

Read next: `function.py` (user-defined autograd functions) and `functional.py`.
"""
from heapq import heappop, heappush

import numpy as np  # np.errstate only

from .._dtype import COMPLEX, FLOATING
from .._functorch import levels as _levels
from .._tensor import Tensor
from . import anomaly_mode, grad_mode
from .graph import AccumulateGrad, edge_of, resolve_leaves

__all__ = ["backward", "grad", "queue_callback"]

_grad = grad_mode.state
_make = Tensor._make
_observer = None  # set while a profiler or explain() listens (see _instrument.py)
_final_callbacks = []  # one list per backward pass in progress (a hook may start another)
# False during a walk that only some inputs' gradients matter to (grad(), backward(inputs=)):
# a reentrant checkpoint cannot run then (it backpropagates into every leaf it recomputes)
checkpoint_valid = True


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """torch.autograd.backward: accumulate gradients of `tensors` into the leaves' `.grad`."""
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grads = _root_grads(tensors, grad_tensors, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    targets = None
    if inputs is not None:
        targets = _as_tuple(inputs)
        if not targets:
            raise RuntimeError("backward() received an empty list of inputs")
        _check_inputs(targets)
    _run(tensors, grads, retain_graph, create_graph, targets, capture=False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """torch.autograd.grad: the gradients of `outputs` w.r.t. `inputs`, returned (not stored).
    With is_grads_batched, dim 0 of each grad_output indexes a batch of them: one backward pass
    under vmap computes every vector-Jacobian product."""
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads"
                         "=True, but got: allow_unused=False.")
    _check_inputs(inputs)
    grads = _root_grads(outputs, grad_outputs, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    result = _run(outputs, grads, retain_graph, create_graph, inputs, capture=True)
    for i, g in enumerate(result):
        if g is None:
            if materialize_grads:
                result[i] = inputs[i].new_zeros(inputs[i].shape)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    from .._functorch.vmap import vmap

    inputs = _as_tuple(inputs)
    unused = set()

    def one(*gs):
        found = grad(outputs, inputs, gs, retain_graph=retain_graph, create_graph=create_graph,
                     allow_unused=allow_unused, materialize_grads=materialize_grads)
        for k, g in enumerate(found):
            if g is None:
                unused.add(k)
        return tuple(t.new_zeros(t.shape) if g is None else g for g, t in zip(found, inputs))

    result = vmap(one)(*_as_tuple(grad_outputs))
    return tuple(None if k in unused else g for k, g in enumerate(result))


def queue_callback(callback):
    """Run `callback()` when the backward pass in progress has finished (called from a hook
    during backward), as torch's `Variable._execution_engine.queue_callback`."""
    if not _final_callbacks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _final_callbacks[-1].append(callback)


class ImperativeEngine:
    """`Variable._execution_engine`: the object through which torch code reaches the engine."""

    @staticmethod
    def queue_callback(callback):
        """See `queue_callback`."""
        queue_callback(callback)


# ----------------------------------------------------------------------------------------------
# arguments


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _check_inputs(inputs):
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor inputs, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _root_grads(outputs, grad_outputs, create_graph):
    """The gradient that seeds each output: given, or implicit ones for scalars."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs) if not isinstance(grad_outputs, Tensor) \
            else (grad_outputs,)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_tensors has {len(grad_outputs)} entries but there are "
                           f"{len(outputs)} tensors")
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if out._dtype.category != FLOATING:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {out._dtype}")
            # a batched output (under vmap) holds no plain array to copy
            g = (out.new_ones(out.shape) if out._batch_level else
                 _make(_ones_like(out._data), False, None, 0, out._device))
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        elif g._data.shape != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                               f"and output[{i}] has a shape of {out.shape}.")
        elif g._dtype.is_complex != out._dtype.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required "
                               f"to have the same dtype. Mismatch in dtype: grad_output[{i}] has "
                               f"a dtype of {g._dtype} and output[{i}] has a dtype of "
                               f"{out._dtype}.")
        grads.append(g)
    return grads


def _ones_like(array):
    """A writable array of ones shaped as `array`, from two array methods (numpy or cupy):
    `Tensor.new_ones` costs a tenth of a tiny op's whole backward (cProfile of the issue's
    `(a * b + a).sum().backward()` loop)."""
    ones = array.copy()
    ones.fill(1)
    return ones


# ----------------------------------------------------------------------------------------------
# the graph walk


def _run(outputs, grads, retain_graph, create_graph, targets, capture):
    # (map, not list comprehensions: Python 3.11 makes a function object for each of those,
    # a few per cent of a tiny graph's backward)
    roots = list(map(edge_of, outputs))
    target_edges = list(map(edge_of, targets)) if targets is not None else None
    deps, needed = _discover(roots, target_edges)
    buffers = {}
    fresh = set()  # AccumulateGrad nodes whose buffered gradient only the engine holds
    for (node, nr), g in zip(roots, grads):
        _add(buffers, node, nr, g, False, fresh)
    captures = _capture_slots(target_edges) if target_edges is not None else {}
    captured = [None] * (len(target_edges) if target_edges is not None else 0)
    global checkpoint_valid
    previous, outer_valid = _grad.grad_enabled, checkpoint_valid
    _grad.grad_enabled = create_graph
    callbacks = []
    _final_callbacks.append(callbacks)
    checkpoint_valid = targets is None
    try:
        _execute(deps, needed, buffers, fresh, captures, captured, retain_graph,
                 capture or target_edges is not None, capture)
        while callbacks:  # a callback may queue another
            callbacks.pop(0)()
    finally:
        _final_callbacks.pop()
        _grad.grad_enabled = previous
        checkpoint_valid = outer_valid
    if targets is not None and not capture:
        _store_nonleaf_grads(targets, captured)
    return captured


def _discover(root_edges, target_edges):
    """Count incoming edges per node; with targets, keep only nodes leading to one."""
    deps = {}
    order = []
    stack = []
    for node, _ in root_edges:
        if node is not None:
            stack.append(node)
    roots = set(stack)
    keep_order = target_edges is not None  # (only `_prune` reads the order)
    while stack:
        node = stack.pop()
        if keep_order:
            order.append(node)
        # (a leaf the forward pass recorded as a tensor gets its AccumulateGrad node here, see
        # graph.py's `_edges`; the later passes read the resolved `_next`)
        for child, _ in (resolve_leaves(node) if node._lazy_leaves else node._next):
            if child is None:
                continue
            if child in deps:
                deps[child] += 1
            else:  # first seen: walk it (a root is walked already)
                deps[child] = 1
                if child not in roots:
                    stack.append(child)
    if target_edges is None:
        return deps, None
    return _prune(order, deps, {node for node, _ in target_edges})


def _prune(order, deps, target_nodes):
    """Visit nodes children-first (a topological order, reversed) and mark those that reach a
    target; recount the edges between marked nodes only."""
    remaining = dict(deps)
    ready = [n for n in order if remaining.get(n, 0) == 0]
    topo = []
    while ready:
        node = ready.pop()
        topo.append(node)
        for child, _ in node._next:
            if child is not None:
                remaining[child] -= 1
                if remaining[child] == 0:
                    ready.append(child)
    needed = set()
    for node in reversed(topo):
        if node in target_nodes or any(c in needed for c, _ in node._next):
            needed.add(node)
    pruned = {}
    for node in needed:
        for child, _ in node._next:
            if child in needed:
                pruned[child] = pruned.get(child, 0) + 1
    return pruned, needed


def _capture_slots(target_edges):
    slots = {}
    for i, (node, nr) in enumerate(target_edges):
        slots.setdefault(node, []).append((nr, i))
    return slots


def _execute(deps, needed, buffers, fresh, captures, captured, retain_graph, only_targets,
             capture):
    heap = []
    for node in buffers:
        if deps.get(node, 0) == 0 and (needed is None or node in needed):
            heappush(heap, (-node._seq, id(node), node))
    while heap:
        node = heappop(heap)[2]
        grads = buffers.pop(node, None)
        if grads is not None:
            received = grads[0]
            leaf = type(node) is AccumulateGrad
            if node._tensor_hooks if not leaf else node.variable._hooks:
                grads = _call_tensor_hooks(node, grads)
            slots = captures.get(node) if captures else None
            if slots:
                for nr, i in slots:
                    captured[i] = grads[nr]
            # (a plain backward() -- no inputs=, not grad() -- applies every node it reaches)
            if (only_targets or needed is not None) and \
                    not _should_apply(node, needed, captures, only_targets, capture):
                pass
            elif leaf and _observer is None and not node._pre_hooks and not node._post_hooks:
                # the engine's own array may become .grad without a copy (not if a hook saw
                # it, or if it was captured for the caller); hooks on the node itself run
                # through `_apply`, as any node's
                node.accumulate(grads[0], node in fresh and grads[0] is received and
                                not slots and not node.variable._hooks)  # (owned)
            else:
                _apply(node, grads, buffers, fresh, needed, retain_graph)
        for child, _ in node._next:
            if child is None or (needed is not None and child not in needed):
                continue
            left = deps[child] - 1
            deps[child] = left
            if left == 0:
                heappush(heap, (-child._seq, id(child), child))


def _should_apply(node, needed, captures, only_targets, capture):
    if type(node) is AccumulateGrad:
        return not capture and (not only_targets or node in captures)
    if needed is None:
        return True
    return any(child in needed for child, _ in node._next)


def _apply(node, grads, buffers, fresh, needed, retain_graph):
    if node._out_meta is not None:  # (Function nodes fill in missing gradients themselves)
        grads = _materialize(node, grads)
    if node._pre_hooks:
        for hook in tuple(node._pre_hooks.values()):
            replaced = hook(tuple(grads))
            if replaced is not None:
                grads = list(replaced)
    in_grads = node.apply(grads) if _observer is None else _observer(node, grads)
    if type(in_grads) is not tuple:
        in_grads = tuple(in_grads) if isinstance(in_grads, list) else (in_grads,)
    if node._post_hooks:
        for hook in tuple(node._post_hooks.values()):
            replaced = hook(in_grads, tuple(grads))
            if replaced is not None:
                in_grads = tuple(replaced)
    if not retain_graph and node._saved:  # (a node that saved nothing has nothing to free)
        node.release()
    edges = node._next
    if len(in_grads) != len(edges) and type(node) is not AccumulateGrad:
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(edges)}, got {len(in_grads)})")
    if anomaly_mode.enabled:
        anomaly_mode.check_gradients(node, in_grads)
    meta = node._meta
    for i in range(len(edges)):  # (indexing: no tuples made per edge, as zip/enumerate make)
        g = in_grads[i]
        child, nr = edges[i]
        if child is None or g is None or (needed is not None and child not in needed):
            continue
        shape, dtype = meta[i]
        fitted = g if g._dtype is dtype and g._data.shape == shape else _fit(node, i, g)
        owned = type(child) is AccumulateGrad and _owned(fitted, fitted is not g, grads,
                                                        in_grads)
        if child._num_outputs == 1 and child not in buffers:  # `_add`'s first gradient, inline
            buffers[child] = [fitted]
            if owned:
                fresh.add(child)
        else:
            _add(buffers, child, nr, fitted, owned, fresh)


def _owned(g, new, grads, in_grads):
    """Whether only the engine holds g's memory, so a leaf may keep it as its .grad: a
    non-view array, not an incoming gradient passed through, and not given to two inputs."""
    array = g._data
    if array.base is not None or g._requires_grad:
        return False
    if new:
        return True
    for x in grads:  # (loops, not generators: this runs for every gradient a leaf gets)
        if x is not None and x._data is array:
            return False
    uses = 0
    for y in in_grads:
        if y is not None and y._data is array:
            uses += 1
    return uses == 1


def _fit(node, i, g):
    """Sum a gradient down to its input's shape and cast it to the input's dtype. A complex
    gradient for a real input keeps its real part: with torch's convention (a gradient is
    dL/d(re) + i dL/d(im)) that is exactly dL/dx for the real x that was promoted to complex."""
    shape, dtype = node._meta[i]
    if g._data.shape != shape:
        try:
            g = g.sum_to_size(shape)
        except RuntimeError:
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index "
                               f"{i} - got {list(g._data.shape)} but expected shape compatible "
                               f"with {list(shape)}") from None
    if g._dtype is not dtype:
        if g._dtype.category == COMPLEX and dtype.category != COMPLEX:
            g = g.real
        g = g.to(dtype)
    return g


def _add(buffers, node, nr, g, owned, fresh):
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node._num_outputs
    old = slots[nr]
    if old is None:
        slots[nr] = g
    else:
        owned = True  # a sum is a new array
        if _grad.grad_enabled or old._data.ndim == 0 or _levels.active:
            # dispatch also turns NumPy's 0-d sum (a scalar) into an array; under vmap or
            # forward-mode AD the sum must be an op (batched tensors, tangents)
            slots[nr] = old + g
        else:
            slots[nr] = Tensor._make(_sum_arrays(old._data, g._data), device=g._device)
    if owned:  # (a node leaves `fresh` never: a later gradient is a sum, a new array too)
        fresh.add(node)


def _sum_arrays(a, b):
    """a + b; an inf + -inf with warnings as errors is nan silently, as in torch."""
    try:
        return a + b
    except RuntimeWarning:
        with np.errstate(all="ignore"):
            return a + b


def _materialize(node, grads):
    """Multi-output rules get zeros for outputs that received no gradient (torch's default),
    except for an op's workspace outputs (see Op), whose gradients its rule never reads."""
    out = list(grads)
    visible = 1 if getattr(node.op, "has_workspace", False) else len(out)
    for k, g in enumerate(out[:visible]):
        if g is None:
            shape, dtype = node._out_meta[k]
            out[k] = _zeros(shape, dtype, grads)
    return out


def _zeros(shape, dtype, like):
    ref = next(g for g in like if g is not None)
    return ref.new_zeros(shape, dtype=dtype)


def _call_tensor_hooks(node, grads):
    """Hooks registered with Tensor.register_hook; retain_grad's runs after the user's."""
    if type(node) is AccumulateGrad:
        hooks = node.variable._hooks
        per_output = {0: hooks} if hooks else None
    else:
        per_output = node._tensor_hooks
    if not per_output:
        return grads
    grads = list(grads)
    for nr, hooks in per_output.items():
        if grads[nr] is None or not hooks:
            continue
        ordered = sorted(hooks.values(), key=lambda h: getattr(h, "_is_retain_grad", False))
        for hook in ordered:
            replaced = hook(grads[nr])
            if replaced is not None:
                grads[nr] = replaced
    return grads


def _store_nonleaf_grads(targets, captured):
    """backward(inputs=[...]) also fills `.grad` of non-leaf inputs, as torch does."""
    for t, g in zip(targets, captured):
        if g is None or t.grad_fn is None or t._retains_grad:  # retain_grad's hook stored it
            continue
        t.grad = g if t.grad is None else t.grad + g

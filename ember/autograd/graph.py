"""The recorded graph: `Node` (a tensor's `grad_fn`), leaves' `AccumulateGrad`, and in-place
history rewriting (`CopySlices`).

When an op runs with grad enabled and some input requires grad, dispatch calls `record`:

      x ──┐                          MulBackward0.next_functions
          ├─ mul ─> y                   = ((AccumulateGrad(x), 0), (AccumulateGrad(w), 0))
      w ──┘        y.grad_fn = MulBackward0 (saves x and w: the rule `g * b, g * a` names them)

A node keeps what its op's rule asked for and nothing else, plus each input's shape and dtype
so the engine can sum a broadcast gradient back to the input's shape (`compile_recorder`
writes an op's whole record out as one function). A leaf's AccumulateGrad node is made
when the graph is first walked (backward, or reading `next_functions`), not when the op runs:
until then the edge holds the leaf tensor, so a graph dropped unused never makes one. As in
torch, every node name is a class of its own (`type(y.grad_fn).__name__ == "MulBackward0"`):
`node_type` makes one Node subclass per name, once. The engine (`engine.py`) walks nodes from
the output back to the leaves.

In-place ops rewrite history: `y.add_(1)` gives `y` a new node whose input is y's old node. When
the target is a *view*, its base's history changes too: the base gets a `CopySlices` node ("the
base, with the view's region replaced by the new values") and the view a `ViewReplay` node that
re-derives it from the base. Views re-derive their node lazily if their base changed through
another view (`regenerate_view_grad_fn`). Torch does the same (CopySlices, AsStridedBackward0).

Read next: `engine.py`.
"""
import inspect
import itertools
import weakref

from .._dtype import FLOATING
from .._functorch import levels as _levels
from .._tensor import Tensor
from ..utils.hooks import RemovableHandle

__all__ = ["Node", "AccumulateGrad", "node_type", "is_op_node", "saved_tensors_hooks",
           "save_on_cpu", "disable_saved_tensors_hooks"]

_sequence = itertools.count()
_EMPTY = ()
_LEAF_SEQ = float("inf")
_new = object.__new__
_weak = weakref.ref


class Node:
    """A backward function: `apply(grads of outputs) -> grads of inputs`."""

    __slots__ = ("op", "_next", "_lazy_leaves", "_meta", "_saved", "_seq", "_num_outputs",
                 "_out_meta", "_tensor_hooks", "_pre_hooks", "_post_hooks", "_metadata",
                 "__weakref__")

    def __init__(self, op, next_functions, meta, saved, num_outputs, out_meta=None):
        self.op = op
        self._next = next_functions  # ((node or None, output_nr), ...) per input
        self._lazy_leaves = False    # whether _next holds leaf tensors (see `next_functions`)
        self._meta = meta            # (shape, dtype) per input that wants a grad
        self._saved = saved
        self._seq = next(_sequence)
        self._num_outputs = num_outputs
        self._out_meta = out_meta             # (shape, dtype) per output of tuple-returning ops
        self._tensor_hooks = None             # {output_nr: {id: hook}} from register_hook
        self._pre_hooks = None
        self._post_hooks = None
        if _anomaly.enabled:
            _anomaly.remember_forward(self)

    @property
    def next_functions(self):
        """((node or None, output_nr), ...): where each input's gradient goes. A leaf input's
        edge is its AccumulateGrad node, made here on first read when the op recorded the leaf
        itself (see `_edges`): a graph dropped without backward never makes one."""
        return resolve_leaves(self) if self._lazy_leaves else self._next

    @property
    def metadata(self):
        """A dict for notes about this node (torch's `Node.metadata`: the module that made it,
        anomaly mode's traceback). Made on first use: few nodes ever get one, and an empty dict
        per node was ~5% of recording a tiny op (callgrind, issue 22)."""
        try:
            return self._metadata
        except AttributeError:  # the slot is unset until the first use
            self._metadata = {}
            return self._metadata

    def name(self):
        """The node's name, torch's for the same node (e.g. "MulBackward0")."""
        return self.op.node_name

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def apply(self, grads):
        """Run the op's rule: the gradient(s) of the outputs -> one gradient per input."""
        op = self.op
        g = grads[0] if self._out_meta is None else tuple(grads)  # tuple ops get a tuple
        saved = self._saved
        # (shapes, attributes and flags reach the rule as saved: one call less, see _unpack)
        in_grads = op.rule(g, *(saved if saved is not None and not op.saves_tensors else
                                self._unpack()))
        if op.edges is None:
            return in_grads
        return tuple(in_grads[i] for i in op.edges)  # the inputs that have an edge

    def __call__(self, *grads):
        return self.apply(grads)

    def _unpack(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")
        if not self.op.saves_tensors:  # shapes, attributes, flags: kept as the rule takes them
            return saved
        values = []
        for (kind, _), value in zip(self.op.saves, saved):
            if kind == "input":
                try:  # a saved input, unchanged since: unpack_saved's common case
                    unchanged = type(value) is tuple and len(value) == 2 and \
                        (value[0]._counter or _UNWRITTEN).value == value[1]
                except AttributeError:  # a tensor not made by `Tensor._make`: no counter slot
                    unchanged = False
                value = value[0] if unchanged else unpack_saved(value, self)
            elif kind == "out":
                value = tuple(unpack_saved(v, self) for v in value)
                if self._out_meta is None:
                    value = value[0]
            elif kind in ("workspace", "inputs"):
                value = tuple(unpack_saved(v, self) for v in value)
            values.append(value)
        return values

    def release(self):
        """Free saved tensors (after a backward pass without retain_graph)."""
        if self._saved and self.op.saves_tensors:
            self._saved = None

    @property
    def saved_values(self):
        """{rule parameter name: saved value} -- for tools that show what a node keeps."""
        if self._saved is None:
            return None
        names = self.op.rule.__code__.co_varnames[1:1 + len(self.op.saves)]
        return dict(zip(names, self._unpack()))

    def register_prehook(self, hook):
        """`hook(grad_outputs)` before the node runs; may return replacement grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = {}
        return RemovableHandle(self._pre_hooks, hook)

    def register_hook(self, hook):
        """`hook(grad_inputs, grad_outputs)` after the node ran; may return new grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = {}
        return RemovableHandle(self._post_hooks, hook)


_NODE_TYPES = {}  # node name -> its Node subclass


def node_type(op):
    """The Node subclass named after `op`'s node (`MulBackward0`), shared by every op of that
    name and cached on the op."""
    cls = _NODE_TYPES.get(op.node_name)
    if cls is None:
        cls = type(op.node_name, (Node,), {"__slots__": (), "__module__": __name__,
                                          "__doc__": f"The backward node {op.node_name}."})
        _NODE_TYPES[op.node_name] = cls
    op.node_type = cls
    return cls


def is_op_node(node):
    """Whether `node` was recorded for an Op (not a leaf's, a view replay's, a hook's...)."""
    return type(node) is getattr(node.op, "node_type", None)


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient to `variable.grad`."""

    __slots__ = ("variable",)
    # What is the same on every AccumulateGrad node lives on the class, shadowing Node's slots
    # (never written on these nodes): a node per leaf and backward pass is made in a few
    # stores (see `accumulator`).
    op = None  # set to _ACCUMULATE below
    _next = _EMPTY
    _lazy_leaves = False
    _saved = _EMPTY
    _seq = _LEAF_SEQ  # torch runs these as soon as they are ready
    _num_outputs = 1
    _out_meta = None

    def __init__(self, variable):
        self._meta = ((variable._data.shape, variable._dtype),)
        self._tensor_hooks = None
        self._pre_hooks = None
        self._post_hooks = None
        self.variable = variable

    def apply(self, grads):
        return self.accumulate(grads[0], owned=False)

    def accumulate(self, g, owned):
        """Add g into `.grad`. A first gradient is copied unless the engine says it `owned`
        the array (no one else can see it); a differentiable one (create_graph) is kept. A leaf
        that stopped requiring grad after the graph was recorded gets nothing, as in torch."""
        var = self.variable
        if not var._requires_grad:
            return _EMPTY
        if var.grad is None:
            if owned or g._requires_grad:
                var.grad = g
            elif _levels.active:  # a batched gradient or one with tangents: copied as a tensor
                var.grad = g.clone()
            else:
                var.grad = Tensor._make(g._data.copy(), device=g._device)
        elif g._requires_grad or var.grad._requires_grad or _levels.active:
            var.grad = var.grad + g  # create_graph (or a transform): keep the sum an op
        else:
            try:
                var.grad._data += g._data
            except RuntimeWarning:  # inf + -inf with warnings as errors: the sum is done
                pass
        if var._post_acc_hooks:
            for hook in tuple(var._post_acc_hooks.values()):
                hook(var)
        return _EMPTY


class _Accumulate:
    """Stands in for an Op on AccumulateGrad nodes (only the name is read)."""

    name = "accumulate_grad"
    node_name = "AccumulateGrad"
    saves = ()
    saves_tensors = False
    edges = None


_ACCUMULATE = AccumulateGrad.op = _Accumulate()


def accumulator(t):
    """The (cached) AccumulateGrad node of leaf `t`. The tensor holds it weakly, the node holds
    the tensor strongly: the graph keeps its leaves alive, not the other way round."""
    ref = t._grad_acc
    node = ref() if ref is not None else None
    if node is None:  # (not the class call, whose slow path costs ~0.5k instructions)
        node = _new(AccumulateGrad)
        AccumulateGrad.__init__(node, t)
        t._grad_acc = _weak(node)
    return node


def resolve_leaves(node):
    """`node`'s edges with each leaf tensor `_edges` put there replaced by the leaf's
    AccumulateGrad node (made if none is alive); stored back, and returned."""
    edges = []
    for edge in node._next:
        x = edge[0]
        edges.append((accumulator(x), 0) if isinstance(x, Tensor) else edge)
    node._next = edges = tuple(edges)
    node._lazy_leaves = False
    return edges


def edge_of(t):
    """Where a gradient for tensor `t` must go: (node, output_nr)."""
    fn = t.grad_fn
    if fn is None:
        return (accumulator(t), 0)
    return (fn, t._output_nr)


# ----------------------------------------------------------------------------------------------
# saving values for backward


def save_tensor(t):
    """What a node keeps of tensor `t` for backward: (t, its version now), so that `unpack_saved`
    can tell whether `t` was modified in place since; inside `saved_tensors_hooks`, the packed
    value instead.
    """
    if _saved_hooks:
        return _pack(t)
    return (t, t._vc.value)


def save_output(t, name_current_history=True):
    """Not the Tensor itself: it points at the node, and the node must not point back. A weak
    reference lets a version error name the tensor's current history, as torch does for ops
    (for custom Functions torch names the Function: name_current_history=False)."""
    if type(t) is not Tensor:  # a vmap's BatchedTensor: its `_data` is one sample's view
        return save_tensor(t)
    if _saved_hooks:
        return _pack(t)
    ref = weakref.ref(t) if name_current_history else None
    vc = t._vc
    return (t._data, vc, vc.value, t._output_nr, t._device, ref)


def resave_outputs(node, outputs):
    """Keep `node`'s saved outputs as the tensors themselves (a reference cycle the garbage
    collector breaks): forward-mode AD attached tangents to them after the node saved them,
    and a backward pass under that level must see the tangents."""
    if node._saved:
        for i, (kind, _) in enumerate(node.op.saves):
            if kind == "out":
                node._saved[i] = tuple(save_tensor(t) for t in outputs)
            elif kind == "workspace":
                node._saved[i] = tuple(save_tensor(t) for t in outputs[1:])


def unpack_saved(value, node):
    """The tensor (or Python scalar) that `node` saved as `value`, given back for its rule.

    Raises torch's "modified by an inplace operation" RuntimeError if the tensor's version moved
    since it was saved. A saved floating output comes back with its history (`node` as its
    grad_fn); a value packed by a saved-tensor hook is unpacked by that hook.
    """
    if type(value) is not tuple:
        if type(value) is _Packed:
            return value.unpack(value.packed)
        return value  # a Python scalar operand
    if len(value) == 2:
        t, version = value
        if t._vc.value != version:
            _raise_modified(t, t._vc, version, t._grad_fn, t._output_nr, node)
        return t
    data, vc, version, output_nr, device, ref = value
    if vc.value != version:
        current = ref() if ref is not None else None
        producer = node if current is None else current._grad_fn
        _raise_modified(Tensor._make(data, device=device), vc, version, producer, output_nr,
                        node)
    t = Tensor._make(data, device=device)
    if t._dtype.category == FLOATING:  # as recorded: integer outputs (indices) have no history
        t._requires_grad, t._grad_fn, t._output_nr = True, node, output_nr
    t._vc = vc
    return t


# ----------------------------------------------------------------------------------------------
# saved-tensor hooks: what a node keeps is pack(tensor), and unpack(kept) gives it back

_saved_hooks = []  # (pack, unpack) pairs; the innermost (last) one applies, as in torch
_hooks_disabled = []  # error messages of enclosing disable_saved_tensors_hooks blocks


class _Packed:
    """A saved value packed by a hook: `unpack(packed)` returns the tensor on use."""
    __slots__ = ("packed", "unpack")

    def __init__(self, packed, unpack):
        self.packed = packed
        self.unpack = unpack


def _pack(t):
    pack, unpack = _saved_hooks[-1]
    return _Packed(pack(t), unpack)


class saved_tensors_hooks:
    """Inside this block every tensor an op saves for backward is stored as `pack_hook(t)`,
    and `unpack_hook(stored)` must return it (or an equal tensor) when backward needs it --
    e.g. to keep it elsewhere, or not at all and recompute it (utils/checkpoint.py)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _hooks_disabled:
            raise RuntimeError(_hooks_disabled[-1])
        _saved_hooks.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _saved_hooks.pop()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the host and moved back to their device in backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return t.device, t.detach().cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """A block in which registering saved-tensor hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _hooks_disabled.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _hooks_disabled.pop()
        return False


def _raise_modified(t, vc, expected, producer, output_nr, saver):
    """Saved tensor `t` (version counter `vc`, made by `producer`) was written in place after
    node `saver` saved it. torch 2.x names the producer by its op: `Mul`, not `MulBackward0`."""
    from .._dtype import scalar_name

    op_name = producer.name().rsplit("Backward", 1)[0] if producer is not None else ""
    made_by = f", which is output {output_nr} of {op_name}," if producer is not None else ""
    message = (f"one of the variables needed for gradient computation has been modified by an "
               f"inplace operation: [ember.{scalar_name(t._dtype)}Tensor {list(t._data.shape)}]"
               f"{made_by} is at version {vc.value}; expected version {expected} instead. Hint: "
               "enable anomaly detection to find the operation that failed to compute its "
               "gradient, with torch.autograd.set_detect_anomaly(True).")
    raise RuntimeError(_anomaly.explain_inplace(message, vc, expected, saver))


class _Unwritten:
    """The version counter of a tensor that has none yet (`_counter` None): it was never
    written in place, and `Tensor._vc` starts the counter it makes at 0."""
    value = 0


_UNWRITTEN = _Unwritten()


def _save(op, args, attrs, outputs):
    saved = []
    for kind, detail in op.saves:
        if kind == "input":
            x = args[detail]
            if isinstance(x, Tensor):  # save_tensor, inlined: the most common saved value
                if _saved_hooks:
                    x = _pack(x)
                else:
                    try:  # the counter's slot, not the `_vc` property: ~0.6k instructions less
                        x = (x, (x._counter or _UNWRITTEN).value)
                    except AttributeError:  # a tensor not made by `_make`: the slot is unset
                        x = (x, x._vc.value)
            saved.append(x)
        elif kind == "attr":
            saved.append(attrs[detail] if detail in attrs else op.attr_defaults[detail])
        elif kind == "needs_input_grad":
            if len(args) == 2:  # binary ops (mul, sub, div, ...): one of four tuples, none made
                saved.append(_NEEDS_TWO[isinstance(args[0], Tensor) and args[0]._requires_grad]
                             [isinstance(args[1], Tensor) and args[1]._requires_grad])
            else:
                saved.append(tuple([isinstance(x, Tensor) and x._requires_grad for x in args]))
        elif kind == "out":
            saved.append(tuple(save_output(t) for t in outputs))
        elif kind == "workspace":  # outputs after the first, which the public function hides
            saved.append(tuple(save_output(t) for t in outputs[1:]))
        elif kind == "shape":
            x = args[detail]
            saved.append(x._data.shape if isinstance(x, Tensor) else ())
        elif kind == "dtype":
            x = args[detail]
            saved.append(x._dtype if isinstance(x, Tensor) else None)
        elif kind == "inputs":
            saved.append(tuple(save_tensor(x) if isinstance(x, Tensor) else x for x in args))
        else:  # shapes
            saved.append(tuple(x._data.shape if isinstance(x, Tensor) else () for x in args))
    return saved


# What a node keeps of each kind of rule parameter, as a Python expression over the op's
# inputs x0, x1, ..., whether each is a tensor (t0, t1, ...) and wants a gradient (w0, ...),
# `attrs` and `outputs`: the same values `_save` computes.
_SAVED_AS = {
    "input": "((x{0}, (x{0}._counter or _UNWRITTEN).value) if t{0} else x{0})",
    "attr": "(attrs[{0!r}] if {0!r} in attrs else defaults[{0!r}])",
    "shape": "(x{0}._data.shape if t{0} else ())",
    "dtype": "(x{0}._dtype if t{0} else None)",
    "out": "tuple(map(save_output, {outputs}))",
    "workspace": "tuple(map(save_output, {outputs}[1:]))",
}


def _compilable(op):
    """Whether `op`'s records can be written out for a fixed list of inputs: not variadic, no
    input with a default (an op called with fewer args), no kind over all inputs at once."""
    names = op.input_names
    inputs = list(inspect.signature(op.kernel).parameters.values())[1:len(names) + 1]
    return not (op.variadic or any(p.default is not p.empty for p in inputs) or
                any(kind in ("inputs", "shapes") for kind, _ in op.saves))


def _saved_list(op, outputs):
    """The source of the list a node of `op` saves, as `_save` builds it (see `_SAVED_AS`),
    given the source of its outputs' tuple."""
    values = []
    for kind, detail in op.saves:
        if kind == "needs_input_grad":
            wants = [f"w{i}" for i in range(len(op.input_names))]
            values.append(f"_NEEDS_TWO[{wants[0]}][{wants[1]}]" if len(wants) == 2 else
                          f"({', '.join(wants)},)")
        else:
            values.append(_SAVED_AS[kind].format(detail, outputs=outputs))
    return f"[{', '.join(values)}]"


def _compile(op_name, name, source, **scope):
    """`source`, which defines `name`, run with this module's globals (so that it sees
    `_saved_hooks` and anomaly mode as they are at each call) and `scope` as closure values."""
    factory = (f"def make({', '.join(scope)}):\n" + "".join(
        f"    {line}\n" for line in source.splitlines()) + f"    return {name}\n")
    namespace = {}
    exec(compile(factory, f"<{name} of {op_name}>", "exec"), globals(), namespace)
    return namespace["make"](**scope)


def compile_saver(op):
    """`_save` for `op`, written out as one function of (args, attrs, outputs) and cached on
    the op, for ops with several outputs (`compile_recorder` writes the saves of the others
    into their recorder): `_save` walks the op's save list and branches on each kind at every
    record; this builds the list in one expression (callgrind, with the call: a mul's saves
    5.8k -> 3.6k instructions). For an op of inputs (x, y) it is

        def save(args, attrs, outputs):
            x0, x1 = args
            t0 = isinstance(x0, Tensor)
            ...
            try:
                return [<a value per rule parameter, from _SAVED_AS>]
            except AttributeError:  # a tensor not made by `Tensor._make` (no counter slot)
                return _save(op, args, attrs, outputs)

    Ops `_compilable` rejects keep `_save` itself. Saved-tensor hooks (`_pack`) are `_save`'s
    work too: the caller picks."""
    if not _compilable(op):
        op.saver = lambda args, attrs, outputs: _save(op, args, attrs, outputs)
        return op.saver
    n = len(op.input_names)
    lines = ["def save(args, attrs, outputs):"] + _unpacked_inputs(n)
    if any(kind == "needs_input_grad" for kind, _ in op.saves):
        lines += [f"    w{i} = t{i} and x{i}._requires_grad" for i in range(n)]
    lines += ["    try:",
              f"        return {_saved_list(op, 'outputs')}",
              "    except AttributeError:",
              "        return _save(op, args, attrs, outputs)"]
    op.saver = _compile(op.name, "save", "\n".join(lines), op=op, defaults=op.attr_defaults)
    return op.saver


def _unpacked_inputs(n):
    """Source lines that name a record's n inputs x0, x1, ... and whether each is a tensor
    (t0, t1, ...), as `_SAVED_AS` and `_EDGE_OF_INPUT` read them."""
    if not n:
        return []
    return [f"    {''.join(f'x{i}, ' for i in range(n))}= args"] + \
        [f"    t{i} = isinstance(x{i}, Tensor)" for i in range(n)]


# ----------------------------------------------------------------------------------------------
# recording


def record(op, args, attrs, outputs, multi=False):
    """Attach a new node for `op` to its floating-point outputs. `multi`: the kernel returned a
    tuple, so the rule gets `g` (and `out`) as tuples, even of one element. A single output
    goes to the op's recorder (`compile_recorder`), which dispatch also calls directly."""
    if not multi:
        return (op.recorder or compile_recorder(op))(args, attrs, outputs[0])
    edges, meta, lazy = _edges(op, args)
    out_meta = tuple((t._data.shape, t._dtype) for t in outputs)
    for i, t in enumerate(outputs):
        t._output_nr = i  # before _save: a saved output must remember which output it is
    node = _new(op.node_type or node_type(op))
    saved = _save(op, args, attrs, outputs) if _saved_hooks else \
        (op.saver or compile_saver(op))(args, attrs, outputs)
    Node.__init__(node, op, edges, meta, saved, len(outputs), out_meta)
    node._lazy_leaves = lazy
    for t in outputs:
        if t._dtype.category >= FLOATING:
            t._grad_fn = node
            t._requires_grad = True
    return node


# How a recorder finds input i's edge, its (shape, dtype), and whether it wants a gradient
# (`_edges` does the same in a loop, and explains the leaf case).
_EDGE_OF_INPUT = """\
if t{0} and x{0}._requires_grad:
    w{0} = True
    fn = x{0}._grad_fn if x{0}._base is None else x{0}.grad_fn
    if fn is not None:
        e{0} = (fn, x{0}._output_nr)
    else:
        ref = x{0}._grad_acc
        fn = ref() if ref is not None else None
        if fn is None:
            fn = x{0}
            lazy = True
        e{0} = (fn, 0)
    m{0} = (x{0}._data.shape, x{0}._dtype)
else:
    w{0} = False
    e{0} = _NO_EDGE
    m{0} = None
"""

# The node's slots, set directly (see `compile_recorder`), from its edges, meta and saves.
_NODE_SLOTS = """\
node = _new(node_class)
node.op = op
node._next = {edges}
node._lazy_leaves = lazy
node._meta = {meta}
node._saved = saved
node._seq = next(_sequence)
node._num_outputs = 1
node._out_meta = node._tensor_hooks = node._pre_hooks = node._post_hooks = None
if _anomaly.enabled:
    _anomaly.remember_forward(node)
if out._dtype.category >= FLOATING:  # floating or complex: differentiable
    out._grad_fn = node
    out._requires_grad = True
return node
"""


def compile_recorder(op):
    """The function `recorder(args, attrs, out)` that records a node of `op` for its one
    output `out`, written out for the op's inputs and cached on the op (`op.recorder`).

    It does in one function, with no loops, what `_edges` and the saver do: for a mul,
    the edges, the inputs' (shape, dtype), the saved inputs with their versions and which
    inputs want a gradient, each input's type checked once. The node is allocated with
    object.__new__ and its slots set directly, not by calling the class (the interpreter's
    slow path for `type.__call__`) nor `Node.__init__` (one Python call more). A mul of
    two leaves: 14.3k -> 10.9k instructions (callgrind, issue 22). For the inputs (x, y):

        def recorder(args, attrs, out):
            x0, x1 = args                  # `_unpacked_inputs`
            t0 = isinstance(x0, Tensor)
            t1 = ...
            lazy = False
            if t0 and x0._requires_grad:   # `_EDGE_OF_INPUT`: e0, m0, w0
                ...
            if _saved_hooks: saved = _save(op, args, attrs, (out,))   # the hooks pack
            else: saved = [<the values of _SAVED_AS>]
            node = _new(node_class)        # `_NODE_SLOTS`
            ...

    Ops `_compilable` rejects get `_generic_recorder`'s."""
    if not _compilable(op):
        op.recorder = _generic_recorder(op)
        return op.recorder
    n = len(op.input_names)
    edges = range(n) if op.edges is None else op.edges
    lines = ["def recorder(args, attrs, out):"] + _unpacked_inputs(n)
    if op.edges is not None:  # the others must not want a gradient
        lines.append("    _check_no_edges(op, args)")
        lines += [f"    w{i} = False" for i in op.no_edges]
    lines.append("    lazy = False")
    for i in edges:
        lines += ["    " + line for line in _EDGE_OF_INPUT.format(i).splitlines()]
    if not op.saves:
        lines.append("    saved = _EMPTY")
    else:
        lines += ["    if _saved_hooks:  # each saved tensor packed by the hook",
                  "        saved = _save(op, args, attrs, (out,))",
                  "    else:",
                  "        try:",
                  f"            saved = {_saved_list(op, '(out,)')}",
                  "        except AttributeError:  # a tensor not made by `_make`: no counter",
                  "            saved = _save(op, args, attrs, (out,))"]
    slots = _NODE_SLOTS.format(edges="(" + "".join(f"e{i}, " for i in edges) + ")",
                               meta="[" + ", ".join(f"m{i}" for i in edges) + "]")
    lines += ["    " + line for line in slots.splitlines()]
    op.recorder = _compile(op.name, "recorder", "\n".join(lines), op=op,
                           node_class=op.node_type or node_type(op), defaults=op.attr_defaults)
    return op.recorder


def _generic_recorder(op):
    """A recorder for any op (variadic ones, inputs with defaults): the edges from `_edges`'
    loop over the inputs, the saves from `_save`'s walk over the op's save list."""
    lines = ["def recorder(args, attrs, out):",
             "    edges, meta, lazy = _edges(op, args)",
             "    saved = _save(op, args, attrs, (out,)) if op.saves else _EMPTY"]
    slots = _NODE_SLOTS.format(edges="edges", meta="meta")
    lines += ["    " + line for line in slots.splitlines()]
    return _compile(op.name, "recorder", "\n".join(lines), op=op,
                    node_class=op.node_type or node_type(op))


def _edges(op, args):
    """The node's edges (one (node, output_nr) per input with an edge), per input (shape,
    dtype) or None where the input wants no gradient, and whether an edge holds a leaf.

    A leaf's edge is its AccumulateGrad node when one is alive (a graph still uses it), else
    the leaf tensor itself, which `Node.next_functions` swaps for the node on first read (the
    engine's walk): a forward pass whose graph is dropped unused -- evaluation with grad on,
    the tiny-op loop of issue 22 -- makes and frees no AccumulateGrad node per leaf and
    iteration (~3.5k instructions an op of that loop, callgrind)."""
    edges = []
    meta = []
    lazy = False
    if op.edges is not None:
        _check_no_edges(op, args)
        args = [args[i] for i in op.edges]
    for x in args:
        if isinstance(x, Tensor) and x._requires_grad:
            fn = x._grad_fn if x._base is None else x.grad_fn  # a view may re-derive its node
            if fn is not None:
                edges.append((fn, x._output_nr))
            else:  # a leaf
                ref = x._grad_acc
                fn = ref() if ref is not None else None
                if fn is None:
                    fn = x
                    lazy = True
                edges.append((fn, 0))
            meta.append((x._data.shape, x._dtype))
        else:
            edges.append(_NO_EDGE)
            meta.append(None)
    return tuple(edges), meta, lazy


_NO_EDGE = (None, 0)
_NEEDS_TWO = (((False, False), (False, True)), ((True, False), (True, True)))  # [a][b]


def _check_no_edges(op, args):
    for i in op.no_edges:
        x = args[i]
        if isinstance(x, Tensor) and x._requires_grad:
            raise RuntimeError(f"The function '{op.name}' is not differentiable with respect to "
                               f"argument '{op.input_names[i]}'. This input cannot have "
                               "requires_grad True.")


def rebase_inplace(op, self, old_data, args, attrs):
    """`self` was just overwritten by `op(self, *args)`: give it (and its base) the new history.

    `old_data` is a copy of self's values before the write, when the rule needs them."""
    old = Tensor._make(self._data if old_data is None else old_data, device=self._device)
    old._requires_grad = self._requires_grad
    old._grad_fn = self.grad_fn
    old._output_nr = self._output_nr
    if old._requires_grad and old._grad_fn is None:
        old._grad_acc = self._grad_acc
    if self._base is None or self._view_fn is None:
        record(op, (old,) + args, attrs, (self,))
        if self._base is not None:
            self._view_of_fn = self._base._grad_fn
        return
    if self._dtype.category >= FLOATING:
        _rebase_view(op, self, old, args, attrs)


def _rebase_view(op, view, old, args, attrs):
    """In-place on a view: the base's new node is CopySlices(old base, new view values)."""
    values = Tensor._make(view._data, device=view._device)  # the view's new contents
    values._vc = view._vc
    record(op, (old,) + args, attrs, (values,))
    base = view._base
    base_edge = edge_of(base) if base._requires_grad else (None, 0)
    copy = CopySlices(base_edge, (values._grad_fn, 0), view._view_fn,
                      (base._data.shape, base._dtype), (view._data.shape, view._dtype))
    base._grad_fn = copy
    base._output_nr = 0
    base._requires_grad = True
    _replay_view(view, copy)


def _replay_view(view, base_fn):
    base = view._base
    view._grad_fn = ViewReplay((base_fn, 0), view._view_fn, (base._data.shape, base._dtype),
                               (view._data.shape, view._dtype))
    view._output_nr = 0
    view._requires_grad = True
    view._view_of_fn = base_fn


def regenerate_view_grad_fn(view):
    """The base of `view` got a new history (an in-place op through another view, or on the base
    itself): re-derive the view from the base's current node."""
    base = view._base
    if base._grad_fn is not None:
        _replay_view(view, base._grad_fn)
    else:
        view._view_of_fn = None


class ViewFn:
    """Rebuilds a view from its base by re-running the view ops that made it (torch's view_fn)."""

    __slots__ = ("op", "attrs", "parent", "index", "num_outputs")

    def __init__(self, op, attrs, parent, index, num_outputs):
        self.op = op
        self.attrs = attrs
        self.parent = parent
        self.index = index
        self.num_outputs = num_outputs

    def __call__(self, base):
        source = base if self.parent is None else self.parent(base)
        out = self.op(source, **self.attrs)
        return out if self.num_outputs == 1 else out[self.index]


class _Named:
    """An op-like record for nodes that are not ops (only the name and save list are read)."""

    def __init__(self, node_name):
        self.name = node_name
        self.node_name = node_name
        self.saves = ()
        self.saves_tensors = False
        self.edges = None


class CopySlices(Node):
    """The base after an in-place op on one of its views.

    backward: the view's region of g goes to the new values; the rest of g goes to the old base.
    """

    __slots__ = ("view_fn",)
    _op = _Named("CopySlices")

    def __init__(self, base_edge, values_edge, view_fn, base_meta, values_meta):
        super().__init__(self._op, (base_edge, values_edge), [base_meta, values_meta], _EMPTY,
                         1)
        self.view_fn = view_fn

    def apply(self, grads):
        g = grads[0]
        to_base = g.clone()
        self.view_fn(to_base).zero_()
        return to_base, self.view_fn(g)


class ViewReplay(Node):
    """A view re-derived from its base's current history (torch's AsStridedBackward0).

    backward: a zero gradient of the base's shape with g written into the view's region."""

    __slots__ = ("view_fn", "base_meta")
    _op = _Named("AsStridedBackward0")

    def __init__(self, base_edge, view_fn, base_meta, view_meta):
        super().__init__(self._op, (base_edge,), [base_meta], _EMPTY, 1)
        self.view_fn = view_fn
        self.base_meta = base_meta

    def apply(self, grads):
        shape, dtype = self.base_meta
        g = grads[0]
        to_base = g.new_zeros(shape, dtype=dtype)
        self.view_fn(to_base).copy_(g)
        return (to_base,)


# users print type(grad_fn).__name__: torch's name for this node
ViewReplay.__name__ = ViewReplay.__qualname__ = "AsStridedBackward0"


# ----------------------------------------------------------------------------------------------
# tensor hooks


def register_tensor_hook(t, hook):
    """Register `hook(grad)` to run on the gradient computed for `t` (`Tensor.register_hook`); a
    non-leaf's hooks live on its grad_fn, per output. Returns a handle whose `remove()` undoes
    it.
    """
    if t.grad_fn is None:
        if t._hooks is None:
            t._hooks = {}
        return RemovableHandle(t._hooks, hook)
    node = t.grad_fn
    if node._tensor_hooks is None:
        node._tensor_hooks = {}
    hooks = node._tensor_hooks.setdefault(t._output_nr, {})
    return RemovableHandle(hooks, hook)


def add_retain_grad_hook(t):
    """Store the gradient on non-leaf `t` when it is computed (after the user's hooks)."""
    ref = weakref.ref(t)

    def retain(grad):
        target = ref()
        if target is None:
            return None
        if target.grad is None:
            target.grad = grad if grad._requires_grad else grad.detach().clone()
        else:
            target.grad = target.grad + grad
        return None

    retain._is_retain_grad = True
    register_tensor_hook(t, retain)


# anomaly mode is imported last: it reads Node from this module
from . import anomaly_mode as _anomaly  # noqa: E402
from ._graph_view import draw, track_modules  # noqa: E402,F401  (tools: graph drawing)

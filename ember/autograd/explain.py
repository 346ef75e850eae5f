"""`explain()`: a record of every step of a backward pass, in words, and a check of each step.

    with ember.autograd.explain() as trace:
        loss.backward()
    print(trace.table())     # one row per node, in the order the engine ran them
    trace.check()            # each recorded rule against finite differences, in float64

A row says which node ran, the gradient it received (shape and norm), the rule it applied in
words -- read from the op's rule in the source: `MulBackward0: grad_a = g * b, grad_b = g * a`
-- and the gradients it sent to its inputs (summed to each input's shape, as the engine does).

`check()` re-runs each op's kernel in float64 on the inputs the node kept and compares the
rule's answer with central differences along a random direction:

    <rule(g), v>  ==  ( <g, f(x + eps v)> - <g, f(x - eps v)> ) / (2 eps)

A node can be checked when all its op's inputs and attributes are known: either its rule
saved them (`mul` keeps a and b; `tanh` keeps only its output, so it cannot be re-run), or
the forward pass also ran inside the `explain()` block, which then remembers every op's
inputs. Other nodes are listed with the reason they were not checked.

Read next: `ember/profiler/profiler.py`, which times the same steps.
"""
import ast
import inspect
import weakref

import numpy as np

from . import _instrument
from .graph import AccumulateGrad, is_op_node

__all__ = ["explain", "rule_text"]


class explain:
    """Context manager recording each backward step run inside it (see the module docstring).

    params: {name: tensor} (e.g. dict(model.named_parameters())) to name the leaves."""

    def __init__(self, params=None):
        self.steps = []
        self._names = {id(t): name for name, t in (params or {}).items()}
        self._forward = weakref.WeakKeyDictionary()  # node -> (inputs, attrs) seen in forward

    def __enter__(self):
        _instrument.listen(self)
        return self

    def __exit__(self, *exc):
        _instrument.unlisten(self)
        return False

    # listener methods (see _instrument.py)

    def on_op(self, op, args, attrs, outputs, inplace, start, end, seq):
        """Listener callback (see `ember.autograd._instrument`): called after each op runs while
        this is active, with the op, its arguments and outputs and the `perf_counter_ns` times
        around it. Remembers the inputs of each new node for the report."""
        node = outputs[0]._grad_fn if outputs else None
        if inplace:
            node = _inplace_node(node, op)
            if node is not None:
                self._forward[node] = _INPLACE  # its input is gone: overwritten
        elif node is not None and node.op is op:
            self._forward[node] = (tuple(_keep(x) for x in args), dict(attrs))

    def on_node(self, node, grads, in_grads, start, end, seq):
        """Listener callback (see `ember.autograd._instrument`): called after each backward node's
        rule runs while this is active. Records the gradients the node received and passed on, one
        step of the report."""
        if type(in_grads) is not tuple:
            in_grads = tuple(in_grads) if isinstance(in_grads, list) else (in_grads,)
        name = node.name()
        if type(node) is AccumulateGrad:
            leaf = self._names.get(id(node.variable))
            name = f"{name} ({leaf})" if leaf else name
        outgoing = []
        for i, g in enumerate(in_grads):
            meta = node._meta[i] if i < len(node._meta) else None
            outgoing.append(None if g is None else _summary(g, meta[0] if meta else None))
        self.steps.append(Step(len(self.steps) + 1, name, node.metadata.get("module"),
                               [None if g is None else _summary(g) for g in grads],
                               _rule_of(node), outgoing, node, node._saved,
                               self._forward.get(node)))

    # reports

    def table(self, max_rule=70):
        """The steps as a text table (also what `print(trace)` shows)."""
        rows = [("#", "node", "grad in", "rule", "grad out")]
        for s in self.steps:
            rule = s.rule if len(s.rule) <= max_rule else s.rule[:max_rule - 3] + "..."
            rows.append((str(s.index), s.name + (f" @{s.module}" if s.module else ""),
                         _grads_text(s.grads_in), rule, _grads_text(s.grads_out)))
        return _format_table(rows)

    def __str__(self):
        return self.table()

    def check(self, eps=1e-6, tol=1e-5, seed=0):
        """Verify each recorded op rule with finite differences in float64.

        Returns a CheckReport: {"<step> <node name>": max relative error} for the nodes that
        could be checked; `.unchecked` says why the others were not, `.failed` lists the
        entries whose error exceeds `tol`."""
        rng = np.random.default_rng(seed)
        report = CheckReport(tol)
        for s in self.steps:
            label = f"{s.index} {s.name}"
            inputs, reason = _inputs_of(s)
            if inputs is None:
                report.unchecked[label] = reason
                continue
            # outputs that received no gradient (an auxiliary output, or one nobody used) get
            # a zero cotangent: the rule is checked for the gradients that actually flowed
            flowed = [g is not None and g[1] != 0 for g in s.grads_in]
            try:
                report[label] = check_rule(s.node.op, *inputs, eps=eps, rng=rng,
                                           outputs=flowed)
            except _Unchecked as e:
                report.unchecked[label] = str(e)
        return report


class Step:
    """One node run by the engine: what came in, the rule, what went out."""

    __slots__ = ("index", "name", "module", "grads_in", "rule", "grads_out", "node", "saved",
                 "forward")

    def __init__(self, index, name, module, grads_in, rule, grads_out, node, saved, forward):
        self.index = index
        self.name = name
        self.module = module
        self.grads_in = grads_in     # [(shape, norm) or None] per output of the node
        self.rule = rule
        self.grads_out = grads_out   # [(shape, norm) or None] per input, summed to its shape
        self.node = node
        self.saved = saved           # the node's saved values (kept past their release)
        self.forward = forward       # (inputs, attrs) if the forward ran inside explain()

    def __repr__(self):
        return f"<Step {self.index} {self.name}: {self.rule}>"


class CheckReport(dict):
    """{step label: max relative error}, plus `.unchecked` {label: reason} and `.failed`."""

    def __init__(self, tol):
        super().__init__()
        self.tol = tol
        self.unchecked = {}

    @property
    def failed(self):
        return [label for label, err in self.items() if not err <= self.tol]

    @property
    def ok(self):
        return not self.failed

    def __str__(self):
        rows = [("node", "max error", "")]
        for label, err in self.items():
            rows.append((label, f"{err:.2e}", "WRONG" if not err <= self.tol else "ok"))
        for label, reason in self.unchecked.items():
            rows.append((label, "-", f"not checked: {reason}"))
        return _format_table(rows)


# ----------------------------------------------------------------------------------------------
# summaries


_INPLACE = "in-place"


def _inplace_node(node, op):
    """The node an in-place op recorded: the target's own, or when the target is a view, the
    one behind its CopySlices (view node -> CopySlices -> op node; see graph.py)."""
    if node is not None and node.op is not op:
        copy = node.next_functions[0][0] if node.next_functions else None
        edges = copy.next_functions if copy is not None else ()
        node = edges[1][0] if len(edges) > 1 else None
    return node if node is not None and node.op is op else None


def _keep(x):
    """An op input as explain() remembers it: tensors with the version they had."""
    from .._tensor import Tensor

    return (x, x._vc.value) if isinstance(x, Tensor) else x


def _summary(g, shape=None):
    """(shape, norm) of a gradient; with `shape`, of the gradient summed down to that shape
    (what the input receives when the rule's result is broadcast)."""
    data = g._data
    if shape is not None and tuple(data.shape) != tuple(shape):
        data = _sum_to(data, tuple(shape))
    if data.dtype.kind in "fc":
        norm = float((abs(data).astype("float64") ** 2).sum() ** 0.5)
    else:
        norm = float("nan")
    return tuple(data.shape), norm


def _sum_to(array, shape):
    lead = array.ndim - len(shape)
    if lead:
        array = array.sum(axis=tuple(range(lead)))
    dims = tuple(i for i, n in enumerate(shape) if n == 1 and array.shape[i] != 1)
    return array.sum(axis=dims, keepdims=True) if dims else array


def _grads_text(grads):
    parts = []
    for g in grads:
        if g is None:
            parts.append("-")
        else:
            shape, norm = g
            parts.append(f"[{', '.join(map(str, shape))}] |{norm:.4g}|")
    return ", ".join(parts)


def _format_table(rows):
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# rules in words


_words = {}  # rule function -> text


def _rule_of(node):
    if type(node) is AccumulateGrad:
        return "leaf.grad += g"
    op = node.op
    rule = getattr(op, "rule", None)
    if not is_op_node(node) or rule is None:
        return _special(node)
    return f"{node.name()}: {rule_text(op)}"


def _special(node):
    name = node.name()
    if name == "CopySlices":
        return "CopySlices: grad_base = g with the view's region zeroed, grad_values = g[view]"
    if name == "AsStridedBackward0":
        return "AsStridedBackward0: grad_base = zeros(base) with g written into the view"
    cls = getattr(node, "_forward_cls", None)
    if cls is not None:
        return f"{name}: {cls.__qualname__}.backward (a custom Function)"
    return name


def rule_text(op):
    """The rule of `op` in words, read from its source: "grad_a = g * b, grad_b = g * a"."""
    rule = op.rule
    text = _words.get(rule)
    if text is None:
        try:
            text = _words[rule] = _read_rule(op)
        except (OSError, TypeError, SyntaxError, ValueError):
            text = _words[rule] = f"{rule.__qualname__} (source not available)"
    return text


def _read_rule(op):
    rule = op.rule
    tree = _parsed(inspect.getsourcefile(rule))
    fn = _find_function(tree, rule)
    if fn is None:
        return rule.__qualname__
    if isinstance(fn, ast.Lambda):
        result, cases = fn.body, 1
    else:
        returns = sorted((n for n in ast.walk(fn) if isinstance(n, ast.Return) and
                          n.value is not None), key=lambda n: n.lineno)
        if not returns:
            return rule.__qualname__
        result, cases = returns[-1].value, len(returns)
    grads = result.elts if isinstance(result, ast.Tuple) else [result]
    names = list(op.input_names)
    if len(grads) != len(names) or op.variadic:
        text = f"grads = {_unparse(result, fn)}"
    else:
        text = ", ".join(f"grad_{name} = {_unparse(g, fn)}" for name, g in zip(names, grads))
    if cases > 1:
        text += f" (and {cases - 1} special case{'s' if cases > 2 else ''} in "
        text += f"{rule.__qualname__})"
    return text


_trees = {}


def _parsed(path):
    tree = _trees.get(path)
    if tree is None:
        with open(path, encoding="utf-8") as f:
            tree = _trees[path] = ast.parse(f.read())
    return tree


def _find_function(tree, rule):
    """The lambda or def of `rule` in its module's syntax tree (by line and parameters)."""
    code = rule.__code__
    line = code.co_firstlineno
    params = list(code.co_varnames[:code.co_argcount])
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and node.lineno == line:
            if [a.arg for a in node.args.args] == params:
                return node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == rule.__name__:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if line in (first, node.lineno):
                return node
    return None


class _Inline(ast.NodeTransformer):
    """Readable expressions: a local assigned once is replaced by its value, `x if
    needs_input_grad[i] else None` by x, and `_helper(...)` loses its underscore."""

    def __init__(self, fn):
        self.values = {}
        if not isinstance(fn, ast.Lambda):
            found = {}
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign):
                    for target in n.targets:
                        if isinstance(target, ast.Name) and not _is_none(n.value):
                            found.setdefault(target.id, []).append(n.value)
            # short values only: a long one would bury the formula
            self.values = {k: v[0] for k, v in found.items()
                           if len(v) == 1 and len(ast.unparse(_unguarded(v[0]))) <= 80}
        self.depth = 0

    def visit_Name(self, node):
        value = self.values.get(node.id)
        if value is not None and self.depth < 1:
            self.depth += 1
            try:
                return self.visit(_copy(value))
            finally:
                self.depth -= 1
        return node

    def visit_IfExp(self, node):
        if _is_none(node.orelse):
            return self.visit(node.body)
        return self.generic_visit(node)

    def visit_Call(self, node):
        node.func = self.visit(node.func)
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            if k.arg is not None:  # `**attrs` stays a name
                k.value = self.visit(k.value)
        if isinstance(node.func, ast.Name) and node.func.id.startswith("_"):
            node.func = ast.Name(id=node.func.id.lstrip("_"), ctx=ast.Load())
        return node


def _unguarded(node):
    """`x if needs_input_grad[0] else None` -> x"""
    return node.body if isinstance(node, ast.IfExp) and _is_none(node.orelse) else node


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


def _is_none(node):
    return isinstance(node, ast.Constant) and node.value is None


def _unparse(expr, fn):
    return ast.unparse(_Inline(fn).visit(_copy(expr)))


# ----------------------------------------------------------------------------------------------
# checking


class _Unchecked(Exception):
    pass


def _inputs_of(step):
    """(args, attrs) to re-run the step's op, or (None, reason)."""
    node = step.node
    op = node.op
    if not is_op_node(node) or getattr(op, "kernel", None) is None or op.rule is None:
        return None, "not an op node (no kernel to re-run)"
    if step.forward is not None and step.forward is not _INPLACE:
        args, attrs = step.forward
        return (_current(args), attrs), None
    args, reason = _saved_inputs(step)
    if args is None and step.forward is _INPLACE:
        reason = "an in-place op whose rule does not keep the input it overwrote"
    return args, reason


def _saved_inputs(step):
    """The op's inputs and attributes as its rule saved them, or (None, reason)."""
    op = step.node.op
    saved = step.saved
    if saved is None:
        return None, "its saved values were freed before explain() saw it"
    by_kind = {(kind, detail): value for (kind, detail), value in zip(op.saves, saved)}
    if op.variadic:
        if ("inputs", None) not in by_kind:
            return None, "its rule does not keep its inputs; run the forward inside explain()"
        args = by_kind[("inputs", None)]
    else:
        missing = [n for i, n in enumerate(op.input_names) if ("input", i) not in by_kind]
        if missing:
            return None, (f"its rule does not keep {', '.join(missing)}; run the forward "
                          "inside explain()")
        args = tuple(by_kind[("input", i)] for i in range(len(op.input_names)))
    attrs = {}
    for name in op.attr_names:
        if ("attr", name) not in by_kind:
            return None, f"attribute {name} was not saved; run the forward inside explain()"
        attrs[name] = by_kind[("attr", name)]
    return (_current(args), attrs), None


def _current(args):
    """Remembered inputs as tensors, refusing ones modified in place since."""
    out = []
    for x in args:
        if type(x) is tuple and len(x) == 2:
            t, version = x
            if t._vc.value != version:
                return _Modified()
            out.append(t)
        else:
            out.append(x)
    return tuple(out)


class _Modified(tuple):
    """Marks inputs that changed in place after the op ran (they cannot be re-run)."""


def check_rule(op, args, attrs, eps=1e-6, rng=None, outputs=None):
    """Max relative error between `op.rule` and central differences of `op.kernel` at `args`
    (tensors and Python scalars), in float64, along one random direction per input.
    outputs: which outputs get a random cotangent (default all floating ones; others zero)."""
    from .._tensor import Tensor
    from .grad_mode import no_grad

    if isinstance(args, _Modified):
        raise _Unchecked("an input was modified in place after the op ran")
    rng = np.random.default_rng(0) if rng is None else rng
    xs = [_float64(x) for x in args]

    def forward(values):
        arrays = list(values)
        if op.writes:
            arrays[0] = arrays[0].copy()
        out = op.kernel(np, *arrays, **attrs)
        out = arrays[0] if op.writes else out
        return tuple(np.asarray(o) for o in (out if type(out) is tuple else (out,)))

    try:
        outs = forward(xs)
        again = forward(xs)
    except Exception as e:  # any failure means: this op cannot be re-run this way
        raise _Unchecked(f"the kernel failed in float64 ({type(e).__name__}: {e})") from None
    if any(not np.array_equal(a, b, equal_nan=True) for a, b in zip(outs, again)):
        raise _Unchecked("the op is random")
    wanted = outputs if outputs is not None else [True] * len(outs)
    gs = [rng.standard_normal(o.shape) if o.dtype.kind == "f" and want
          else np.zeros(o.shape, o.dtype) for o, want in zip(outs, wanted)]
    values = _rule_arguments(op, args, xs, outs, attrs)
    g = tuple(Tensor._make(x) for x in gs)
    with no_grad():
        grads = op.rule(g if len(g) > 1 else g[0], *values)
    if not isinstance(grads, (tuple, list)):
        grads = (grads,)

    def pairing(values):
        return sum(float((gi * o).sum()) for gi, o in zip(gs, forward(values))
                   if o.dtype.kind == "f")

    worst = 0.0
    for i, x in enumerate(xs):
        if not (isinstance(args[i], Tensor) and x.dtype.kind == "f"):
            continue
        if i >= len(grads) or grads[i] is None:
            raise _Unchecked(f"the rule gave no gradient for input {i}")
        v = rng.standard_normal(x.shape)
        plus, minus = list(xs), list(xs)
        plus[i], minus[i] = x + eps * v, x - eps * v
        numeric = (pairing(plus) - pairing(minus)) / (2 * eps)
        analytic = float((_sum_to(np.asarray(grads[i]._data, dtype=np.float64), x.shape)
                          * v).sum())
        worst = max(worst, abs(numeric - analytic) / max(1.0, abs(numeric), abs(analytic)))
    return worst


def _float64(x):
    from .._tensor import Tensor

    if isinstance(x, Tensor):
        data = np.asarray(x.cpu()._data) if x._device.type != "cpu" else x._data
        return data.astype(np.float64) if data.dtype.kind == "f" else data
    return x


def _rule_arguments(op, args, xs, outs, attrs):
    """What the rule asks for (see Op._save_spec), rebuilt from float64 values."""
    from .. import _dtype as dt
    from .._tensor import Tensor

    def tensor(a):
        return Tensor._make(a) if isinstance(a, np.ndarray) else a

    values = []
    for kind, detail in op.saves:
        if kind == "input":
            values.append(tensor(xs[detail]))
        elif kind == "inputs":
            values.append(tuple(tensor(x) for x in xs))
        elif kind == "out":
            out = tuple(tensor(o) for o in outs)
            values.append(out if len(out) > 1 else out[0])
        elif kind == "workspace":
            values.append(tuple(tensor(o) for o in outs[1:]))
        elif kind == "attr":
            values.append(attrs.get(detail, op.attr_defaults.get(detail)))
        elif kind == "shape":
            values.append(np.shape(xs[detail]))
        elif kind == "shapes":
            values.append(tuple(np.shape(x) for x in xs))
        elif kind == "dtype":
            x = args[detail]
            values.append(dt.float64 if getattr(x, "is_floating_point", lambda: False)()
                          else getattr(x, "dtype", None))
        else:  # needs_input_grad: ask for every floating gradient
            values.append(tuple(isinstance(a, Tensor) and a.is_floating_point() for a in args))
    return values

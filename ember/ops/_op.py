"""`Op`: one primitive, declared once -- a forward kernel on raw arrays beside its backward rule.

    defop("mul", "arith", lambda xp, a, b: a * b, lambda g, a, b: (g * b, g * a))

reads: name | promotion kind | kernel | rule (torch keeps the same pairing in derivatives.yaml).

* The **kernel** takes the array module `xp` (numpy or cupy), then the tensor inputs as raw arrays
  (positional; a `*args` parameter means "any number of tensors", as in `cat`), then attributes
  as keywords. It returns an array, or a tuple of arrays for multi-output ops.
* The **rule** takes the incoming gradient `g` first (a tuple of gradients for multi-output ops),
  then asks *by name* for what it needs; the graph node saves exactly that and nothing else:
    - an input's name (`a`, `b`, ...): the input tensor;  `out`: the result;
    - `workspace`: the results after the first, which the public function drops -- values
      the backward needs that only the forward computed (gelu's Phi(x)); saving them does not
      tie the backward to the visible result, so that may still be changed in place;
    - `a_shape`, `a_dtype`: an input's shape or dtype (cheap: the input itself is not kept alive);
    - `inputs`, `shapes`: all inputs / all input shapes (for variadic ops such as `cat`);
    - `needs_input_grad`: which inputs want a gradient (skip expensive unused work);
    - any kernel attribute by its keyword name (`dim`, `keepdim`, ...).
  It returns one gradient (or None) per tensor input, written with ember Tensor ops so that
  `create_graph=True` can differentiate it again. It never undoes broadcasting: the engine sums
  each gradient to its input's shape.
* The **forward-mode rule** (`@x.jvp`, or `jvp=` in the row) gives the output's tangent from
  the inputs' tangents, named by input with a `_t` suffix (`a_t`, `b_t`; `tangents` for a
  variadic op), each None when that input has no tangent; it may ask for the same saved names
  as the backward rule (`a`, `out`, attributes, ...). `jvp=LINEAR` says the op is linear in its
  floating tensor inputs, so the tangent is the op itself applied to the tangents;
  `jvp=ELEMENTWISE` that it is elementwise, so the tangent is its backward rule applied to the
  tangents; `jvp=MULTILINEAR` that it is a product, linear in each input on its own. An op
  without one gets its tangent from two backward passes (autograd/forward_ad.py), counted.
* The **batching rule** (`@x.batch`, or `batch=` in the row) runs the op under `vmap`:
  `rule(op, args, batched, attrs)` gets the inputs with every batched tensor's batch dim at the
  front (`batched[i]` says which), and returns the result(s) with the batch dim at the front
  (ember/_functorch/batch_rules.py has the shared ones). An op without one runs once per sample
  (ember/_functorch/vmap.py), counted.
* `grad_inputs=("x", ...)` names the inputs torch differentiates when some are not (class
  targets, indices, a number standing for torch's Scalar argument): the node's
  next_functions then list only those, as torch's do, and the others may not require grad.
* **Promotion kinds** (applied by dispatch, see `_dispatch.py`):
    same    the output has the input's dtype (no promotion)
    arith   torch's promotion over all inputs (Python scalars and 0-d tensors are weak)
    float   as arith, then integers/bools go to the default float dtype (exp, div, ...)
    compare as arith for the computation; the result is bool
    none    the kernel sees raw arrays as they are and picks its own output dtype

Read next: `_dispatch.py`, which runs an Op.
"""
import inspect
from types import MethodType

from ..autograd.forward_ad import ELEMENTWISE, LINEAR, MULTILINEAR

__all__ = ["Op", "defop", "op", "export", "run", "REGISTRY", "EXPORTS", "LINEAR",
           "ELEMENTWISE", "MULTILINEAR"]

PROMOTIONS = ("same", "arith", "float", "compare", "none")

REGISTRY = {}  # op name -> Op: every primitive, for the test table and tools
EXPORTS = {}   # public name -> (callable, as_function, as_method)


class Op:
    """A primitive: kernel + rule + how dispatch should treat it."""

    __slots__ = ("name", "promote", "kernel", "rule", "writes", "node_name", "input_names",
                 "variadic", "attr_names", "attr_defaults", "saves", "saves_tensors", "view",
                 "differentiable", "doc", "has_workspace", "moves", "jvp_rule", "jvp_needs",
                 "batch_rule", "node_type", "saver", "recorder", "edges", "no_edges")

    def __init__(self, name, promote, kernel, *, node_name=None, view=False,
                 differentiable=True, writes=False, moves=False, jvp=None, batch=None,
                 grad_inputs=None):
        if promote not in PROMOTIONS:
            raise ValueError(f"op {name}: unknown promotion kind {promote!r}")
        self.name = name
        self.promote = promote
        self.kernel = kernel
        self.rule = None
        self.saves = ()
        self.saves_tensors = False
        self.has_workspace = False
        self.node_name = node_name or _camel(name) + "Backward0"
        self.node_type = None  # the Node subclass of that name, made at the first record
        self.saver = None  # `saves` as a function, made at the first record (graph.py)
        self.recorder = None  # the op's record of one output, made at the first (graph.py)
        self.view = view  # the output is a view of input 0 (shares its memory and version)
        # a "writer": the kernel modifies input 0's array in place and returns None; called
        # out of place it gets a copy, in place (`x.index_add_(...)`) the tensor's own memory,
        # so `x[idx] = v` costs the elements written, not a copy of x
        self.writes = writes
        self.moves = moves  # the result lives on the `device` attribute's device (`to`)
        self.differentiable = differentiable
        self.doc = kernel.__doc__
        self.jvp_rule = None
        self.jvp_needs = ()
        self.batch_rule = batch
        self._read_kernel_signature()
        if jvp is not None:
            self.jvp(jvp)
        self._read_grad_inputs(grad_inputs)
        REGISTRY[name] = self

    def _read_kernel_signature(self):
        params = list(inspect.signature(self.kernel).parameters.values())[1:]  # drop xp
        kinds = inspect.Parameter
        self.variadic = any(p.kind == kinds.VAR_POSITIONAL for p in params)
        self.input_names = tuple(p.name for p in params
                                 if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD,
                                               kinds.VAR_POSITIONAL))
        self.attr_names = tuple(p.name for p in params if p.kind == kinds.KEYWORD_ONLY)
        self.attr_defaults = {p.name: p.default for p in params if p.kind == kinds.KEYWORD_ONLY}
        reserved = {"out", "workspace", "inputs", "shapes", "needs_input_grad"} & (
            set(self.input_names) | set(self.attr_names))
        if reserved:
            raise TypeError(f"op {self.name}: {sorted(reserved)} are names a rule uses for "
                            "something else; rename the kernel parameter")
        if self.view and (self.variadic or len(self.input_names) != 1):
            raise TypeError(f"view op {self.name} must take exactly one tensor input")

    def _read_grad_inputs(self, names):
        """`edges`: the positions of the inputs with a graph edge (None: all); `no_edges`: the
        others."""
        self.edges = self.no_edges = None
        if names is not None:
            unknown = set(names) - set(self.input_names)
            if unknown or self.variadic:
                raise TypeError(f"op {self.name}: grad_inputs {sorted(unknown)} are not among "
                                f"its inputs {self.input_names}")
            self.edges = tuple(self.input_names.index(n) for n in names)
            self.no_edges = tuple(i for i in range(len(self.input_names)) if i not in self.edges)

    def grad(self, rule):
        """Attach the backward rule (usable as a decorator); returns the Op."""
        params = list(inspect.signature(rule).parameters)
        if not params or params[0] != "g":
            raise TypeError(f"op {self.name}: a rule's first parameter must be `g`")
        self.saves = tuple(self._save_spec(p) for p in params[1:])
        self.saves_tensors = any(kind in ("input", "out", "workspace", "inputs")
                                for kind, _ in self.saves)
        self.has_workspace = any(kind == "workspace" for kind, _ in self.saves)
        self.saver = self.recorder = None
        self.rule = rule
        return self

    def jvp(self, rule):
        """Attach the forward-mode rule (a decorator, or LINEAR / ELEMENTWISE); returns the
        Op."""
        if rule is LINEAR or rule is ELEMENTWISE or rule is MULTILINEAR:
            self.jvp_rule, self.jvp_needs = rule, ()
            return self
        needs = []
        for name in inspect.signature(rule).parameters:
            stem = name[:-2]
            if name == "tangents" and self.variadic:
                needs.append(("tangents", None))
            elif name.endswith("_t") and not self.variadic and stem in self.input_names:
                needs.append(("tangent", self.input_names.index(stem)))
            else:
                needs.append(self._save_spec(name))
        self.jvp_rule, self.jvp_needs = rule, tuple(needs)
        return self

    def batch(self, rule):
        """Attach the batching rule for vmap (usable as a decorator); returns the Op."""
        self.batch_rule = rule
        return self

    def _save_spec(self, name):
        """What the node must keep for one rule parameter: (kind, detail)."""
        if name in ("out", "workspace", "inputs", "shapes", "needs_input_grad"):
            return (name, None)
        if name in self.attr_names:
            return ("attr", name)
        names = self.input_names
        if not self.variadic and name in names:
            return ("input", names.index(name))
        for suffix in ("_shape", "_dtype"):
            stem = name[: -len(suffix)]
            if name.endswith(suffix) and not self.variadic and stem in names:
                return (suffix[1:], names.index(stem))
        raise TypeError(f"op {self.name}: the rule asks for {name!r}, which is neither an "
                        f"input {names}, an attribute {self.attr_names} nor a known name")

    def __get__(self, instance, owner):
        """Bound as a Tensor method, `x.exp()` calls the op with x first (like a function)."""
        return self if instance is None else MethodType(self, instance)

    def inplace(self, self_tensor, *args, **attrs):
        """Run the op writing its result into `self_tensor` (the `add_` family)."""
        return dispatch_inplace(self, self_tensor, args, attrs)

    def __repr__(self):
        return f"<ember op {self.name}>"


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_"))


def defop(name, promote, kernel, rule=None, **options):
    """Declare a primitive in one table row; returns the Op."""
    new = Op(name, promote, kernel, **options)
    if rule is not None:
        new.grad(rule)
    return new


def op(promote, name=None, **options):
    """Decorator form of `defop` for kernels longer than a lambda:

        @op("arith")
        def matmul(xp, a, b): ...

        @matmul.grad
        def matmul(g, a, b): ...
    """
    def wrap(kernel):
        return Op(name or kernel.__name__, promote, kernel, **options)
    return wrap


def export(fn=None, *, name=None, function=True, method=False):
    """Publish `fn` as `ember.<name>` (function=True) and/or `Tensor.<name>` (method=True).

    `ember/__init__.py` and `_tensor_methods.py` read EXPORTS, so an op module is the single
    place that says what it adds to the public API."""
    def register(f):
        EXPORTS[name or f.__name__] = (f, function, method)
        return f
    return register if fn is None else register(fn)


from ._dispatch import call, dispatch_inplace  # noqa: E402  (dispatch needs Op defined)

Op.__call__ = call  # `op(x, y, dim=1)` runs dispatch directly, with no extra Python frame
# `run(op, x, dim=1)` is the same call, for the hottest public functions: calling an instance
# goes through the class's __call__ slot, which rebuilds the arguments (a tuple and a keyword
# dict, then a keyword vector again): ~0.6k instructions a call, ~2k with keywords (callgrind)
run = call

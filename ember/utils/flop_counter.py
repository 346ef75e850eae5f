"""Counting floating-point operations: `FlopCounterMode` (torch.utils.flop_counter) and the
per-op formulas the profiler also uses.

    with FlopCounterMode(display=False) as counter:
        model(x).sum().backward()
    counter.get_total_flops()     # forward and backward
    counter.get_flop_counts()     # {"Global": {"addmm": 320, ...}, "Net.fc1": {...}, ...}

Like torch, FlopCounterMode counts the products that dominate a network's cost, one
multiply-add as 2 FLOPs, and nothing else:

    mm, matmul, bmm, addmm ...           2 * (output elements) * (length of the summed axis)
    convolution (and its two adjoints)   2 * N * (output positions) * C_out * C_in/groups * taps

(the im2col GEMM: every output position of every image is a dot product of length
C_in/groups * taps, for each of the C_out filters). The backward of a convolution is two
such products, one per input that wants a gradient, of the same size as the forward. Backward
passes are counted because ember's rules are ordinary ops (`g @ b.mT` is a matmul).

Ops are ember's own names (`addmm`, `conv_input_grad`), not aten's; nn.Linear runs addmm or mm,
as in torch. The totals equal torch's for mm/addmm/bmm/linear/convolution forward and backward;
`mv`, `dot` and `addmv` are counted too (torch leaves them at 0), and grouped convolutions'
weight gradients are counted at their true size (torch counts them `groups` times larger).

The profiler (`with_flops=True`) also gives the cheap ops a count: elementwise ops one FLOP per
output element, reductions (and losses, norms) one per input element (`op_flops`).

Read next: `ember/profiler/profiler.py`.
"""
import math

from ..autograd import _instrument

__all__ = ["FlopCounterMode", "op_flops", "register_flop_formula"]


def _numel(shape):
    return math.prod(shape)


def _product(args, attrs, outputs):
    """A matrix product: every output element is a dot product over a's last axis."""
    a = args[0]
    return 2 * outputs[0]._data.size * a.shape[-1]


def _fused_product(args, attrs, outputs):
    """addmm / addmv / baddbmm: c + a @ b; the addition is not counted (as torch)."""
    a = args[1]
    return 2 * outputs[0]._data.size * a.shape[-1]


def _addbmm(args, attrs, outputs):
    """sum_i a[i] @ b[i]: the summed axis is batch * k long."""
    a = args[1]
    return 2 * outputs[0]._data.size * a.shape[0] * a.shape[-1]


def _conv(n, weight_shape, positions):
    """The im2col GEMM: 2 * N * prod(weight shape) * output positions, where prod(weight
    shape) = C_out * C_in/groups * taps."""
    return 2 * n * _numel(weight_shape) * _numel(positions)


def _convolution(args, attrs, outputs):
    x, w = args[0], args[1]
    return _conv(x.shape[0], w.shape, outputs[0].shape[2:])


def _conv_input_grad(args, attrs, outputs):
    dy, w = args[0], args[1]  # the adjoint runs the same GEMM, from dy back to the input
    return _conv(dy.shape[0], w.shape, dy.shape[2:])


def _conv_weight_grad(args, attrs, outputs):
    x, dy = args[0], args[1]
    return _conv(x.shape[0], attrs["weight_shape"], dy.shape[2:])


# op name -> formula(inputs, attrs, outputs) -> FLOPs
FORMULAS = {
    "mm": _product, "bmm": _product, "matmul": _product, "mv": _product, "dot": _product,
    "vdot": _product,
    "addmm": _fused_product, "addmv": _fused_product, "baddbmm": _fused_product,
    "addbmm": _addbmm,
    "convolution": _convolution,
    "conv_input_grad": _conv_input_grad,
    "conv_weight_grad": _conv_weight_grad,
}


def register_flop_formula(op_name, formula):
    """Count `op_name` with `formula(inputs, attrs, outputs) -> int` from now on."""
    FORMULAS[op_name] = formula


# ----------------------------------------------------------------------------------------------
# the profiler's wider count


_ELEMENTWISE = ("pointwise", "activation")
_REDUCING = ("reduce", "loss", "norm")


def op_flops(op, args, attrs, outputs):
    """FLOPs of one op call for the profiler: the product formulas above; elementwise ops one
    per output element; reductions, losses and norms one per input element; ops that only
    move data (views, copies, indexing) none."""
    formula = FORMULAS.get(op.name)
    if formula is not None:
        return formula(args, attrs, outputs)
    family = op.kernel.__module__.rsplit(".", 1)[-1]
    if family in _ELEMENTWISE:
        return sum(o._data.size for o in outputs if o._dtype.is_floating_point)
    if family in _REDUCING:
        return max((x._data.size for x in args if hasattr(x, "_data")), default=0)
    return 0


# ----------------------------------------------------------------------------------------------
# FlopCounterMode


class FlopCounterMode:
    """Count the FLOPs of the products run inside the block, per module (torch's API).

    mods: modules to name up front (every module is tracked anyway, named when first called).
    depth: how deep the printed table goes into the module tree.
    display: print the table when the block ends.
    custom_mapping: {op or op name: formula(inputs, attrs, outputs) -> int}, counted besides
    (or instead of) the built-in formulas."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        if mods is None:
            mods = ()
        elif not isinstance(mods, (list, tuple)):
            mods = (mods,)
        self.mods = tuple(mods)
        self.depth = depth
        self.display = display
        self.formulas = dict(FORMULAS)
        for key, formula in (custom_mapping or {}).items():
            self.formulas[getattr(key, "name", key)] = formula
        self.flop_counts = {"Global": {}}
        self._tracking = None

    def __enter__(self):
        self.flop_counts = {"Global": {}}
        self._tracking = _instrument.track_modules(*self.mods).__enter__()
        _instrument.listen(self)
        return self

    def __exit__(self, *exc):
        _instrument.unlisten(self)
        self._tracking.__exit__(*exc)
        if self.display:
            print(self.get_table(self.depth))
        return False

    def on_op(self, op, args, attrs, outputs, inplace, start, end, seq):
        """Listener callback (see `ember.autograd._instrument`): called after each op runs while
        this is active, with the op, its arguments and outputs and the `perf_counter_ns` times
        around it. Adds the op's FLOPs (if it has a formula) to "Global" and to every module that
        encloses it."""
        formula = self.formulas.get(op.name)
        if formula is None:
            return
        flops = formula(args, attrs, outputs)
        for scope in _scopes(_instrument.current_module()):
            counts = self.flop_counts.setdefault(scope, {})
            counts[op.name] = counts.get(op.name, 0) + flops

    def on_node(self, node, grads, in_grads, start, end, seq):
        """Listener callback (see `ember.autograd._instrument`): called after each backward node's
        rule runs while this is active. Counts nothing: backward ops are seen by `on_op` as they
        run."""
        pass

    def get_total_flops(self):
        """The FLOPs counted so far, over everything run."""
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        """{module name: {op name: FLOPs}}; "Global" holds everything."""
        return {name: dict(ops) for name, ops in self.flop_counts.items()}

    def get_table(self, depth=None):
        """A text table of FLOPs per module (to `depth` levels of nesting, default the mode's) and
        per op within each, with each one's share of the total."""
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        rows = [("Module", "FLOP", "% Total")]
        names = ["Global"] + sorted(n for n in self.flop_counts
                                    if n != "Global" and n.count(".") + 1 <= depth)
        for name in names:
            ops = self.flop_counts[name]
            level = 0 if name == "Global" else name.count(".") + 1
            rows.append((" " * level + name, _si(sum(ops.values())),
                         _percent(sum(ops.values()), total)))
            for op_name, flops in ops.items():
                rows.append((" " * level + " - " + op_name, _si(flops), _percent(flops, total)))
        widths = [max(len(r[k]) for r in rows) for k in range(3)]
        return "\n".join(f"{a.ljust(widths[0])}  {b.rjust(widths[1])}  {c.rjust(widths[2])}"
                         for a, b, c in rows)


def _scopes(module):
    """"Global" and every module enclosing `module` ("Net", "Net.block", "Net.block.fc")."""
    if module is None:
        return ("Global",)
    parts = module.split(".")
    return ("Global",) + tuple(".".join(parts[:k]) for k in range(1, len(parts) + 1))


def _si(flops):
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if flops >= size:
            return f"{flops / size:.3f}{suffix}"
    return str(flops)


def _percent(part, total):
    return f"{100 * part / total:.2f}%" if total else "0%"

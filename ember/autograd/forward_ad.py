"""Forward-mode automatic differentiation: tensors that carry a tangent through every op.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)  # a view of primal, with a tangent attached
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)    # jvp = J_f(primal) @ tangent

A dual level is one of the levels of `_functorch/levels.py`: while it is active, an op with an
argument that has a tangent at that level comes to `DualLevel.process`. It runs the op on the
primals (its own tangents hidden, so they are not seen twice), then computes each output's
tangent with the op's forward-mode rule, declared beside its backward rule (`@op.jvp`, see
ops/_op.py). An op without one gets its tangent from its backward rule instead: the rule is
linear in the incoming gradient u, `J^T u`, so differentiating it with respect to u, with the
tangent as the cotangent, gives `J v` -- two backward passes, where a rule costs about one
forward op. `FALLBACKS` counts the ops that take that path (tests list them).

Tangents are ordinary tensors and the rules are ordinary ops, run through the levels beneath:
so tangents can be batched (`func.jacfwd` is a vmap of `func.jvp`), carry the tangents of lower
levels (nested `func.jvp`), and be recorded by autograd (reverse-over-forward; and for
forward-over-reverse the backward rules run on tensors that carry tangents).

Where a tensor keeps them: `x._tangents`, {level: tangent}. A tensor that outlives its level
keeps a stale entry that nothing reads (torch clears the tangents when the level exits).
torch allows one dual level at a time through this module; `func.jvp` nests its own.

Read next: `_functorch/vmap.py`.
"""
import collections

from .. import _dtype as dt
from .._functorch import levels
from .._tensor import Tensor
from . import grad_mode
from .graph import resave_outputs

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
           "UnpackedDualTensor"]

class _Linear:
    """The jvp rule of an op that is linear in its floating tensor inputs: its tangent is the
    op itself applied to the tangents (ops/_op.py publishes it as LINEAR)."""

    def __repr__(self):
        return "LINEAR"


LINEAR = _Linear()


class _Elementwise:
    """The jvp rule of an elementwise op (each output element depends only on the input
    elements at its position): its Jacobian is diagonal, so J v is the backward rule applied to
    v -- conjugated around it for complex numbers, whose backward rules conjugate the
    derivative (ops/_op.py publishes it as ELEMENTWISE)."""

    def __repr__(self):
        return "ELEMENTWISE"


ELEMENTWISE = _Elementwise()


class _Multilinear:
    """The jvp rule of an op that is linear in each floating tensor input on its own (a
    product: mm, matmul, einsum, ...): its tangent is the sum, over the inputs with a tangent,
    of the op with that input replaced by its tangent (ops/_op.py publishes it as
    MULTILINEAR)."""

    def __repr__(self):
        return "MULTILINEAR"


MULTILINEAR = _Multilinear()
FALLBACKS = collections.Counter()  # op name -> outputs whose tangent came from two VJPs
_public = []  # the levels entered through this module (torch allows one at a time)


class DualLevel(levels.Level):
    """An active forward-mode AD level."""

    public = False  # entered through this module (True) or by func.jvp
    def process(self, op, args, attrs, target):
        index = self.index
        tangents = tuple(_tangent_at(x, index) for x in args)
        if target is not None:
            return self._inplace(op, target, args, attrs, tangents)
        with levels.below(self):
            out = op(*args, **attrs)
            multi = type(out) is tuple
            outputs = out if multi else (out,)
            found = output_tangents(op, args, attrs, tangents, outputs, multi)
        _attach(op, outputs, found, index)
        return out

    def _inplace(self, op, target, args, attrs, tangents):
        """`target.op_(*args)`: computed out of place, written back with copy_; the target's
        tangent is updated in place where it has one (views of it see the change)."""
        index = self.index
        inputs = (target,) + args
        with levels.below(self):
            result = op(*inputs, **attrs)
            if op.promote not in ("none", "same") and not dt.can_cast(result.dtype,
                                                                       target.dtype):
                raise RuntimeError(f"result type {dt.scalar_name(result.dtype)} can't be cast "
                                   f"to the desired output type {dt.scalar_name(target.dtype)}")
            new = output_tangents(op, inputs, attrs, (_tangent_at(target, index),) + tangents,
                                  (result,), False)[0]
            target.copy_(result)
            if new is not None:
                if new._data.shape != target._data.shape:  # a broadcast write (copy_)
                    new = new.expand(target.shape)
                _write_tangent(target, new, index)
        return target


def _tangent_at(x, index):
    if isinstance(x, Tensor):
        tangents = x._tangents
        if tangents:
            return tangents.get(index)
    return None


def _attach(op, outputs, found, index):
    attached = False
    for out, tangent in zip(outputs, found):
        if tangent is not None:
            out._tangents = {**out._tangents, index: tangent} if out._tangents else \
                {index: tangent}
            attached = True
    node = outputs[0]._grad_fn
    if attached and node is not None and node.op is op:
        resave_outputs(node, outputs)  # a saved output must keep its tangent for backward


def _write_tangent(target, new, index):
    """Give `target` the tangent `new` after an in-place op. A view writes into its base's
    tangent (making one of zeros if needed), as torch does: `y[0] = dual` gives y a tangent."""
    base = target._base
    if base is not None and target._view_fn is not None and base._dtype.is_floating_point:
        base_tangent = _tangent_at(base, index)
        if base_tangent is None:
            base_tangent = base.new_zeros(base.shape)
            base._tangents = {**(base._tangents or {}), index: base_tangent}
        view = target._view_fn(base_tangent)
        view.copy_(new)
        new = view
    else:
        old = _tangent_at(target, index)
        if old is not None and old.shape == new.shape and _writable(old):
            old.copy_(new)
            new = old
    target._tangents = {**(target._tangents or {}), index: new}


def _writable(t):
    flags = getattr(t._data, "flags", None)
    return flags is None or getattr(flags, "writeable", True)


# ----------------------------------------------------------------------------------------------
# the tangents of one op's outputs


def output_tangents(op, args, attrs, tangents, outputs, multi):
    """One tangent (or None) per output of `op(*args)`, given the inputs' tangents."""
    rule = op.jvp_rule
    if rule is None:
        if not op.differentiable or not any(o._dtype.category >= dt.FLOATING for o in outputs):
            return (None,) * len(outputs)
        if op.rule is None:
            raise NotImplementedError(f"forward-mode AD of {op.name}: the op has neither a jvp "
                                      "rule nor a backward rule")
        FALLBACKS[op.name] += 1
        found = _by_two_vjps(op, args, attrs, tangents, outputs, multi)
    else:
        if rule is ELEMENTWISE:
            found = _elementwise(op, args, attrs, tangents, outputs, multi)
        elif rule is MULTILINEAR:
            found = _multilinear(op, args, attrs, tangents)
        elif rule is LINEAR:
            found = op(*_tangents_in_place_of(args, tangents), **attrs)
        else:
            found = rule(*named_values(op, op.jvp_needs, args, attrs, outputs, multi, tangents))
        if not multi:
            found = (found,)
    return tuple(_fit_tangent(t, out) for t, out in zip(found, outputs))


def _elementwise(op, args, attrs, tangents, outputs, multi):
    """J v for an elementwise op: for each output, the sum over inputs with a tangent of the
    backward rule's gradient for that input, given the tangent (broadcast to the output) as
    that output's gradient. Holomorphic rules conjugate their derivative, so for complex
    numbers that would only hold for holomorphic ops: there the tangents come from two
    backward passes, which are right for any op."""
    if any(t is not None and t._dtype.category == dt.COMPLEX for t in tangents) or \
            any(o._dtype.category == dt.COMPLEX for o in outputs):
        found = _by_two_vjps(op, args, attrs, tangents, outputs, multi)
        return found if multi else found[0]
    found = tuple(_elementwise_output(op, args, attrs, tangents, outputs, multi, k)
                  if o._dtype.category >= dt.FLOATING else None for k, o in enumerate(outputs))
    return found if multi else found[0]


def _elementwise_output(op, args, attrs, tangents, outputs, multi, k):
    out = outputs[k]
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        only = tuple(j == i for j in range(len(tangents)))
        values = named_values(op, op.saves, args, attrs, outputs, multi, only)
        g = t.expand(out.shape) if t._data.shape != out._data.shape else t
        if multi:
            g = tuple(g if j == k else o.new_zeros(o.shape) for j, o in enumerate(outputs))
        part = op.rule(g, *values)[i]
        if part is not None:  # None: the output does not move with this input
            total = part if total is None else total + part
    return total


def _multilinear(op, args, attrs, tangents):
    total = None
    for i, t in enumerate(tangents):
        if t is not None:
            part = op(*args[:i], t, *args[i + 1:], **attrs)
            total = part if total is None else total + part
    return total


def _tangents_in_place_of(args, tangents):
    """For a linear op: every floating tensor replaced by its tangent (zeros without one)."""
    out = []
    for x, t in zip(args, tangents):
        if t is None and isinstance(x, Tensor) and x._dtype.category >= dt.FLOATING:
            t = x.new_zeros(x.shape)
        out.append(x if t is None else t)
    return out


def _fit_tangent(t, out):
    """A rule's tangent as the output needs it: none for integer outputs, broadcast to the
    output's shape (a tangent that came from a broadcast operand), in the output's dtype."""
    if t is None or out._dtype.category < dt.FLOATING:
        return None
    if t._dtype.category == dt.COMPLEX and out._dtype.category != dt.COMPLEX:
        t = t.real  # a real function of complex inputs: its derivative is the real part
    if t._data.shape != out._data.shape:
        t = t.expand(out.shape)
    if t._dtype is not out._dtype:
        t = t.to(out._dtype)
    return t


def named_values(op, needs, args, attrs, outputs, multi, tangents):
    """The values a rule asks for by name (see ops/_op.py), for a rule run outside the graph."""
    values = []
    for kind, detail in needs:
        if kind == "tangent":
            values.append(tangents[detail])
        elif kind == "tangents":
            values.append(tangents)
        elif kind == "input":
            values.append(args[detail])
        elif kind == "attr":
            values.append(attrs[detail] if detail in attrs else op.attr_defaults[detail])
        elif kind == "out":
            values.append(outputs if multi else outputs[0])
        elif kind == "workspace":
            values.append(outputs[1:])
        elif kind in ("shape", "dtype"):
            x = args[detail]
            values.append(_meta(x, kind))
        elif kind == "inputs":
            values.append(tuple(args))
        elif kind == "shapes":
            values.append(tuple(_meta(x, "shape") for x in args))
        else:  # needs_input_grad: the inputs a tangent flows from (or given as bools)
            values.append(tuple(t is not None and t is not False for t in tangents))
    return values


def _meta(x, kind):
    if not isinstance(x, Tensor):
        return () if kind == "shape" else None
    return x._data.shape if kind == "shape" else x._dtype


def _by_two_vjps(op, args, attrs, tangents, outputs, multi):
    """J v as d/du <J^T u, v>: the backward rule J^T u is linear in u; differentiating it with
    respect to u, with the tangents v as cotangents, gives J v."""
    from .engine import grad

    create_graph = grad_mode.is_grad_enabled()
    with grad_mode.enable_grad():
        us = tuple(_probe_like(o) for o in outputs)
        values = named_values(op, op.saves, args, attrs, outputs, multi, tangents)
        grads = op.rule(us if multi else us[0], *values)
        if type(grads) is not tuple:
            grads = tuple(grads) if isinstance(grads, list) else (grads,)
        pairs = []
        for x, t, g in zip(args, tangents, grads):
            if t is None or g is None or not _depends_on_u(op, g):
                continue
            pairs.append((_fit_gradient(g, x), t))
        wanted = [u for u in us if u.requires_grad]
        if not pairs or not wanted:
            return (None,) * len(outputs)
        found = grad([g for g, _ in pairs], wanted, [t for _, t in pairs], allow_unused=True,
                     create_graph=create_graph)
    found = iter(found)
    return tuple(next(found) if u.requires_grad else None for u in us)


def _probe_like(o):
    """A cotangent u for the two-VJP fallback: its value does not matter (J^T u is linear in
    u), but it must not make J^T u vanish by accident -- so no zeros or ones (a softmax's
    backward of ones is 0) -- and drawing it must not touch the random streams."""
    from .. import _creation

    n = o.numel()
    floating = o._dtype.category >= dt.FLOATING
    real = o._dtype.to_real() if o._dtype.category == dt.COMPLEX else o._dtype
    values = _creation.arange(n, dtype=real if floating else None,
                              device=o.device) * 0.6180339887 % 1.0 + 0.5
    if o._dtype.category == dt.COMPLEX:
        values = values * (1 - 0.75j)
    u = values.reshape(o.shape).to(o.dtype) if n else o.new_zeros(o.shape)
    return u.requires_grad_(floating)


def _depends_on_u(op, g):
    """Whether a rule's gradient is J^T u. One that does not require grad is either a
    constant -- then 0, as J^T u is linear in u (a norm of order 0) -- or was computed
    through a kernel without rules (a fused backward), which cannot give J v: refused."""
    if g.requires_grad:
        return True
    if not bool((g != 0).any()):
        return False
    raise NotImplementedError(f"forward-mode AD of {op.name}: it has no jvp rule, and its "
                              "backward rule is not differentiable")


def _fit_gradient(g, x):
    """A rule's gradient summed to its input's shape and dtype, as the engine does."""
    if g._data.shape != x._data.shape:
        g = g.sum_to_size(x.shape)
    if g._dtype is not x._dtype:
        if g._dtype.category == dt.COMPLEX and x._dtype.category != dt.COMPLEX:
            g = g.real
        g = g.to(x._dtype)
    return g


def is_active():
    """Whether some dual level is active (tangents may be flowing)."""
    return any(isinstance(level, DualLevel) for level in levels.active.values())


def rules_must_differentiate():
    """Whether a backward rule must be written in differentiable ops rather than one fused
    backward kernel: under create_graph (grad mode on), or while a dual level is active, when
    the rule may run on tensors with tangents (forward-over-reverse, as in func.hessian)."""
    return grad_mode.state.grad_enabled or is_active()


# ----------------------------------------------------------------------------------------------
# the public API (torch.autograd.forward_ad)


def enter_dual_level():
    """Start a dual level (torch allows one at a time here) and return its number."""
    if _public:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    level = DualLevel()
    level.public = True  # torch.autograd.forward_ad's, not torch.func's (see autograd.Function)
    levels.enter(level)
    _public.append(level)
    return level.index


def exit_dual_level(*, level=None):
    """End the dual level started by `enter_dual_level`."""
    if not _public:
        raise RuntimeError("Dual level must be a positive number.")
    current = _public[-1]
    if level is not None and level != current.index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    _public.pop()
    levels.leave(current)


class dual_level:
    """Context manager for a dual level: `with dual_level(): ...`; gives the level's number."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _current(level):
    if level is not None:
        return level
    if not _public:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    return _public[-1].index


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` whose tangent at `level` (the current one by default) is `tangent`
    (stored as given, not copied)."""
    return dual(tensor, tangent, levels.active.get(_current(level)))


def dual(tensor, tangent, level):
    """`make_dual` for a level object (func.jvp's own levels)."""
    if level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected Tensor arguments")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if t._dtype.category < dt.FLOATING:
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{t.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if _tangent_at(tensor, level.index) is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level.index} is not supported.")
    with levels.below(level):
        out = tensor.view_as(tensor)
    out._tangents = {**(out._tangents or {}), level.index: tangent}
    return out


UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "What `unpack_dual` returns: the primal and its tangent (or None)."


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of `tensor` at `level`: the primal is a view without that tangent; the
    tangent is None when there is none (or no level is active)."""
    if level is None:
        if not _public:
            return UnpackedDualTensor(tensor, None)
        level = _public[-1].index
    return unpack(tensor, levels.active.get(level))


def unpack(tensor, level):
    """`unpack_dual` for a level object."""
    if level is None or _tangent_at(tensor, level.index) is None:
        return UnpackedDualTensor(tensor, None)
    tangent = tensor._tangents[level.index]
    with levels.below(level):
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)

"""torch.func's differentiation transforms: grad, grad_and_value, vjp, jvp, linearize, jacrev,
jacfwd, hessian.

Reverse mode runs on ember's one autograd tape: `grad(f)(x)` gives f a fresh leaf in place of x
(a new BatchedTensor on the same batch inside vmap; a differentiable alias when x already
requires grad, so an outer transform can differentiate the result again), runs f with grad
enabled and asks `autograd.grad` for the gradient. Whether the result must stay differentiable
-- torch's "is this tracked by an outer level?" -- is answered by walking f's graph: it is
when the graph reaches a node made before the call, a leaf that is not one of ours, or a
batched value that requires grad beneath its batch (`_tracked_outside`); then the backward is
recorded (create_graph), else the results are plain tensors, as torch returns them.

Forward mode enters a dual level of its own (autograd/forward_ad.py), so `jvp` nests.
`jacrev` is a vmap of the vjp over the rows of an identity, `jacfwd` a vmap of the jvp over its
columns, `hessian` is jacfwd(jacrev). `linearize` re-runs the jvp for each tangent (torch traces
the function once instead).

Read next: `functional_call.py`.
"""
import functools

from .. import _dtype as dt
from .._tensor import Tensor
from ..autograd import forward_ad, grad_mode
from ..autograd import graph as _graph
from ..utils._pytree import tree_flatten, tree_unflatten
from . import levels
from .vmap import BatchedTensor, batched, fresh_leaf, untracked_in_vmaps, vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]


# ----------------------------------------------------------------------------------------------
# arguments


def _check_argnums(argnums, count):
    """argnums as a tuple of non-negative positions, checked as torch does."""
    many = isinstance(argnums, tuple)
    nums = argnums if many else (argnums,)
    if not nums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int) or isinstance(n, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -count <= n < count:
            raise RuntimeError(f"Got argnum={n}, but only {count} positional inputs")
    return tuple(n % count for n in nums)


def _leaf(t):
    """A tensor autograd can differentiate with respect to, standing in for `t`."""
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    if t._requires_grad:
        return t.view_as(t)  # differentiable: an outer transform still sees through it
    leaf = fresh_leaf(t) if isinstance(t, BatchedTensor) else t.detach()
    if not isinstance(t, BatchedTensor) and t._tangents:
        leaf._tangents = dict(t._tangents)
    return leaf.requires_grad_()


def _leaves_for(args, argnums):
    """(args with fresh leaves at argnums, the leaves, each argnum's pytree spec)."""
    args = list(args)
    leaves, specs = [], []
    for n in argnums:
        flat, spec = tree_flatten(args[n])
        new = [_leaf(t) for t in flat]
        leaves.append(new)
        specs.append(spec)
        args[n] = tree_unflatten(new, spec)
    return args, leaves, specs


def _split_aux(output, has_aux, where):
    if not has_aux:
        return output, None
    if not isinstance(output, tuple) or len(output) != 2:
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return output


def _start():
    """A node number: nodes made after this call have larger ones."""
    return next(_graph._sequence)


def _tracked_outside(outputs, leaves, start):
    """Whether `outputs` depend differentiably on something besides `leaves` (see the module
    docstring): then their gradients must be recorded for whoever tracks that. The walk also
    goes beneath batched tensors, into the graph recorded on their batched values."""
    ours = {id(t) for t in leaves}
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor)]
    stack += [_graph.edge_of(v)[0] for t in leaves for v in _values_tracked(t)]
    seen = set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node) is _graph.AccumulateGrad:
            if id(node.variable) not in ours:
                return True
            continue
        if node._seq < start:
            return True
        stack.extend(child for child, _ in node.next_functions)
        stack.extend(_graph.edge_of(v)[0] for t in _saved_tensors(node)
                     for v in _values_tracked(t))
    return False


def _values_tracked(t):
    """The batched values (at every depth) beneath batched tensor `t` that require grad."""
    found = []
    while isinstance(t, BatchedTensor):
        t = t._value
        if t._requires_grad:
            found.append(t)
    return found


def _saved_tensors(node):
    """The tensors a node keeps for backward (inputs, and outputs kept as tensors)."""
    for value in node._saved or ():
        forms = value if isinstance(value, tuple) and value and isinstance(value[0], tuple) \
            else (value,)
        for form in forms:
            if isinstance(form, tuple) and len(form) == 2 and isinstance(form[0], Tensor):
                yield form[0]


def _plain(tree, keep):
    """The results as the caller gets them: without history unless an outer level tracks
    them (tangents and batches stay: they belong to other levels)."""
    if keep:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_untracked(t) if isinstance(t, Tensor) else t for t in leaves], spec)


def _untracked(t):
    if not t.requires_grad:
        return t
    if isinstance(t, BatchedTensor):
        new = batched(_untracked(t._value), t._batch_level)
    else:
        new = t.detach()
    if t._tangents:
        new._tangents = dict(t._tangents)
    return new


def _gradients(outputs, leaves, cotangents, create_graph):
    """autograd.grad of the outputs that require grad; zeros where an input was not used."""
    from ..autograd.engine import grad as autograd_grad

    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    found = (None,) * len(leaves)
    if pairs:
        found = autograd_grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                              retain_graph=True, create_graph=create_graph, allow_unused=True)
    return [g if g is not None else t.new_zeros(t.shape) for g, t in zip(found, leaves)]


# ----------------------------------------------------------------------------------------------
# reverse mode


def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: `(gradient, value)` of a function returning a scalar
    tensor; with has_aux, f returns (value, aux) and this gives (gradient, (value, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        with grad_mode.enable_grad():
            start = _start()
            args, leaves, specs = _leaves_for(args, nums)
            flat = [t for group in leaves for t in group]
            with untracked_in_vmaps(flat):
                output, aux = _split_aux(func(*args, **kwargs), has_aux,
                                         "grad_and_value(f)(*args)")
                _check_scalar(output)
                keep = _tracked_outside([output], flat, start)
                grads = _gradients([output], flat, [None], keep)
        grads = _regroup(grads, leaves, specs, isinstance(argnums, tuple))
        value = _plain(output, keep)
        grads = _plain(grads, keep)
        return grads, ((value, _plain(aux, keep)) if has_aux else value)

    return wrapper


def _check_scalar(output):
    where = "grad_and_value(f)(*args)"
    if not isinstance(output, Tensor):
        raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got {type(output)}")
    if output.ndim != 0:
        raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got tensor "
                           f"with {output.ndim} dims. Maybe you wanted to use the vjp or jacrev "
                           "APIs instead?")


def _regroup(flat, leaves, specs, many):
    """Flat per-leaf results back into one pytree per argnum (a tuple of them for a tuple)."""
    out, i = [], 0
    for group, spec in zip(leaves, specs):
        out.append(tree_unflatten(flat[i:i + len(group)], spec))
        i += len(group)
    return tuple(out) if many else out[0]


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient of a function returning a scalar tensor, with respect to
    the arguments at `argnums` (pytrees of tensors); with has_aux, (gradient, aux)."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = both(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: `(func(*primals), vjp_fn)`; `vjp_fn(cotangents)` gives one gradient
    pytree per primal (the vector-Jacobian product). With has_aux, also the aux output."""
    with grad_mode.enable_grad():
        start = _start()
        args, leaves, specs = _leaves_for(primals, range(len(primals)))
        flat = [t for group in leaves for t in group]
        with untracked_in_vmaps(flat):
            output, aux = _split_aux(func(*args), has_aux, "vjp(f, *primals)")
        outputs, out_spec = tree_flatten(output)
        for o in outputs:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has "
                                   f"only Tensor outputs, got {type(o)}")
        keep = _tracked_outside(outputs, flat, start)

    def vjp_fn(cotangents):
        """The vector-Jacobian product for `cotangents` shaped like the outputs."""
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function. cotangents: "
                               f"{ct_spec}, primal output: {out_spec}")
        record = keep or any(isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        with grad_mode.enable_grad():
            grads = _gradients(outputs, flat, flat_ct, record)
        return _plain(_regroup(grads, leaves, specs, True), record)

    result = (_plain(output, keep), vjp_fn)
    return result + (_plain(aux, keep),) if has_aux else result


# ----------------------------------------------------------------------------------------------
# forward mode


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """torch.func.jvp: `(func(*primals), J @ tangents)`, by forward-mode AD (its own dual
    level, so it nests). With has_aux, also the aux output."""
    if strict:
        raise RuntimeError("jvp(f, primals, tangents, strict=True): strict is not supported")
    where = "jvp(f, primals, tangents)"
    for name, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, tuple):
            raise RuntimeError(f"{where}: Expected {name} to be a tuple. E.g. it should be valid "
                               "to call f(*primals).")
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, "
                           "tangents also must be. Got primals with structure "
                           f"{spec_p} and tangents with structure {spec_t}")
    level = levels.enter(forward_ad.DualLevel())
    try:
        duals = [forward_ad.dual(_tensor(p), _tensor(t), level) for p, t in zip(flat_p, flat_t)]
        output, aux = _split_aux(func(*tree_unflatten(duals, spec_p)), has_aux, where)
        outputs, out_spec = tree_flatten(output)
        values, found = [], []
        for o in outputs:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            primal, tangent = forward_ad.unpack(o, level)
            values.append(primal)
            found.append(tangent if tangent is not None else primal.new_zeros(primal.shape))
    finally:
        levels.leave(level)
    result = (tree_unflatten(values, out_spec), tree_unflatten(found, out_spec))
    return result + (aux,) if has_aux else result


def _tensor(t):
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    return t


def _check_like_primals(tangents, primals):
    """linearize's jvp_fn takes tangents of exactly the primals' shapes and dtypes."""
    for k, (t, p) in enumerate(zip(tangents, primals)):
        if tuple(t.shape) != tuple(p.shape):
            raise RuntimeError(f"tangent:{k} with shape {t.shape} in flattened pytree doesn't "
                               f"match the shape {p.shape} of the corresponding primal.")
        if t.dtype is not p.dtype:
            raise RuntimeError(f"tangent:{k} with dtype {t.dtype} in flattened pytree doesn't "
                               f"match the dtype {p.dtype} of the corresponding primal.")


def linearize(func, *primals):
    """torch.func.linearize: `(func(*primals), jvp_fn)`, `jvp_fn(*tangents)` giving J @
    tangents. Differs from torch: each call of jvp_fn re-runs func under forward-mode AD (torch
    traces the linearized function once)."""
    output = func(*primals)

    def jvp_fn(*tangents):
        """J @ tangents at the primals."""
        _check_like_primals(tangents, primals)
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


# ----------------------------------------------------------------------------------------------
# Jacobians


def _basis(tensors):
    """Rows of an identity over all elements of `tensors`, one block per tensor shaped
    (total, *tensor.shape)."""
    from .._creation import eye

    total = sum(t.numel() for t in tensors)
    blocks, start = [], 0
    for t in tensors:
        identity = eye(total, dtype=t.dtype, device=t.device)
        n = t.numel()
        blocks.append(identity[:, start:start + n].reshape((total,) + tuple(t.shape)))
        start += n
    return blocks


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """torch.func.jacrev: the Jacobian of func at the arguments at `argnums`, by reverse mode:
    one vjp, vmapped over the rows of an identity (`chunk_size` rows at a time). Block
    `[output][input]` has shape `output.shape + input.shape`."""
    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        partial = _only(func, args, nums)
        result = vjp(partial, *[args[n] for n in nums], has_aux=has_aux)
        output, vjp_fn = result[0], result[1]
        outputs, out_spec = tree_flatten(output)
        basis = _basis(outputs)
        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(basis, out_spec))
        inputs = tree_flatten(tuple(args[n] for n in nums))[0]
        flat_rows = tree_flatten(rows)[0]
        blocks = []
        start = 0
        for o in outputs:
            n = o.numel()
            blocks.append([r[start:start + n].reshape(tuple(o.shape) + tuple(x.shape))
                           for r, x in zip(flat_rows, inputs)])
            start += n
        jac = _nest(blocks, out_spec, args, nums, isinstance(argnums, tuple))
        return (jac, result[2]) if has_aux else jac

    return wrapper


def _only(func, args, nums):
    """func as a function of the arguments at `nums` alone (the others fixed)."""
    def partial(*picked):
        full = list(args)
        for n, value in zip(nums, picked):
            full[n] = value
        return func(*full)
    return partial


def _nest(blocks, out_spec, args, nums, many):
    """blocks[output][input leaf] -> the output pytree, each leaf the Jacobian pytree of the
    argnums (a tuple of them when argnums is a tuple)."""
    specs = [tree_flatten(args[n])[1] for n in nums]
    per_output = []
    for row in blocks:
        groups, i = [], 0
        for spec in specs:
            groups.append(tree_unflatten(row[i:i + spec.num_leaves], spec))
            i += spec.num_leaves
        per_output.append(tuple(groups) if many else groups[0])
    return tree_unflatten(per_output, out_spec)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the Jacobian of func at the arguments at `argnums`, by forward
    mode: one jvp, vmapped over the columns of an identity. Block `[output][input]` has shape
    `output.shape + input.shape`."""
    @functools.wraps(func)
    def wrapper(*args):
        nums = _check_argnums(argnums, len(args))
        primals = tuple(args[n] for n in nums)
        flat_p, spec_p = tree_flatten(primals)
        for p in flat_p:
            if isinstance(p, Tensor) and p._dtype.category < dt.FLOATING:
                raise ValueError(f"Expected primal to be floating point or complex, but got: "
                                 f"{p.dtype}")
        partial = _only(func, args, nums)
        basis = _basis(flat_p)

        def push(*tangents):
            result = jvp(partial, primals, tree_unflatten(list(tangents), spec_p),
                         has_aux=has_aux)
            return result[1:] if has_aux else result[1]

        out_dims = (0, None) if has_aux else 0
        pushed = vmap(push, out_dims=out_dims, randomness=randomness)(*basis)
        columns = pushed[0] if has_aux else pushed
        outputs, out_spec = tree_flatten(columns)
        blocks = []
        for col in outputs:
            row, start = [], 0
            for p in flat_p:
                n = p.numel()
                piece = col[start:start + n].movedim(0, -1)
                row.append(piece.reshape(tuple(col.shape[1:]) + tuple(p.shape)))
                start += n
            blocks.append(row)
        jac = _nest(blocks, out_spec, args, nums, isinstance(argnums, tuple))
        return (jac, pushed[1]) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """torch.func.hessian: the matrix of second derivatives, jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)

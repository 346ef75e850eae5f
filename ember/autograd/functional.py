"""torch.autograd.functional: derivatives of whole functions, built on `autograd.grad`.

    vjp(f, x, v)      v^T J          one backward pass
    jvp(f, x, v)      J v            the double-backward trick (below): ember has no forward mode
    jacobian(f, x)    J              one backward pass per output element
    hessian(f, x)     H              the jacobian of the gradient
    vhp(f, x, v)      v^T H          backward of the gradient
    hvp(f, x, v)      H v            the double-backward trick applied to the gradient

The double-backward trick: for u a dummy vector that requires grad, g(u) = J^T u is linear in
u, so the vjp of g with v is (J^T)^T v = J v. It costs two backward passes instead of a forward-
mode pass.

Conventions (torch's): `inputs` and the function's outputs are a Tensor or a tuple of Tensors,
and results mirror that: jacobian(f, (x, y)) with a single output returns a tuple (one block per
input); with tuple outputs and tuple inputs it returns a tuple (per output) of tuples (per input).
Results are detached unless create_graph=True. With strict=True an output that does not depend on
an input raises instead of giving zeros.

Read next: `anomaly_mode.py`.
"""
from .._tensor import Tensor
from . import grad_mode
from .engine import grad as autograd_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# ----------------------------------------------------------------------------------------------
# arguments and results


def _as_tuple(x, what, fn_name):
    """(was it a tuple, the tensors as a tuple); anything but Tensors raises TypeError."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"entry {i} is a" if is_tuple else "got a"
            raise TypeError(f"{fn_name}: the {what} must be a Tensor or a tuple of Tensors, but "
                            f"{where} {type(item).__name__}.")
    return is_tuple, items


def _prepare(inputs, create_graph, need_graph):
    """Fresh leaves to differentiate against. With create_graph, inputs that already require
    grad are aliased instead, so the result stays differentiable w.r.t. the caller's tensors."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view(t.shape))
        else:
            out.append(_detached(t).requires_grad_(need_graph))
    return tuple(out)


def _detached(t):
    """t without history, as a new leaf -- keeping what belongs to function transforms: its
    tangents (forward-over-reverse) and, inside vmap, its batch."""
    from .._functorch.vmap import BatchedTensor, fresh_leaf

    if isinstance(t, BatchedTensor):
        return fresh_leaf(t)
    leaf = t.detach()
    if t._tangents:
        leaf._tangents = dict(t._tangents)
    return leaf


def _finish(tensors, create_graph):
    if create_graph:
        return tensors
    if isinstance(tensors, tuple):
        return tuple(_finish(t, create_graph) for t in tensors)
    return tensors.detach()


def _unpack(result, is_tuple):
    return result if is_tuple else result[0]


def _unpack2(result, outputs_tuple, inputs_tuple):
    """result[output][input] -> the nesting torch returns for these argument kinds."""
    if not inputs_tuple:
        result = tuple(per_output[0] for per_output in result)
    return result if outputs_tuple else result[0]


def _check_v(v, like, fn_name):
    if len(v) != len(like):
        raise RuntimeError(f"{fn_name}: v has {len(v)} entries but should have {len(like)}.")
    for i, (a, b) in enumerate(zip(v, like)):
        if a.shape != b.shape:
            raise RuntimeError(f"{fn_name}: entry {i} of v has size {a.shape} but should have "
                               f"size {b.shape}.")


def _v_or_default(v, like, create_graph, fn_name, of):
    """The user's v (checked against `like`), or None where torch allows it: when `like` is one
    single-element tensor (then v is implicitly 1)."""
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, like, fn_name)
        return v
    if len(like) != 1 or like[0].numel() != 1:
        raise RuntimeError(f"{fn_name}: v can only be None when the {of} is a single Tensor with "
                           "a single element.")
    return None


def _require_grad(tensors, kind, strict):
    """In strict mode, every tensor of `kind` must depend differentiably on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"strict mode: the output of the user-provided function is "
                               f"independent of input {i}.")
        if not t.requires_grad:
            raise RuntimeError(f"strict mode: {_INDEPENDENT[kind].format(i=i)}")


_INDEPENDENT = {
    "outputs": "output {i} of the user-provided function does not require grad: outputs must be "
               "computed differentiably from the inputs.",
    "grad_inputs": "the gradient with respect to input {i} does not depend on the inputs.",
    "jacobian": "the jacobian with respect to input {i} does not depend on the inputs (the "
                "function must be twice differentiable; a linear function is not).",
    "hessian": "the hessian with respect to input {i} does not depend on the inputs (the "
               "function must be thrice differentiable).",
}


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; None per input when none do."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                         retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


def _zeros_for_none(grads, like, strict, create_graph, what):
    """Replace missing gradients by zeros (or raise in strict mode). `what` names the quantity
    for the error: 'output' (vjp), 'gradient' (jvp), 'jacobian' (vhp), 'hessian' (hvp)."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(f"strict mode: the {what} of the user-provided function is "
                                   f"independent of input {i}.")
            g = like[i].new_zeros(like[i].shape)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(f"strict mode with create_graph=True: the {what} of the "
                               f"user-provided function does not depend differentiably on "
                               f"input {i}.")
        out.append(g)
    return tuple(out)


def _differentiable_call(func, inputs, create_graph, strict, fn_name):
    """Run func on prepared inputs; returns (inputs, outputs tuple flag, outputs)."""
    inputs = _prepare(inputs, create_graph, need_graph=True)
    outputs = func(*inputs)
    is_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _require_grad(outputs, "outputs", strict)
    return inputs, is_tuple, outputs


def _single_element(outputs, is_tuple, fn_name):
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


# ----------------------------------------------------------------------------------------------
# the functions


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs, outputs_tuple, outputs = _differentiable_call(func, inputs, create_graph, strict,
                                                              "vjp")
        v = _v_or_default(v, outputs, create_graph, "vjp", "output of the user-provided function")
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "output")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-backward trick."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs, outputs_tuple, outputs = _differentiable_call(func, inputs, create_graph, strict,
                                                              "jvp")
        v = _v_or_default(v, inputs, create_graph, "jvp", "input to the user-provided function")
        dummies = tuple(o.new_zeros(o.shape).requires_grad_() for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)  # J^T u, linear in u
        _require_grad(grad_inputs, "grad_inputs", strict)
        grads = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        result = _zeros_for_none(grads, outputs, strict, create_graph, "gradient")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs: block [i][j] has shape outputs[i].shape + inputs[j].shape.

    One backward pass per output element (vectorize=False); with vectorize=True one batched
    backward pass per output (vmap over the rows of an identity), or with
    strategy="forward-mode" one batched forward-mode pass per input (its columns)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    _check_jacobian_options(create_graph, strict, vectorize, strategy)
    if strategy == "forward-mode":
        return _jacobian_forward(func, inputs)
    if vectorize:
        return _jacobian_vectorized(func, inputs, create_graph)
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs, outputs_tuple, outputs = _differentiable_call(func, inputs, create_graph, strict,
                                                              "jacobian")
        blocks = tuple(_jacobian_of(i, out, inputs, create_graph, strict)
                       for i, out in enumerate(outputs))
    return _unpack2(_finish(blocks, create_graph), outputs_tuple, inputs_tuple)


def _check_jacobian_options(create_graph, strict, vectorize, strategy):
    if strategy == "forward-mode":
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or "
                                      "forward-over-reverse Hessian isonly implemented for "
                                      "`vectorize=True`.")
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      "and `strategy=\"forward-mode\"` are not supported "
                                      "together (yet). Please either set `create_graph=False` "
                                      "or `strategy=\"reverse-mode\"`.")
        if strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`strategy=\"forward-mode\"` are not supported together (yet). "
                               "Please either set `strict=False` or "
                               "`strategy=\"reverse-mode\"`.")
    elif vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")


def _identity_rows(t):
    """(numel, *t.shape): the rows of an identity, each shaped like t."""
    from .._creation import eye

    n = t.numel()
    return eye(n, dtype=t.dtype, device=t.device).reshape((n,) + tuple(t.shape))


def _jacobian_vectorized(func, inputs, create_graph):
    """One backward pass per output, batched over the identity's rows (is_grads_batched)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs, outputs_tuple, outputs = _differentiable_call(func, inputs, create_graph,
                                                              False, "jacobian")
        blocks = []
        for out in outputs:
            if out.requires_grad:
                rows = autograd_grad(out, inputs, _identity_rows(out), create_graph=create_graph,
                                     retain_graph=True, allow_unused=True,
                                     is_grads_batched=True)
            else:
                rows = (None,) * len(inputs)
            blocks.append(tuple(
                (r if r is not None else t.new_zeros((out.numel(),) + tuple(t.shape)))
                .reshape(tuple(out.shape) + tuple(t.shape)) for r, t in zip(rows, inputs)))
    return _unpack2(_finish(tuple(blocks), create_graph), outputs_tuple, inputs_tuple)


def _jacobian_forward(func, inputs):
    """One forward-mode pass per input, batched over the identity's columns (vmap of jvp)."""
    from .._functorch.eager_transforms import jvp
    from .._functorch.vmap import vmap

    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(_detached(t) for t in inputs)
    outputs_tuple = None
    columns = []
    for j, t in enumerate(inputs):
        def push(tangent, j=j):
            tangents = tuple(tangent if k == j else x.new_zeros(x.shape)
                             for k, x in enumerate(inputs))
            return jvp(func, inputs, tangents)[1]
        pushed = vmap(push)(_identity_rows(t))
        outputs_tuple = isinstance(pushed, tuple)
        columns.append(pushed if outputs_tuple else (pushed,))
    blocks = tuple(tuple(col[i].movedim(0, -1).reshape(tuple(col[i].shape[1:]) + tuple(t.shape))
                         for col, t in zip(columns, inputs))
                   for i in range(len(columns[0])))
    return _unpack2(blocks, outputs_tuple, inputs_tuple)


def _jacobian_of(i, out, inputs, create_graph, strict):
    """The blocks of one output: rows are its elements, each one backward pass."""
    rows = [[] for _ in inputs]
    for k in range(out.numel()):
        grads = _grad((out,), inputs, (_unit(out, k),), create_graph=create_graph,
                      retain_graph=True)
        for j, (g, t) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"strict mode: output {i} of the user-provided function "
                                       f"is independent of input {j}.")
                g = t.new_zeros(t.shape)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"strict mode with create_graph=True: the jacobian of the "
                                   f"user-provided function does not depend differentiably on "
                                   f"input {j}.")
            rows[j].append(g)
    blocks = []
    for j, t in enumerate(inputs):
        shape = tuple(out.shape) + tuple(t.shape)
        if rows[j]:
            blocks.append(_stack(rows[j]).view(shape))
        else:
            blocks.append(t.new_zeros(shape))
    return tuple(blocks)


def _stack(tensors):
    from ..ops.shape import stack  # ops import autograd: a top-level import would be circular

    return stack(tensors)


def _unit(out, k):
    """A tensor shaped like `out`, zero except for a one at flat position k."""
    e = out.new_zeros(out.shape)
    e._data.reshape(-1)[k] = 1  # new_zeros is contiguous: the reshape is a view we can write
    return e


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The matrix of second derivatives of a scalar function: the jacobian of its gradient.

    For tuple inputs, block [i][j] is d^2 f / (d inputs[i] d inputs[j])."""
    if outer_jacobian_strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def scalar_func(*args):
        out = func(*args)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _require_grad(outs, "outputs", strict)
        _single_element(outs, is_tuple, "hessian")
        return out.squeeze()

    def gradient(*args):
        first = jacobian(scalar_func, args, create_graph=True)
        _require_grad(first, "jacobian", strict)
        return first

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack2(result, inputs_tuple, inputs_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function: the backward pass of its gradient."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        v = _v_or_default(v, inputs, create_graph, "vhp", "input to the user-provided function")
        inputs, outputs_tuple, outputs = _differentiable_call(func, inputs, create_graph, strict,
                                                              "vhp")
        _single_element(outputs, outputs_tuple, "vhp")
        first = _grad(outputs, inputs, create_graph=True)
        _require_grad(first, "jacobian", strict)
        grads = _grad(first, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "jacobian")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, by the double-backward trick on the gradient
    (equal to vhp for the symmetric Hessians of twice continuously differentiable functions)."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        v = _v_or_default(v, inputs, create_graph, "hvp", "input to the user-provided function")
        inputs, outputs_tuple, outputs = _differentiable_call(func, inputs, create_graph, strict,
                                                              "hvp")
        _single_element(outputs, outputs_tuple, "hvp")
        first = _grad(outputs, inputs, create_graph=True)
        _require_grad(first, "jacobian", strict)
        dummies = tuple(t.new_zeros(t.shape).requires_grad_() for t in inputs)
        second = _grad(first, inputs, dummies, create_graph=True)  # H^T u, linear in u
        _require_grad(second, "hessian", strict)
        grads = _grad(second, dummies, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "hessian")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))

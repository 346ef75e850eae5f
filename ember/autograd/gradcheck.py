"""`gradcheck` / `gradgradcheck`: compare analytical gradients with finite differences.

For f: inputs -> outputs, the Jacobian block J[i][j] = d outputs[i] / d inputs[j] is computed
twice and compared element by element (|a - n| <= atol + rtol * |n|):

    numerical   central differences, (f(x + eps e_k) - f(x - eps e_k)) / (2 eps), nudging one
                input element at a time (in place, so any strides work);
    analytical  backpropagating one unit vector per output element (vector-Jacobian products),
                twice, to also check that backward is deterministic (`nondet_tol`).

`fast_mode=True` compares one number per (output, input) pair instead: v^T J u for random unit
vectors u and v, which needs two evaluations of f per input and one backward per output.

Complex tensors count as pairs of reals. An input's coordinates are the real and imaginary part
of each element (view_as_real's order), nudged one at a time; an output's rows are its elements'
real and imaginary parts. Backpropagating seed 1 into an element gives the gradient of its real
part and seed 1j that of its imaginary part: with torch's convention (grad = dL/d(re) +
i dL/d(im)) each backward fills the row of one real output coordinate. This checks the same
Wirtinger derivatives as torch's complex gradcheck.

Use float64 / complex128 inputs: float32 rounding swamps the differences. The errors name the
output and input index, as torch's do. `gradgradcheck` runs gradcheck on the function
`(inputs, grad_outputs) -> autograd.grad(f(inputs), inputs, grad_outputs, create_graph=True)`,
which checks the second derivatives.

Read next: `ember/nn/` (modules, built on everything above).
"""
import warnings

import numpy as np

from .. import _backend
from .._device import CPU
from .._tensor import Tensor
from .engine import grad as autograd_grad
from .graph import Node, _Named, edge_of

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a check fails (raise_exception=True)."""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if the analytical gradients of `func` at `inputs` match finite differences;
    otherwise raises GradcheckError (or returns False with raise_exception=False)."""
    _unsupported(check_batched_grad=check_batched_grad, check_forward_ad=check_forward_ad,
                 check_batched_forward_grad=check_batched_forward_grad, masked=masked)
    inputs = _as_tuple(inputs)
    wrt = _check_inputs(inputs)
    try:
        _check(func, inputs, wrt, eps, atol, rtol, nondet_tol, check_grad_dtypes,
               check_backward_ad, fast_mode)
        if check_undefined_grad and check_backward_ad:
            _check_undefined_grad(func, inputs, wrt)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the backward pass of `func`: its second derivatives. Random grad_outputs
    (uniform in [-1, 1), requiring grad) are drawn when none are given."""
    _unsupported(check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev,
                 masked=masked)
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable(func(*inputs))
        grad_outputs = tuple(_random_like(o, gen_non_contig_grad_outputs) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)

    def first_derivative(*args):
        ins, gos = args[:len(args) - n], args[len(args) - n:]
        outs = _differentiable(func(*ins))
        wrt = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
        grads = autograd_grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes,
                     check_backward_ad=check_rev_over_rev, fast_mode=fast_mode)


# ----------------------------------------------------------------------------------------------
# arguments


def _unsupported(**flags):
    for name, value in flags.items():
        if value:
            raise NotImplementedError(f"gradcheck({name}=True) needs vmap, forward-mode AD or "
                                      "masked (sparse) tensors, which ember does not have")


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _check_inputs(inputs):
    """The positions of the inputs to differentiate (tensors requiring grad)."""
    wrt = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i in wrt:
        t = inputs[i]
        if t.dtype.to_real().itemsize < 8:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point: gradcheck will likely fail unless all inputs are float64.")
        if any(stride == 0 and size > 1 for stride, size in zip(t.stride(), t.shape)):
            raise RuntimeError(f"The {i}th input has a dimension with stride 0: gradcheck nudges "
                               "input elements one at a time, which needs non-overlapping "
                               "memory. Call .contiguous() on the input first.")
    return wrt


def _differentiable(outputs):
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad)


def _numpy(t):
    """t's values as float64, or complex128 for a complex t."""
    array = _backend.transfer(t._data, CPU)
    return np.asarray(array, dtype=np.complex128 if array.dtype.kind == "c" else np.float64)


def _coordinates(array):
    """The real coordinates of an array, flat: the values, or (re, im) pairs of complex ones."""
    if array.dtype.kind == "c":
        return np.stack([array.real, array.imag], axis=-1).ravel()
    return array.ravel()


def _width(t):
    """How many real coordinates t has (2 per element for complex t)."""
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _show(array):
    return repr(Tensor._make(np.asarray(array, dtype=np.float64)))


def _random_like(t, non_contiguous):
    """Uniform in [-1, 1) (each part, for complex t), t's dtype and device; non_contiguous:
    every other element of a twice-as-wide buffer."""
    shape = tuple(t.shape)
    if non_contiguous and shape:
        wide = _uniform(shape[:-1] + (2 * shape[-1],), t)
        r = Tensor._make(wide._data[..., ::2], device=t.device)
    else:
        r = _uniform(shape, t)
    return r.detach().requires_grad_()


def _uniform(shape, like):
    from .._random import rand

    real = like.dtype.to_real()
    r = rand(shape, dtype=real, device=like.device) * 2 - 1
    if like.dtype.is_complex:
        from ..ops.complex import complex as make_complex

        r = make_complex(r, rand(shape, dtype=real, device=like.device) * 2 - 1)
    return r


# ----------------------------------------------------------------------------------------------
# the checks


def _check(func, inputs, wrt, eps, atol, rtol, nondet_tol, check_dtypes, backward_ad, fast):
    outputs = _as_tuple(func(*inputs))
    picked = [k for k, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
    if not picked:
        _check_outputs_constant(func, inputs, wrt, eps, outputs)
        return
    if not backward_ad:
        return
    if fast:
        _check_fast(func, inputs, wrt, picked, eps, atol, rtol)
        return
    numerical = _numerical_jacobian(func, inputs, wrt, picked, eps)
    for j, k in enumerate(picked):
        analytical = _analytical_jacobian(func, inputs, wrt, k, nondet_tol, check_dtypes)
        for i, index in enumerate(wrt):
            n, a = numerical[i][j], analytical[i]
            if not np.allclose(a, n, rtol, atol):
                raise GradcheckError(f"Jacobian mismatch for output {j} with respect to input "
                                     f"{index},\nnumerical:{_show(n)}\nanalytical:{_show(a)}\n")


def _outputs_at(func, inputs, picked):
    """The chosen outputs of func(*inputs), as flat float64 real coordinates."""
    outputs = _as_tuple(func(*inputs))
    # copies: an output may be a view of the input that is being nudged in place
    return [np.array(_coordinates(_numpy(outputs[k])), copy=True) for k in picked]


def _numerical_jacobian(func, inputs, wrt, picked, eps):
    """jac[i][j]: (real coordinates of input wrt[i], of output picked[j]), by central
    differences; a complex element is nudged along 1, then along i."""
    sizes = [out.size for out in _outputs_at(func, inputs, picked)]
    jac = []
    for index in wrt:
        data = inputs[index]._data
        steps = (eps, eps * 1j) if data.dtype.kind == "c" else (eps,)
        blocks = [np.zeros((data.size * len(steps), size)) for size in sizes]
        for k, element in enumerate(np.ndindex(data.shape)):
            orig = data[element].item()
            for part, step in enumerate(steps):
                data[element] = orig + step
                plus = _outputs_at(func, inputs, picked)
                data[element] = orig - step
                minus = _outputs_at(func, inputs, picked)
                data[element] = orig
                for block, p, m in zip(blocks, plus, minus):
                    block[k * len(steps) + part] = (p - m) / (2 * eps)
        jac.append(blocks)
    return jac


def _analytical_jacobian(func, inputs, wrt, k, nondet_tol, check_dtypes):
    """jac[i]: (numel of input wrt[i], numel of output k), one backward per output element;
    computed twice to check that backward is reentrant (deterministic)."""
    out = _as_tuple(func(*inputs))[k]
    targets = [inputs[i] for i in wrt]
    first = _vjp_rows(out, targets, check_dtypes)
    second = _vjp_rows(out, targets, check_dtypes)
    for a, b in zip(first, second):
        if a.size and np.max(np.abs(a - b)) > nondet_tol:
            raise GradcheckError("Backward is not reentrant, i.e., running backward with the same "
                                 "input and grad_output twice gives different values, although "
                                 "the analytical gradient matches the numerical one. The "
                                 f"tolerance for nondeterminism was {nondet_tol}.")
    return first


def _vjp_rows(out, targets, check_dtypes):
    """Seed 1 (and 1j, for a complex output) into one output element at a time."""
    seeds = (1, 1j) if out.dtype.is_complex else (1,)
    columns = [np.zeros((_width(t), _width(out))) for t in targets]
    for e in range(out.numel()):
        for part, value in enumerate(seeds):
            seed = out.new_zeros(out.shape)
            seed._data.reshape(-1)[e] = value  # new_zeros is contiguous: a writable view
            grads = autograd_grad([out], targets, [seed], retain_graph=True, allow_unused=True)
            for column, g, t in zip(columns, grads, targets):
                if g is None:
                    continue
                _check_gradient(g, t, check_dtypes)
                column[:, e * len(seeds) + part] = _coordinates(_numpy(g))
    return columns


def _check_gradient(g, t, check_dtypes):
    if tuple(g.shape) != tuple(t.shape):
        raise GradcheckError(f"Gradient has shape mismatch: {tuple(g.shape)} for an "
                             f"input of shape {tuple(t.shape)}")
    if check_dtypes and g.dtype is not t.dtype:
        raise GradcheckError(f"Gradient has dtype mismatch: {g.dtype} for an input of "
                             f"dtype {t.dtype}")


def _check_outputs_constant(func, inputs, wrt, eps, outputs):
    """No output requires grad: then the numerical derivatives must all be zero."""
    floating = [k for k, o in enumerate(outputs) if isinstance(o, Tensor)
                and (o.dtype.is_floating_point or o.dtype.is_complex)]
    if not floating:
        return
    for per_input in _numerical_jacobian(func, inputs, wrt, floating, eps):
        for jac in per_input:
            if np.any(jac != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# fast mode


def _check_fast(func, inputs, wrt, picked, eps, atol, rtol):
    rng = np.random.default_rng(0)
    outputs = _as_tuple(func(*inputs))
    us = [_unit_vector(rng, _width(inputs[i])) for i in wrt]
    vs = [_unit_vector(rng, _width(outputs[k])) for k in picked]
    for i, (index, u) in enumerate(zip(wrt, us)):
        directional = _directional_derivative(func, inputs, index, u, picked, eps)
        for j, (k, v) in enumerate(zip(picked, vs)):
            numerical = float(v @ directional[j])
            analytical = _v_j_u(func, inputs, k, index, v, u)
            tolerance = atol * u.sum() * v.sum() + rtol * abs(numerical)
            if abs(analytical - numerical) > tolerance:
                raise GradcheckError(_fast_message(func, inputs, index, j, k, numerical,
                                                   analytical, eps))


def _unit_vector(rng, n):
    u = rng.random(n)
    norm = np.linalg.norm(u)
    return u / norm if norm else u


def _directional_derivative(func, inputs, index, u, picked, eps):
    """(f(x + eps u) - f(x - eps u)) / (2 eps) for input `index`, per picked output."""
    data = inputs[index]._data
    orig = data.copy()
    if data.dtype.kind == "c":
        u = u[0::2] + 1j * u[1::2]  # real coordinates back to complex elements
    step = _backend.array_namespace(data).asarray(u.reshape(data.shape), dtype=data.dtype) * eps
    data[...] = orig + step
    plus = _outputs_at(func, inputs, picked)
    data[...] = orig - step
    minus = _outputs_at(func, inputs, picked)
    data[...] = orig
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _v_j_u(func, inputs, k, index, v, u):
    out = _as_tuple(func(*inputs))[k]
    if out.dtype.is_complex:
        v = v[0::2] + 1j * v[1::2]  # seed 1 weighs a real part, seed 1j an imaginary one
    seed = Tensor._make(v.reshape(out.shape).astype(out.dtype.np), device=CPU).to(out.device)
    (g,) = autograd_grad([out], [inputs[index]], [seed], allow_unused=True)
    return 0.0 if g is None else float(_coordinates(_numpy(g)) @ u)


def _fast_message(func, inputs, index, j, k, numerical, analytical, eps):
    wrt = [index]
    slow_n = _numerical_jacobian(func, inputs, wrt, [k], eps)[0][0]
    slow_a = _analytical_jacobian(func, inputs, wrt, k, np.inf, False)[0]
    return (f"Jacobian mismatch for output {j} with respect to input {index},\n"
            f"numerical:{numerical!r}\nanalytical:{analytical!r}\n\n"
            "The above are v^T J u for random unit vectors u and v (fast mode). In slow mode "
            f"the same block is:\n\nNumerical:\n{_show(slow_n)}\nAnalytical:\n{_show(slow_a)}\n\n"
            f"The max per-element difference (slow mode) is: {np.max(np.abs(slow_n - slow_a))}.\n")


# undefined output gradients


class _UndefinedGrad(Node):
    """Identity in forward; sends an undefined (None) gradient to the node before it."""

    _op = _Named("UndefinedGradBackward")

    def __init__(self, t):
        super().__init__(self._op, (edge_of(t),), [(t._data.shape, t._dtype)], (), 1)

    def apply(self, grads):
        return (None,)


def _undefined(t):
    return Tensor._make(t._data, True, _UndefinedGrad(t), 0, t._device)


def _check_undefined_grad(func, inputs, wrt):
    """Backward must cope with outputs whose gradient is undefined: all of them at once, and,
    for several outputs, each one alone. The input gradients must then be None or zero."""
    n = len(_differentiable(func(*inputs)))
    cases = [set(range(n))] + ([{k} for k in range(n)] if n > 1 else [])
    targets = [inputs[i] for i in wrt]
    for undefined in cases:
        outs = [_undefined(o) if k in undefined else o
                for k, o in enumerate(_differentiable(func(*inputs)))]
        try:
            grads = autograd_grad(outs, targets, [o.new_zeros(o.shape) for o in outs],
                                  allow_unused=True)
        except (RuntimeError, TypeError) as e:
            raise GradcheckError(f"Expected backward function to handle undefined output grads "
                                 f"(None), but it raised: {e}") from e
        for g in grads:
            if g is not None and np.any(_numpy(g) != 0):
                raise GradcheckError("Expected backward function to handle undefined output "
                                     "grads: with undefined output gradients the input "
                                     "gradients must be None or zero.")

"""`gradcheck` / `gradgradcheck`: compare analytical gradients with finite differences.

For f: inputs -> outputs, the analytical Jacobian is built one output element at a time by
backpropagating a unit vector (vector-Jacobian products); the numerical one by central
differences, nudging one input element at a time by `eps`. Use float64 inputs: float32's
rounding swamps the differences.
"""
import numpy as np

from .._tensor import Tensor
from .engine import grad as autograd_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable(outputs):
    return [o for o in outputs if isinstance(o, Tensor) and o.dtype.is_floating_point]


def _numerical_jacobian(fn, inputs, wrt, eps):
    """J[i][j] = d out_j / d in_i, one column block per input element, by central differences."""
    columns = []
    for t in wrt:
        data = t._data  # nudged in place, element by element (any strides)
        for index in np.ndindex(data.shape):
            orig = data[index]
            data[index] = orig + eps
            plus = _flat_outputs(fn, inputs)
            data[index] = orig - eps
            minus = _flat_outputs(fn, inputs)
            data[index] = orig
            columns.append((plus - minus) / (2 * eps))
    return np.array(columns)


def _flat_outputs(fn, inputs):
    outs = _differentiable(_as_tuple(fn(*inputs)))
    if not outs:
        return np.zeros(0)
    return np.concatenate([o._data.astype(np.float64).ravel() for o in outs])  # (total input elements, total output elements)


def _analytical_jacobian(fn, inputs, wrt):
    outputs = _differentiable(_as_tuple(fn(*inputs)))
    sizes = [o.numel() for o in outputs]
    total_in = sum(t.numel() for t in wrt)
    jac = np.zeros((total_in, sum(sizes)))
    col = 0
    for o_index, out in enumerate(outputs):
        for k in range(out.numel()):
            seeds = [out.new_zeros(x.shape) for x in outputs]
            seeds[o_index]._data.reshape(-1)[k] = 1
            needs = [x for x in outputs if x.requires_grad]
            if not needs:
                col += 1
                continue
            grads = autograd_grad([x for x in outputs if x.requires_grad], wrt,
                                  [s for s, x in zip(seeds, outputs) if x.requires_grad],
                                  retain_graph=True, allow_unused=True)
            jac[:, col] = np.concatenate([
                np.zeros(t.numel()) if g is None else g._data.astype(np.float64).ravel()
                for g, t in zip(grads, wrt)])
            col += 1
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **unused):
    """True if the analytical gradients of `func` match finite differences at `inputs`."""
    inputs = _as_tuple(inputs)
    wrt = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    for t in wrt:
        if t.dtype.itemsize < 8:
            import warnings

            warnings.warn(f"Input #{inputs.index(t)} requires gradient and is not a double "
                          "precision floating point. gradcheck may fail.")
    numerical = _numerical_jacobian(func, inputs, wrt, eps)
    analytical = _analytical_jacobian(func, inputs, wrt)
    if numerical.shape != analytical.shape or not np.allclose(analytical, numerical, rtol, atol):
        if not raise_exception:
            return False
        raise GradcheckError(f"Jacobian mismatch for output 0 with respect to input 0,\n"
                             f"numerical:{numerical}\nanalytical:{analytical}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **unused):
    """gradcheck of the backward pass: checks the second derivatives of `func`."""
    inputs = _as_tuple(inputs)
    wrt = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    outputs = _differentiable(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [Tensor._make(rng.standard_normal(o.shape), True) for o in outputs]
    grad_outputs = list(_as_tuple(grad_outputs))
    n = len(inputs)

    def first_derivative(*args):
        ins, gos = args[:n], args[n:]
        outs = _differentiable(_as_tuple(func(*ins)))
        ws = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
        grads = autograd_grad(outs, ws, gos, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else w.new_zeros(w.shape) for g, w in zip(grads, ws))

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception)

"""L-BFGS with an optional strong-Wolfe line search (torch's algorithm and state).

L-BFGS keeps the last `history_size` curvature pairs

    s_k = x_{k+1} - x_k,   y_k = g_{k+1} - g_k,   rho_k = 1 / (y_k . s_k)

(a pair is kept only when y . s > 1e-10, the curvature condition) and turns the gradient
into a quasi-Newton direction d = -H g with the two-loop recursion (Nocedal & Wright,
Algorithm 7.4), starting from the scaled identity H0 = (y . s) / (y . y) of the newest pair.

The step length is `lr` (the very first one min(1, 1 / |g|_1) * lr), or, with
line_search_fn="strong_wolfe", the one found by a bracketing + zoom search that satisfies

    f(x + t d) <= f(x) + c1 t g.d            (sufficient decrease, c1 = 1e-4)
    |g(x + t d) . d| <= c2 |g.d|             (curvature, c2 = 0.9)

with safeguarded cubic interpolation for the trial steps (Nocedal & Wright, Algorithms 3.5
and 3.6). The loop stops after max_iter iterations, max_eval closure evaluations, or when the
gradient, the step or the loss change falls under its tolerance.

The whole parameter set is one flat vector here, so step() is written directly instead of the
per-parameter `_update`. Scalars computed from the flat vectors stay NumPy scalars of the
parameters' dtype -- the float32 arithmetic of torch's 0-d tensors. The state (kept under the
first parameter, as in torch) holds tensors: d, t, old_dirs, old_stps, ro, H_diag, al,
prev_flat_grad, prev_loss, func_evals, n_iter.
"""
import numpy as np  # only for the scalar sqrt in _cubic_min (it also dispatches to CuPy)

from .._backend import array_namespace
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from . import _checks as check
from .optimizer import Optimizer, _as_tensor, _to_scalar

__all__ = ["LBFGS"]

C1, C2 = 1e-4, 0.9  # the sufficient-decrease and curvature constants of the line search
# the line search stops when its interval is this small -- torch's fixed value: it does not
# pass the group's tolerance_change on
LS_TOLERANCE_CHANGE = 1e-9
_HISTORY_KEYS = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
                 "prev_loss")


class LBFGS(Optimizer):
    """L-BFGS: a quasi-Newton method; `step(closure)` runs up to `max_iter` iterations, each moving
    along `-H g`, where `H` approximates the inverse Hessian from the last `history_size` steps and
    gradient changes.

    `step` needs a closure that zeroes the gradients, recomputes the loss, calls `backward()` and
    returns the loss. Arguments, torch's names and defaults: `lr=1` (the step length),
    `max_iter=20`, `max_eval=None` (max_iter * 5 // 4), `tolerance_grad=1e-7`,
    `tolerance_change=1e-9`, `history_size=100`, `line_search_fn=None` (or "strong_wolfe"). As in
    torch, only one parameter group is allowed (ValueError otherwise)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check.lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------------------------------------
    # the parameters as one flat vector

    def _flat_grad(self):
        xp = array_namespace(self._params[0]._data)
        return xp.concatenate([p.grad._data.reshape(-1) if p.grad is not None
                               else xp.zeros(p._data.size, p._data.dtype)
                               for p in self._params])

    def _move(self, t, d):
        """x <- x + t d, parameter by parameter."""
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += t * d[offset:offset + n].reshape(p._data.shape)
            p._vc.value += 1
            offset += n

    def _set(self, arrays):
        for p, a in zip(self._params, arrays):
            p._data[...] = a
            p._vc.value += 1

    def _evaluate_at(self, closure, x, t, d):
        """f and its gradient at x + t d; the parameters are put back to x afterwards."""
        self._move(t, d)
        with enable_grad():
            loss = float(closure())
        grad = self._flat_grad()
        self._set(x)
        return loss, grad

    # ------------------------------------------------------------------------------------------

    def step(self, closure):
        """Up to max_iter L-BFGS iterations; returns the loss before the first of them."""
        group = self.param_groups[0]
        with enable_grad():
            orig_loss = closure()
        with no_grad():
            self._iterate(closure, group, float(orig_loss))
        return orig_loss

    def _iterate(self, closure, group, loss):
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        xp = array_namespace(self._params[0]._data)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        state["func_evals"] += 1
        evals = 1
        g = self._flat_grad()
        if abs(g).max() <= tol_grad:
            return
        h = {key: _unpack(state.get(key)) for key in _HISTORY_KEYS}
        if "al" in state:
            h["al"] = _unpack(state["al"])
        for n_iter in range(1, max_iter + 1):
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                h.update(d=-g, old_dirs=[], old_stps=[], ro=[], H_diag=1)
            else:
                self._remember(h, g, group["history_size"])
                state.setdefault("al", None)  # packed below; created here for torch's key order
                h["d"] = self._direction(h, g, group["history_size"])
            if h["prev_flat_grad"] is None:
                h["prev_flat_grad"] = g.copy()
            else:
                h["prev_flat_grad"][...] = g
            h["prev_loss"] = loss
            t = min(1.0, 1.0 / abs(g).sum()) * lr if state["n_iter"] == 1 else lr
            h["t"] = t
            d = h["d"]
            gtd = g.dot(d)
            if gtd > -tol_change:  # not a descent direction (any more)
                break
            if group["line_search_fn"] is not None:
                if group["line_search_fn"] != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x0 = [p._data.copy() for p in self._params]
                loss, g, t, ls_evals = _strong_wolfe(
                    lambda t_: self._evaluate_at(closure, x0, t_, d), t, d, loss, g, gtd,
                    max_ls=max_eval - evals)
                h["t"] = t
                self._move(t, d)
            else:
                self._move(t, d)
                ls_evals = 0
                if n_iter != max_iter:  # the last iteration's loss is the next step's
                    with enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            if (n_iter == max_iter or evals >= max_eval or abs(g).max() <= tol_grad
                    or abs(d * t).max() <= tol_change
                    or abs(loss - h["prev_loss"]) < tol_change):
                break
        state.update({key: _pack(value, xp) for key, value in h.items()})

    @staticmethod
    def _remember(h, g, history_size):
        """Add the newest curvature pair when y . s > 1e-10; rescale H0 = (y . s) / (y . y)."""
        y = g - h["prev_flat_grad"]
        s = h["d"] * h["t"]
        ys = y.dot(s)
        if ys > 1e-10:
            if len(h["old_dirs"]) == history_size:
                for key in ("old_dirs", "old_stps", "ro"):
                    h[key].pop(0)
            h["old_dirs"].append(y)
            h["old_stps"].append(s)
            h["ro"].append(1.0 / ys)
            h["H_diag"] = ys / y.dot(y)

    @staticmethod
    def _direction(h, g, history_size):
        """The two-loop recursion: d = -H g from the stored pairs (s_i, y_i, rho_i)."""
        dirs, steps, rho = h["old_dirs"], h["old_stps"], h["ro"]
        if h.get("al") is None:
            h["al"] = [None] * history_size
        alpha = h["al"]
        q = -g
        for i in reversed(range(len(dirs))):
            alpha[i] = steps[i].dot(q) * rho[i]
            q -= alpha[i] * dirs[i]
        r = q * h["H_diag"]
        for i in range(len(dirs)):
            beta = dirs[i].dot(r) * rho[i]
            r += (alpha[i] - beta) * steps[i]
        return r


# ----------------------------------------------------------------------------------------------
# state: tensors outside step() (so state_dicts are torch's), arrays and scalars inside


def _pack(value, xp):
    if isinstance(value, list):
        return [_pack(v, xp) for v in value]
    if value is None or type(value) in (bool, int, float):  # np.float64 is a float subclass
        return value
    return _as_tensor(xp.asarray(value))


def _unpack(value):
    if isinstance(value, list):
        return [_unpack(v) for v in value]
    if isinstance(value, Tensor):
        return value._data[()] if value.dim() == 0 else value._data
    return value


# ----------------------------------------------------------------------------------------------
# the strong-Wolfe line search


def _cubic_min(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2
    (Nocedal & Wright eq. 3.59), clamped to `bounds` (default: between x1 and x2); the middle
    of the bounds when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = np.sqrt(d2_square)  # keeps a float32 scalar float32, as torch's 0-d tensors
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


def _strong_wolfe(evaluate, t, d, f, g, gtd, max_ls=25):
    """Find t with f(x + t d) satisfying the strong Wolfe conditions; `evaluate(t)` returns
    (loss, flat gradient) at x + t d. Returns (loss, gradient, t, evaluations).

    Phase 1 (bracketing) grows t by cubic extrapolation until an interval is known to hold an
    acceptable step; phase 2 (zoom) shrinks that interval by safeguarded cubic interpolation.
    A point is (t, f, g, g.d)."""
    d_norm = abs(d).max()
    f_new, g_new = evaluate(t)
    evals = 1
    prev = (0, f, g, gtd)
    new = (t, f_new, g_new, g_new.dot(d))
    done = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        t, f_new, g_new, gtd_new = new
        if f_new > f + C1 * t * gtd or (ls_iter > 1 and f_new >= prev[1]):
            bracket = [prev, new]  # sufficient decrease failed: a minimum lies before t
            break
        if abs(gtd_new) <= -C2 * gtd:
            bracket, done = [new], True  # both conditions hold
            break
        if gtd_new >= 0:
            bracket = [prev, new]  # the slope turned: a minimum lies before t
            break
        t_next = _cubic_min(prev[0], prev[1], prev[3], t, f_new, gtd_new,
                            bounds=(t + 0.01 * (t - prev[0]), t * 10))
        prev = new
        f_next, g_next = evaluate(t_next)
        evals += 1
        new = (t_next, f_next, g_next, g_next.dot(d))
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [(0, f, g, None), (new[0], new[1], new[2], None)]
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        (a, f_a, _, gtd_a), (b, f_b, _, gtd_b) = bracket
        if abs(b - a) * d_norm < LS_TOLERANCE_CHANGE:
            break
        t = _cubic_min(a, f_a, gtd_a, b, f_b, gtd_b)
        t, insufficient_progress = _keep_inside(t, min(a, b), max(a, b), insufficient_progress)
        f_new, g_new = evaluate(t)
        evals += 1
        ls_iter += 1
        new = (t, f_new, g_new, g_new.dot(d))
        if f_new > f + C1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = new
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
            continue
        if abs(new[3]) <= -C2 * gtd:
            done = True
        elif new[3] * (bracket[high][0] - bracket[low][0]) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = new
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


def _keep_inside(t, lo, hi, insufficient_progress):
    """Keep a zoom trial at least 10% of the interval away from its ends: the first time it
    comes close it is allowed (unless outside), the next time it is pushed back in."""
    margin = 0.1 * (hi - lo)
    if not min(hi - t, t - lo) < margin:
        return t, False
    if insufficient_progress or t >= hi or t <= lo:
        t = hi - margin if abs(t - hi) < abs(t - lo) else lo + margin
        return t, False
    return t, True


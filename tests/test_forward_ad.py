"""Forward-mode AD (ember.autograd.forward_ad) against torch's.

The op table drives it: every row of tests/specs/ runs with a random tangent on each floating
input, and the output tangents are compared with torch's forward AD -- or, for an op torch has
no forward formula for, with torch's Jacobian (reverse mode) applied to the tangents. The
listing test keeps `TWO_VJPS` true: the ops whose tangent still comes from the general
fallback (two backward passes), and that no op with a rule of its own takes it.
"""
import numpy as np
import pytest

import ember
from ember.autograd import forward_ad
from ember.ops import REGISTRY

from .oracle import as_numpy, assert_close, check_raises, random_like, to_ember, to_torch
from .specs import SPECS

torch = pytest.importorskip("torch")
fwAD = torch.autograd.forward_ad

# ops with a backward rule but no forward rule: their tangent comes from two VJPs
TWO_VJPS = set("""
    _sample_dirichlet _standard_gamma adaptive_max_pool amax amin aminmax angle batch_norm
    binary_cross_entropy binary_cross_entropy_with_logits bincount binomial cdist
    cross_entropy cross_entropy_backward cross_map_lrn2d ctc_loss ctc_loss_backward cumprod
    geqrf glu group_norm gru_layer huber_loss layer_norm linalg_cholesky linalg_cholesky_ex
    linalg_det linalg_eig linalg_eigh linalg_eigvalsh linalg_inv linalg_inv_ex
    linalg_ldl_factor_ex linalg_ldl_solve linalg_lstsq linalg_lu linalg_lu_factor_ex
    linalg_matrix_exp linalg_pinv linalg_qr linalg_slogdet linalg_solve linalg_solve_ex
    linalg_svd linalg_svdvals logcumsumexp logsumexp lstm_layer max max_pool max_unpool
    median min mse_loss nanmedian nansum nll_loss norm pdist polar prod prod_dim renorm
    rms_norm rnn_layer safe_softmax scatter_legacy_reduce scatter_reduce smooth_l1_loss
    sparse_coalesce sparse_coo_tensor_values sparse_mm std std_mean tiled_max_pool
    tiled_max_pool_backward tiled_window_pick to_dense unique unique_consecutive var
    var_mean
""".split())


def _two_vjp_ops():
    return {name for name, op in REGISTRY.items()
            if op.rule is not None and op.differentiable and op.jvp_rule is None}


def test_the_fallback_listing_is_true():
    """TWO_VJPS names exactly the ops whose tangent comes from two backward passes."""
    actual = _two_vjp_ops()
    assert not actual - TWO_VJPS, f"ops on the two-VJP fallback, not listed: {actual - TWO_VJPS}"
    assert not TWO_VJPS - actual & set(REGISTRY), \
        f"listed as on the fallback, but they have a jvp rule: {TWO_VJPS - actual}"


# ----------------------------------------------------------------------------------------------
# the op table


def _floating(a):
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc" or \
        isinstance(a, np.ndarray) and a.dtype.name == "bfloat16"


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


def _ember_jvp(fn, inputs, tangents, grad=False):
    with forward_ad.dual_level():
        args = [forward_ad.make_dual(to_ember(a, grad), to_ember(t, False)) if t is not None
                else to_ember(a, grad) for a, t in zip(inputs, tangents)]
        out = fn(ember, *args)
        return [(forward_ad.unpack_dual(o).primal, forward_ad.unpack_dual(o).tangent)
                if isinstance(o, ember.Tensor) else (o, None) for o in _flat(out)]


def _torch_jvp(fn, inputs, tangents, grad=False):
    try:
        with fwAD.dual_level():
            args = [fwAD.make_dual(to_torch(a, grad), to_torch(t, False)) if t is not None
                    else to_torch(a, grad) for a, t in zip(inputs, tangents)]
            out = fn(torch, *args)
            return [(fwAD.unpack_dual(o).primal, fwAD.unpack_dual(o).tangent)
                    if isinstance(o, torch.Tensor) else (o, None) for o in _flat(out)]
    except (NotImplementedError, RuntimeError) as e:
        if "forward AD" not in str(e) and "forward-mode" not in str(e) and \
                "forward grad" not in str(e):
            raise
        return _torch_reverse_jvp(fn, inputs, tangents)


def _torch_reverse_jvp(fn, inputs, tangents):
    """J v from torch's reverse-mode Jacobian (for ops without a forward formula in torch)."""
    where = [k for k, t in enumerate(tangents) if t is not None]
    base = [to_torch(a, False) for a in inputs]

    def f(*picked):
        args = list(base)
        for k, p in zip(where, picked):
            args[k] = p
        return tuple(o for o in _flat(fn(torch, *args)) if isinstance(o, torch.Tensor))

    primals = tuple(base[k] for k in where)
    outs = f(*primals)
    jac = torch.autograd.functional.jacobian(f, primals)
    found = []
    for i, o in enumerate(outs):
        if not (o.is_floating_point() or o.is_complex()):
            found.append((o, None))
            continue
        total = torch.zeros(o.shape, dtype=o.dtype)
        for j, k in enumerate(where):
            block = jac[i][j].reshape(o.numel(), -1)
            total = total + (block @ to_torch(tangents[k], False).reshape(-1).to(block.dtype)
                             ).reshape(o.shape).to(o.dtype)
        found.append((o, total))
    return found


# rows whose tangents do not yet match torch's (strict: each must fail, so a fix shows up here)
_WRONG_TANGENT = "tangent differs from torch's"
_TORCH_HAS_NONE = "torch gives no tangent (or no forward formula) where ember gives one"
KNOWN_WRONG = {
    **dict.fromkeys(["pow_complex-4", "pow_complex-5", "pow_complex-6", "pow_complex-7"],
                    "complex pow: " + _WRONG_TANGENT),
    **dict.fromkeys(["cholesky_inverse-0", "cholesky_inverse-1", "triangular_solve-0",
                     "triangular_solve-1", "linalg_eigh_triangle-0", "lstsq_gelsd-0"],
                    "linalg: " + _WRONG_TANGENT),
    **dict.fromkeys(["scatter_reduce_prod-0", "scatter_reduce_prod-1",
                     "scatter_reduce_prod_zeros-0", "scatter_reduce_exclude-0",
                     "scatter_reduce_exclude-1", "scatter_reduce_exclude-3",
                     "scatter_reduce_exclude-4"], "scatter_reduce: " + _TORCH_HAS_NONE),
    **dict.fromkeys(["maximum_ties_nan-0", "fmax_fmin-9", "median-7", "nanmedian-4",
                     "logcumsumexp-3", "segment_reduce-0", "segment_reduce-1", "as_strided-1",
                     "igamma-4", "igammac-2", "zeta-3", "zeta-4"],
                    "ties, nan or infinities: " + _WRONG_TANGENT),
    **dict.fromkeys(["cross_map_lrn2d-0", "cross_map_lrn2d-1"],
                    "torch's LRN Function has no jvp; the reverse-mode oracle is not wired"),
    **dict.fromkeys(["ctc_loss-0", "sparse_mm-3", "igamma-2", "zeta-2"],
                    "torch has no forward formula and its reverse-mode oracle fails too"),
    **dict.fromkeys(["view_dtype-0", "view_dtype-1", "view_dtype_strided-0", "bfloat16-0"],
                    "view(dtype) has no jvp rule yet"),
    "transpose_-0": "in-place transpose_ on a dual tensor breaks the tangent's layout",
    "view_copies-1": "a view copy on a dual tensor gives a non-viewable tangent",
}


def _jvp_case(spec, i):
    name = f"{spec.name}-{i}"
    marks = [pytest.mark.xfail(reason=KNOWN_WRONG[name], strict=True)] \
        if name in KNOWN_WRONG else []
    return pytest.param(spec, i, id=name, marks=marks)


def _has_tangent_input(spec, case):
    return any(_floating(a) and a.size for a in spec.inputs(case))


# rows without a non-empty floating input have no tangent to push: not cases of this test
JVP_CASES = [_jvp_case(spec, i) for spec in SPECS if spec.grad for i in range(len(spec.cases))
             if _has_tangent_input(spec, i)]


@pytest.mark.parametrize("spec,case", JVP_CASES)
def test_jvp_against_torch(spec, case):
    inputs = spec.inputs(case)
    rng = np.random.default_rng(case)
    tangents = [random_like(rng, a) if _floating(a) else None for a in inputs]
    before = dict(forward_ad.FALLBACKS)
    grad = False
    try:
        ours = _ember_jvp(spec.fn, inputs, tangents)
    except RuntimeError as e:  # a row that differentiates inside: its inputs must be leaves
        if "require grad" not in str(e):
            raise
        grad = True
        ours = _ember_jvp(spec.fn, inputs, tangents, grad)
    theirs = _torch_jvp(spec.fn, inputs, tangents, grad)
    assert len(ours) == len(theirs)
    rtol = spec.grad_rtol if spec.grad_rtol is not None else (spec.rtol or 1e-4)
    atol = spec.grad_atol if spec.grad_atol is not None else (spec.atol or 1e-5)
    for k, ((e_out, e_t), (t_out, t_t)) in enumerate(zip(ours, theirs)):
        assert_close(e_out, t_out, spec.rtol, spec.atol, f"primal[{k}]")
        if not isinstance(t_out, torch.Tensor) or not (t_out.is_floating_point() or
                                                        t_out.is_complex()):
            continue
        if t_t is None:
            assert e_t is None or not np.any(as_numpy(e_t)), f"tangent[{k}]: torch has none"
            continue
        if t_t._is_zerotensor():  # torch's symbolic zero
            t_t = torch.zeros(t_t.shape, dtype=t_t.dtype)
        if e_t is None:
            e_t = ember.zeros(tuple(t_out.shape), dtype=e_out.dtype)
        half = str(t_out.dtype).split(".")[-1] in ("float16", "bfloat16")
        assert_close(e_t, t_t.to(t_out.dtype), max(rtol, 1e-2) if half else rtol,
                     max(atol, 1e-2) if half else atol, f"tangent[{k}]")
    _no_undeclared_fallback(before)


def _no_undeclared_fallback(before):
    used = {name for name, n in forward_ad.FALLBACKS.items() if n > before.get(name, 0)}
    assert used <= TWO_VJPS, f"ops took the two-VJP fallback but are not listed: {used}"


def test_every_op_with_a_jvp_rule_is_in_the_table():
    covered = {name for spec in SPECS if spec.grad for name in spec.ops}
    with_rule = {name for name, op in REGISTRY.items() if op.jvp_rule is not None}
    backward_only = {name for name in with_rule if name.endswith(("_backward", "_grad"))}
    missing = sorted(with_rule - covered - backward_only - _BACKWARD_OPS)
    assert not missing, f"ops with a jvp rule that no table row checks: {missing}"


# ops that only run inside backward rules: their tangents are checked through hessian and
# forward-over-reverse in tests/test_func.py
_BACKWARD_OPS = {"view_scatter", "basic_index_backward", "index_backward", "sum_to_size",
                 "tanh_backward", "sigmoid_backward", "threshold_backward", "embedding_backward",
                 "conv_input_grad", "conv_weight_grad", "unfold_backward",
                 "as_strided_backward", "repeat_interleave_backward", "window_sum_backward",
                 # no table row can reach these: heaviside has no derivative (its rule refuses,
                 # as torch's), and to_device moves between devices (one device on the CPU)
                 "heaviside", "to_device"}


# ----------------------------------------------------------------------------------------------
# the API


def test_dual_level_make_dual_unpack_dual():
    x, t = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)

    def run(m, fw):
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x), m.tensor(t))
            y = (d * d).sin()
            primal, tangent = fw.unpack_dual(y)
            return primal, tangent, fw.unpack_dual(m.tensor(x)).tangent, type(fw.unpack_dual(y))

    e = run(ember, forward_ad)
    t_ = run(torch, fwAD)
    assert_close(list(e[:2]), list(t_[:2]))
    assert e[2] is None and t_[2] is None
    assert e[3].__name__ == "UnpackedDualTensor" and e[3]._fields == ("primal", "tangent")


def test_tangents_are_stored_as_given_and_dropped_after_the_level():
    t = ember.ones(3)
    with forward_ad.dual_level():
        d = forward_ad.make_dual(ember.zeros(3), t)
        assert forward_ad.unpack_dual(d).tangent is t
        assert d._base is not None  # a view of the primal, as torch's
    assert forward_ad.unpack_dual(d).tangent is None


def test_make_dual_needs_a_level():
    check_raises(lambda m: (fwAD if m is torch else forward_ad).make_dual(m.ones(3), m.ones(3)),
                 match="no level exists")


def test_levels_do_not_nest_and_exit_needs_one():
    for m, fw in ((torch, fwAD), (ember, forward_ad)):
        with fw.dual_level():
            with pytest.raises(RuntimeError, match="Nested forward mode AD"):
                fw.enter_dual_level()
    check_raises(lambda m: (fwAD if m is torch else forward_ad).exit_dual_level())


@pytest.mark.parametrize("primal,tangent", [
    (np.ones(3, np.float32), np.ones(2, np.float32)),   # size mismatch
    (np.arange(3), np.ones(3, np.float32)),             # integer primal
    (np.ones(3, np.float32), np.arange(3)),             # integer tangent
])
def test_make_dual_errors(primal, tangent):
    def fn(m, p, t):
        fw = fwAD if m is torch else forward_ad
        with fw.dual_level():
            fw.make_dual(p, t)

    check_raises(fn, [primal, tangent])


def test_make_dual_twice_at_one_level_is_refused():
    def fn(m):
        fw = fwAD if m is torch else forward_ad
        with fw.dual_level():
            d = fw.make_dual(m.zeros(3), m.ones(3))
            fw.make_dual(d, m.ones(3))

    check_raises(fn, match="already has a forward gradient")


def test_in_place_ops_update_the_tangent():
    def run(m, fw):
        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 0.0, 2.0]))
            e = d * 1
            e.mul_(d)
            y = m.zeros(3)
            y[0] = d[1] * 3  # a view of a tensor without a tangent: the base gets one
            return fw.unpack_dual(e).tangent, fw.unpack_dual(y).tangent

    assert_close(list(run(ember, forward_ad)), list(run(torch, fwAD)))


def test_reverse_over_forward():
    """Tangents are ordinary tensors: autograd differentiates them (d/dx of x -> J(x) v)."""
    def run(m, fw):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, m.tensor([1.0, 2.0, 3.0]))
            tangent = fw.unpack_dual((d.exp() * d).sum()).tangent
        return m.autograd.grad(tangent, x)[0]

    assert_close(run(ember, forward_ad), run(torch, fwAD))


def test_an_op_without_either_rule_is_refused():
    """The fused softmax backward kernel has no rules of its own: a tangent flowing into it is
    an error, not a silent zero (the rules use it only where no tangent can reach it)."""
    with forward_ad.dual_level():
        d = forward_ad.make_dual(ember.ones(2, 3), ember.ones(2, 3))
        with pytest.raises(NotImplementedError, match="neither a jvp rule nor a backward rule"):
            REGISTRY["softmax_backward"](d, ember.ones(2, 3), dim=1)


def test_custom_function_jvp():
    def run(m, fw):
        class Mul(m.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(*inputs)

            @staticmethod
            def jvp(ctx, x_t, y_t):
                x, y = ctx.saved_tensors
                return x_t * y + x * y_t

        with fw.dual_level():
            d = fw.make_dual(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0]))
            return fw.unpack_dual(Mul.apply(d, m.tensor([5.0, 6.0]))).tangent

    assert_close(run(ember, forward_ad), run(torch, fwAD))


def test_custom_function_without_jvp_is_refused():
    def fn(m):
        fw = fwAD if m is torch else forward_ad

        class Double(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        with fw.dual_level():
            Double.apply(fw.make_dual(m.ones(2), m.ones(2)))

    check_raises(fn, match="jvp")


def test_functional_jacobian_strategies():
    x = np.random.default_rng(0).standard_normal(4).astype(np.float64)

    def fn(m, a):
        f = lambda v: (v.sin() * v.sum(), v[:2].exp())  # noqa: E731
        return (m.autograd.functional.jacobian(f, a, vectorize=True),
                m.autograd.functional.jacobian(f, a, vectorize=True, strategy="forward-mode"),
                m.autograd.functional.hessian(lambda v: (v ** 3).sum(), a, vectorize=True,
                                              outer_jacobian_strategy="forward-mode"))

    e = fn(ember, to_ember(x, False))
    t = fn(torch, to_torch(x, False))
    assert_close(e, tuple(_detach(t)))


def _detach(x):
    if isinstance(x, tuple):
        return tuple(_detach(y) for y in x)
    return x.detach()


@pytest.mark.parametrize("kwargs", [dict(strategy="forward-mode"),
                                    dict(strategy="forward-mode", vectorize=True,
                                         create_graph=True),
                                    dict(strategy="forward-mode", vectorize=True, strict=True),
                                    dict(vectorize=True, strict=True)])
def test_functional_jacobian_refusals(kwargs):
    check_raises(lambda m, a: m.autograd.functional.jacobian(lambda v: v * 2, a, **kwargs),
                 [np.ones(3)])

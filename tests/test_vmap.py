"""vmap (ember.vmap, ember.func.vmap) against a Python loop and against torch.vmap.

The op table drives it: every row of tests/specs/ runs with its floating inputs batched (three
samples drawn as the row draws them), and the result must equal the row run on each sample and
stacked -- and torch.vmap's result where torch can batch the row (where torch refuses, ember
must refuse too). The listing test keeps `PER_SAMPLE` true: the ops that still run once per
sample under vmap (no batching rule). Behaviour beyond the table -- in_dims/out_dims, nesting,
chunk_size, randomness, and torch's errors -- follows.
"""
import numpy as np
import pytest

import ember
from ember._functorch.vmap import FALLBACKS
from ember.ops import REGISTRY

from .oracle import as_numpy, assert_close, check_raises, to_ember, to_torch
from .specs import SPECS
from .specs._spec import Maker

torch = pytest.importorskip("torch")

BATCH = 3


def _per_sample_ops():
    return {name for name, op in REGISTRY.items() if op.batch_rule is None}


# ops without a batching rule: under vmap they run once per sample (counted in FALLBACKS)
PER_SAMPLE = set("""
    _sample_dirichlet _standard_gamma _standard_gamma_grad as_strided as_strided_backward
    bincount binomial ctc_loss ctc_loss_backward gru_layer gru_layer_backward histc
    histogramdd isin linalg_ldl_solve linalg_lstsq linalg_solve linalg_solve_ex lstm_layer
    lstm_layer_backward masked_scatter masked_select nonzero nonzero_tuple pdist put
    rnn_layer rnn_layer_backward searchsorted segment_ids sparse_coalesce
    sparse_coo_tensor_values sparse_mm take to_dense unique unique_consecutive
""".split())


def test_the_fallback_listing_is_true():
    """PER_SAMPLE names exactly the ops that have no batching rule."""
    actual = _per_sample_ops()
    assert not actual - PER_SAMPLE, f"without a batching rule, not listed: {actual - PER_SAMPLE}"
    assert not PER_SAMPLE - actual, f"listed, but have a batching rule: {PER_SAMPLE - actual}"


# ----------------------------------------------------------------------------------------------
# the op table


def _floating(a):
    return isinstance(a, np.ndarray) and (a.dtype.kind in "fc" or a.dtype.name == "bfloat16")


def _samples(spec, case):
    """BATCH draws of the case: floating inputs differ per sample, the others are shared."""
    first = spec.inputs(case)
    draws = [first] + [[x.build(np.random.default_rng(7 * k + case)) if isinstance(x, Maker)
                        else x for x in spec.cases[case]] for k in range(1, BATCH)]
    batched = [_floating(a) and a.ndim < 6 for a in first]
    stacked = [np.stack([d[i] for d in draws]) if b else first[i]
               for i, b in enumerate(batched)]
    return stacked, batched, [[d[i] if b else first[i] for i, b in enumerate(batched)]
                              for d in draws]


def _tensors(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _tensors(item)]
    return [x]


def _run(m, convert, spec, stacked, batched):
    args = [convert(a, False) for a in stacked]
    in_dims = tuple(0 if b else None for b in batched)
    out = m.vmap(lambda *xs: spec.fn(m, *xs), in_dims=in_dims)(*args)
    return _tensors(out)


def _loop(spec, samples):
    """The row run on each sample and stacked: torch tensors holding ember's values."""
    per = [_tensors(spec.fn(ember, *[to_ember(a, False) for a in s])) for s in samples]
    return [_as_torch(ember.stack([p[k] for p in per])) for k in range(len(per[0]))]


def _as_torch(t):
    values = as_numpy(t)
    if t.dtype is ember.bfloat16:
        return torch.from_numpy(values.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(values))


# rows that do not yet batch as a loop (or as torch.vmap) does; strict, so a fix shows up here
KNOWN_WRONG = {
    **dict.fromkeys(["lu_unpack_partial-0", "lu_unpack_partial-1", "lu_unpack-0", "lu_unpack-1",
                     "lu_factor-0", "linalg_lu_solve-0", "linalg_lu_solve-1",
                     "linalg_ldl_factor_ex-0", "linalg_ldl_factor_ex-1", "linalg_ldl_factor_ex-2",
                     "linalg_ldl_factor_ex-3", "linalg_ldl_solve-0", "linalg_ldl_solve-1"],
                    "the LU/LDL wrappers branch on tensor values (pivots, info)"),
    **dict.fromkeys(["where_complex-0", "where_complex-1", "where_complex-2", "where_complex-3",
                     "masked_inplace-0", "as_strided-1", "segment_reduce-0", "segment_reduce-1",
                     "quantile-0", "quantile-1", "quantile-2", "quantile_interpolation-0",
                     "quantile_interpolation-1", "quantile_0d-0", "nanquantile-0",
                     "binary_half-0", "binary_half-1", "binary_half-2"],
                    "the wrapper reads a batched tensor's values outside the ops"),
    **dict.fromkeys(["argmax_0d-0", "sort_0d-0", "median_0d-0", "cumsum_dtype_0d-0",
                     "cumprod_0d-0", "cummax_0d-0", "logcumsumexp_0d-0", "softmax-1",
                     "log_softmax-1", "prod_0d_dtype-0", "max_dim_0d-0", "mode_0d-0",
                     "topk_0d-0", "unfold_0d-0"],
                    "an op along a dim of a 0-d sample: the rule shifts the dim past the batch"),
    **dict.fromkeys(["view_as_complex-0", "view_as_complex-1", "view_as_complex-2",
                     "fill_diagonal_cube-0"], "the wrapper reads a batched tensor's storage"),
    **dict.fromkeys(["linalg_matrix_exp-1", "addmm_beta0-0", "roll_0d-0",
                     "as_strided_scatter-0"], "values differ from the loop"),
    **dict.fromkeys(["binary_cross_entropy_with_logits-1", "addcmul-3"],
                    "torch.vmap promotes a batched 0-d operand as a dimensioned one; ember "
                    "keeps each sample's promotion (it matches the loop)"),
    **dict.fromkeys(["argmax-0", "argmax-1", "any_all-2"],
                    "keepdim/dim=None reductions: a result shape differs from torch.vmap's"),
    **dict.fromkeys(["cat_legacy_empty-0", "cat_legacy_empty-1"],
                    "cat's legacy empty (0,) operands under vmap"),
    "cdist-1": "cdist's batching rule with broadcast batch dims",
    "max_unpool-0": "max_unpool's wrapper checks index values with .item()",
    **dict.fromkeys(["alias-0", "alias-1"], "alias of a BatchedTensor (subclass swap)"),
}


def _vmap_case(spec, i):
    name = f"{spec.name}-{i}"
    marks = [pytest.mark.xfail(reason=KNOWN_WRONG[name], strict=True)] \
        if name in KNOWN_WRONG else []
    return pytest.param(spec, i, id=name, marks=marks)


def _has_batchable_input(spec, case):
    return any(_floating(a) and a.ndim < 6 for a in spec.inputs(case))


# rows without a floating input have nothing to batch: they are not cases of this test
VMAP_CASES = [_vmap_case(spec, i) for spec in SPECS for i in range(len(spec.cases))
              if _has_batchable_input(spec, i)]


@pytest.mark.parametrize("spec,case", VMAP_CASES)
def test_vmap_against_a_loop_and_torch(spec, case):
    stacked, batched, samples = _samples(spec, case)
    try:
        theirs = _run(torch, to_torch, spec, stacked, batched)
    except (RuntimeError, ValueError, NotImplementedError, TypeError, IndexError):
        theirs = None  # torch.vmap refuses this row
    try:
        ours = _run(ember, to_ember, spec, stacked, batched)
    except (RuntimeError, ValueError, NotImplementedError, TypeError, IndexError):
        if theirs is None:
            return  # both refuse
        raise
    loop = _loop(spec, samples)
    assert len(ours) == len(loop)
    assert_close(ours, loop, spec.rtol, spec.atol, "vmap vs loop")
    if theirs is not None:
        assert_close(ours, [t.detach() if hasattr(t, "detach") else t for t in theirs],
                     spec.rtol, spec.atol, "vmap vs torch.vmap")


# ----------------------------------------------------------------------------------------------
# the transform


X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float32)


def _both(fn, *arrays):
    ours = fn(ember, *[to_ember(a, False) for a in arrays])
    theirs = fn(torch, *[to_torch(a, False) for a in arrays])
    assert_close(ours, theirs)


def test_in_dims_out_dims_and_pytrees():
    _both(lambda m, x, w: m.vmap(lambda a, b: a @ b, in_dims=(1, None))(x.T, w), X, W)
    _both(lambda m, x, w: m.vmap(lambda a, b: a @ b, in_dims=(0, None), out_dims=1)(x, w), X, W)
    _both(lambda m, x, w: m.vmap(lambda d: (d["a"].sum(), d["a"] * 2))({"a": x}), X, W)
    _both(lambda m, x, w: m.vmap(lambda a, s: a * s, in_dims=(0, None))(x, 3.0), X, W)


def test_nested_vmap_and_chunk_size():
    _both(lambda m, x, w: m.vmap(m.vmap(lambda a, b: a * b, in_dims=(0, None)),
                                 in_dims=(None, 1))(x, w), X, W[:, :1].repeat(4, 1)[:3])
    _both(lambda m, x, w: m.vmap(lambda a: a.softmax(0), chunk_size=3)(x), X, W)
    _both(lambda m, x, w: m.func.vmap(m.outer)(x, x), X, W)


def test_per_sample_gradients_of_a_linear_model():
    def run(m, x, w):
        def loss(weight, sample):
            return (sample @ weight).tanh().sum()

        return m.vmap(m.func.grad(loss), in_dims=(None, 0))(w, x)

    _both(run, X, W)


def test_randomness():
    check_raises(lambda m, x: m.vmap(lambda a: a + m.rand(3))(x), [X], match="randomness")

    def same(m, x):
        out = m.vmap(lambda a: m.rand(3) + a * 0, randomness="same")(x)
        return bool((out == out[0]).all())

    def different(m, x):
        out = m.vmap(lambda a: m.rand(3) + a * 0, randomness="different")(x)
        return bool((out[0] != out[1]).any())

    x = to_ember(X, False)
    assert same(ember, x) and different(ember, x)
    check_raises(lambda m, x: m.vmap(lambda a: a, randomness="sometimes")(x), [X])


def test_errors_as_torch():
    check_raises(lambda m, x: m.vmap(lambda a: a.item())(x), [X[:, 0]])
    check_raises(lambda m, x: m.vmap(lambda a: a if a.sum() > 0 else -a)(x), [X])
    check_raises(lambda m, x, w: m.vmap(lambda a: w.add_(a))(x), [X, X[0]])
    check_raises(lambda m, x: m.vmap(lambda a: a, in_dims=2)(x), [X])
    check_raises(lambda m, x, w: m.vmap(lambda a, b: a + b)(x, w), [X, W])  # sizes differ
    check_raises(lambda m, x: m.vmap(lambda a: a, in_dims=(0, 0))(x), [X])


def test_in_place_on_a_batched_tensor_is_allowed():
    _both(lambda m, x: m.vmap(lambda a: a.clone().mul_(2).add_(1))(x), X)


def test_autograd_grad_is_grads_batched():
    def run(m, x):
        x = x.clone().requires_grad_()
        y = x.sin()
        basis = m.eye(4)[:, :, None].expand(4, 4, 3)
        return m.autograd.grad(y, x, basis, is_grads_batched=True)[0]

    _both(run, X)


def test_the_fallback_is_counted_and_matches_a_loop():
    """An op without a batching rule (pdist) runs once per sample, and is counted."""
    before = FALLBACKS["pdist"]
    _both(lambda m, x: m.vmap(m.nn.functional.pdist)(x), np.stack([X, X * 2]))
    assert FALLBACKS["pdist"] == before + 1

"""How functions are called, against torch: `out=`, keyword names, NumPy-style aliases, factory
keyword forms and module-level in-place functions (ember/ops/_public.py and the op modules).

Torch's own signatures are the reference: its type stubs (`torch/_C/*.pyi`, generated from the
same declarations as its argument parser) list every overload's parameter names and whether it
takes `out`; Python-level functions are read with `inspect.signature`; torch.linalg, special
and fft functions with their docstrings' signature lines.
"""
import ast
import inspect
import os
import warnings

import numpy as np
import pytest

import ember
from ember.ops import _public

from .oracle import as_numpy, assert_close, check, check_raises
from .out_calls import CALLS, INPUTS

torch = pytest.importorskip("torch")

_STUBS = os.path.join(os.path.dirname(torch.__file__), "_C")


def _stub_overloads(filename, cls=None):
    """{name: [[parameter names of one overload], ...]} from one of torch's .pyi stubs."""
    with open(os.path.join(_STUBS, filename)) as f:
        body = ast.parse(f.read()).body
    if cls is not None:
        body = next(n for n in body if isinstance(n, ast.ClassDef) and n.name == cls).body
    found = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
            found.setdefault(node.name, []).append(names)
    return found


TORCH_FUNCTIONS = _stub_overloads("_VariableFunctions.pyi")
TENSOR_METHODS = _stub_overloads("__init__.pyi", "TensorBase")


def _resolve(lib, dotted):
    obj = lib
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# ----------------------------------------------------------------------------------------------
# out=: which functions take it


# torch functions with out= that ember leaves out of OUT, with the reason
OUT_EXCLUDED = {
    "batch_norm_elemt": "a CUDA kernel of SyncBatchNorm",
    "cudnn_batch_norm": "backend-specific kernel",
    "cudnn_convolution": "backend-specific kernel",
    "mkldnn_adaptive_avg_pool2d": "backend-specific kernel",
    "native_batch_norm": "ATen internal (F.batch_norm is the public function)",
    "lstsq": "removed: torch's stub raises, pointing to torch.linalg.lstsq",
    "matrix_rank": "removed: torch's stub raises, pointing to torch.linalg.matrix_rank",
    "solve": "removed: torch's stub raises, pointing to torch.linalg.solve",
    "symeig": "removed: torch's stub raises, pointing to torch.linalg.eigh",
}


def _torch_out_names():
    """{namespace: names} of torch's functions that accept out= (torch 2.13)."""
    names = {"torch": {n for n, sigs in TORCH_FUNCTIONS.items()
                       if not n.startswith("_") and any("out" in s for s in sigs)}}
    for n in dir(torch):  # Python-level functions (torch/functional.py and friends)
        fn = getattr(torch, n)
        if not n.startswith("_") and n not in TORCH_FUNCTIONS and inspect.isfunction(fn):
            if "out" in inspect.signature(fn).parameters:
                names["torch"].add(n)
    for namespace in ("linalg", "special", "fft"):
        module = getattr(torch, namespace)
        names[namespace] = {n for n in dir(module) if not n.startswith("_") and "out=None" in
                            (getattr(module, n).__doc__ or "").split("\n\n")[0]}
    names["torch"] -= set(OUT_EXCLUDED)
    nn_stubs = _stub_overloads("_nn.pyi")
    names["nn.functional"] = set()
    for n in dir(torch.nn.functional):
        fn = getattr(torch.nn.functional, n)
        if inspect.isbuiltin(fn):
            sigs = nn_stubs.get(fn.__name__) or TORCH_FUNCTIONS.get(fn.__name__) or []
            if any("out" in sig for sig in sigs):
                names["nn.functional"].add(n)
        elif inspect.isfunction(fn) and "out" in inspect.signature(fn).parameters:
            names["nn.functional"].add(n)
    return names


def test_out_list_is_torchs():
    """OUT (and, for F.normalize, whose out is positional, the signature) lists what torch's
    signatures say takes out=."""
    torch_names = _torch_out_names()
    for namespace, groups in _public.OUT.items():
        ember_names = {n for names in groups.values() for n in names.split()}
        if namespace == "nn.functional":
            ember_names |= {n for n in dir(ember.nn.functional) if not n.startswith("_") and
                            "out" in (_accepted_keywords(getattr(ember.nn.functional, n)) or ())}
        assert ember_names == torch_names[namespace], (
            f"{namespace}: missing from ember's OUT {sorted(torch_names[namespace] - ember_names)}"
            f", not torch's {sorted(ember_names - torch_names[namespace])}")


def test_every_out_function_has_a_sample_call():
    missing = [f"{ns}.{n}" if ns != "torch" else n
               for ns, groups in _public.OUT.items() for names in groups.values()
               for n in names.split()
               if _resolve(ember, n if ns == "torch" else f"{ns}.{n}") is not None]
    missing = [n for n in missing if n not in CALLS and n not in RANDOM]
    assert not missing, f"add a call to tests/out_calls.py for {missing}"


# ----------------------------------------------------------------------------------------------
# out=: behaviour, function by function

RANDOM = {  # draws: only the shape, dtype and identity of the result are compared
    "rand": lambda m, d: (m.rand, (2, 3), {}),
    "randn": lambda m, d: (m.randn, (2, 3), {}),
    "randint": lambda m, d: (m.randint, (0, 5, (2, 3)), {}),
    "randperm": lambda m, d: (m.randperm, (5,), {}),
    "normal": lambda m, d: (m.normal, (0.0, 1.0, (2, 3)), {}),
    "bernoulli": lambda m, d: (m.bernoulli, (d["probs"],), {}),
    "multinomial": lambda m, d: (m.multinomial, (d["probs"], 2), {}),
}


def _library_inputs(lib):
    make = ember.from_numpy if lib is ember else torch.from_numpy
    return {k: make(v.copy()) for k, v in INPUTS.items()}


def _present(name):
    return _resolve(ember, name) is not None and _resolve(torch, name) is not None


OUT_NAMES = sorted(n for n in CALLS if _present(n))


def _other_dtype(lib, dtype):
    """Another dtype for out: float32 -> float64, int64 -> int32, bool -> float32, ..."""
    table = {"float32": "float64", "int64": "int32", "bool": "float32", "float64": "float32",
             "int32": "int64", "uint64": "int64", "complex64": "complex128",
             "complex128": "complex64"}
    return getattr(lib, table[str(dtype).split(".")[-1]])


def _outs(lib, result, shape=None, dtype=None):
    """Empty-ish outs like `result`: a tensor, or a tuple of them for several results."""
    def one(r):
        return lib.empty(r.shape if shape is None else shape,
                         dtype=r.dtype if dtype is None else dtype(lib, r.dtype))
    return tuple(one(r) for r in result) if isinstance(result, (tuple, list)) else one(result)


def _run(lib, name, make_out, table=CALLS):
    """Call `name` in `lib` with out=make_out(lib, plain result): (result, out, warnings)."""
    fn, args, kwargs = table[name](lib, _library_inputs(lib))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation warnings of old names
        plain = fn(*args, **kwargs)
    out = make_out(lib, plain)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs, out=out)
    resized = [w for w in seen if "was resized" in str(w.message)]
    return result, out, resized


def _plain(lib, name, table=CALLS):
    fn, args, kwargs = table[name](lib, _library_inputs(lib))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _assert_same_values(out, plain, name):
    if isinstance(plain, (tuple, list)):
        for o, p in zip(out, plain):
            _assert_same_values(o, p, name)
        return
    np.testing.assert_array_equal(as_numpy(out), as_numpy(plain), err_msg=name)


def _assert_like(e, t, name):
    """Same structure, shapes and dtypes."""
    if isinstance(t, (tuple, list)):
        assert isinstance(e, (tuple, list)) and len(e) == len(t), name
        for ei, ti in zip(e, t):
            _assert_like(ei, ti, name)
        return
    assert tuple(e.shape) == tuple(t.shape), f"{name}: shape {tuple(e.shape)} != {t.shape}"
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], \
        f"{name}: dtype {e.dtype} != {t.dtype}"


def _same_objects(result, out):
    if result is None:  # a list of outs (split_copy, unbind_copy): torch returns nothing
        return isinstance(out, tuple)
    if isinstance(out, tuple):
        return len(result) == len(out) and all(r is o for r, o in zip(result, out))
    return result is out


@pytest.mark.parametrize("name", OUT_NAMES)
def test_out_of_the_right_size(name):
    for make_out in (lambda lib, r: _outs(lib, r), lambda lib, r: _outs(lib, r, shape=(0,)),
                     lambda lib, r: _outs(lib, r, shape=(7,))):
        try:
            t_result, t_out, t_warned = _run(torch, name, make_out)
        except RuntimeError:  # split_copy copies into its outs: their shapes must broadcast
            with pytest.raises(RuntimeError):
                _run(ember, name, make_out)
            continue
        e_result, e_out, e_warned = _run(ember, name, make_out)
        assert _same_objects(e_result, e_out) and _same_objects(t_result, t_out)
        # the values are the plain call's (its numerics are tested elsewhere); shapes, dtypes
        # and the resize warning are torch's
        _assert_same_values(e_out, _plain(ember, name), name)
        _assert_like(e_out, t_out, name)
        assert bool(e_warned) == bool(t_warned), f"{name}: the resize warning"


@pytest.mark.parametrize("name", OUT_NAMES)
def test_out_of_another_dtype(name):
    """Each function checks out's dtype as torch's does: cast into it, or refuse it."""
    def make_out(lib, r):
        return _outs(lib, r, shape=(0,), dtype=_other_dtype)
    try:
        t_result, t_out, _ = _run(torch, name, make_out)
    except (RuntimeError, TypeError, NotImplementedError) as error:
        with pytest.raises(type(error)):
            _run(ember, name, make_out)
        return
    e_result, e_out, _ = _run(ember, name, make_out)
    assert _same_objects(e_result, e_out)
    # torch computes in the inputs' dtype and casts into out: float32 tolerances
    assert_close(e_out, t_out, 1e-4, 1e-5, f"{name}(out=<another dtype>)")


@pytest.mark.parametrize("name", sorted(n for n in RANDOM if _present(n)))
def test_out_of_random_draws(name):
    for shape in (None, (0,)):
        e_result, e_out, _ = _run(ember, name, lambda lib, r: _outs(lib, r, shape), RANDOM)
        t_result, t_out, _ = _run(torch, name, lambda lib, r: _outs(lib, r, shape), RANDOM)
        assert e_result is e_out and tuple(e_out.shape) == tuple(t_out.shape)
        assert str(e_out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1]


def test_factories_take_out_dtype_and_refuse_another_one():
    def fn(m):
        ints = m.zeros(2, 3, out=m.empty(0, dtype=m.int64))
        steps = m.arange(5, out=m.empty(0, dtype=m.float64))
        full = m.full((2,), 7, out=m.empty(2, dtype=m.int32))
        return ints, steps, full

    check(fn, [], grad=False)
    check_raises(lambda m: m.zeros(2, dtype=m.float32, out=m.empty(2, dtype=m.float64)), [],
                 match="does not match dtype of out parameter")


def test_sum_and_cumsum_compute_in_outs_dtype():
    x = np.array([[1.5, 2.7], [3.2, -1.6]], dtype=np.float32)
    check(lambda m, a: (m.sum(a, 1, out=m.empty(0, dtype=m.int64)),
                        m.cumsum(a, 1, out=m.empty(0, dtype=m.int64))), [x], grad=False)


X = INPUTS["x"]


def test_out_refuses_autograd_but_not_under_no_grad():
    check_raises(lambda m, a: m.exp(a.requires_grad_(), out=m.empty(2, 3)), [X],
                 match="don't support automatic differentiation")
    check_raises(lambda m, a: m.exp(a, out=m.empty(2, 3, requires_grad=True)), [X],
                 match="don't support automatic differentiation")

    def fn(m, a):
        out = m.empty(2, 3)
        with m.no_grad():
            m.mul(a.requires_grad_(), 2, out=out)
        return out

    check(fn, [X], grad=False)


def test_out_must_be_a_tensor_or_a_tuple_of_them():
    check_raises(lambda m, a: m.exp(a, out=[1]), [X])
    check_raises(lambda m, a: m.max(a, 1, out=m.empty(0)), [X])


def test_out_may_be_an_input_or_non_contiguous():
    def fn(m, a):
        a = a.clone()
        m.add(a, 1, out=a)
        t = m.zeros(3, 2).t()
        m.mul(a, 2, out=t)
        return a, t, t.is_contiguous()

    check(fn, [X], grad=False)


def test_methods_do_not_take_out():
    check_raises(lambda m, a: a.add(1, out=m.empty(2, 3)), [X])


def test_normalize_takes_out():
    check(lambda m, a: m.nn.functional.normalize(a, out=m.empty(0)), [X], grad=False)


def test_resize_warning_points_at_the_caller():
    with pytest.warns(UserWarning, match="was resized") as seen:
        ember.exp(ember.ones(3), out=ember.empty(2))
    assert seen[0].filename == __file__


# ----------------------------------------------------------------------------------------------
# keyword names: every keyword torch's signatures give, ember accepts

# (namespace, name): {torch keyword: why ember does not take it}
KEYWORD_EXCLUDED = {
    ("torch", "full"): {"names": "named tensors (an experimental torch feature ember lacks)"},
    ("torch", "set_num_threads"): {"num": "torch's stub names it, but torch takes no keywords"},
    ("Tensor", "requires_grad_"): {"mode": "torch's stub names it `mode`; torch takes "
                                           "`requires_grad`"},
    ("Tensor", "to"): {"other": "torch's stub names it, but torch refuses to(other=...)"},
    ("Tensor", "new"): {"storage": "the legacy constructor's overloads: ember takes them "
                                   "positionally (x.new(2, 3), x.new(data), x.new(storage))",
                        "size": "(the same)", "other": "(the same)"},
    ("torch", "isin"): {"element": "the names of isin's number-first/number-second overloads "
                                   "(ember takes the number positionally)",
                        "test_element": "(the same)"},
    ("torch", "result_type"): {"scalar": "the names of result_type's overloads for numbers "
                                         "(ember takes them positionally)",
                               "scalar1": "(the same)", "scalar2": "(the same)"},
    ("torch", "native_batch_norm"): {"out": "ATen internal: not in OUT (see OUT_EXCLUDED)"},
}
for _name in ("mm", "bmm", "addmm", "baddbmm"):  # the out_dtype overloads are CUDA kernels
    KEYWORD_EXCLUDED[("torch", _name)] = {"out_dtype": "CUDA-only overload (CPU torch raises)"}
for _name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    KEYWORD_EXCLUDED[("torch", _name)] = {
        "data": "the packed-sequence overload (data, batch_sizes): ember's torch.<rnn> has the "
                "padded one only (nn.LSTM & co. take a PackedSequence themselves)",
        "batch_sizes": "(the same)"}


def _accepted_keywords(fn):
    """The keyword names a callable accepts, or None when it takes **kwargs (any)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return set()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    spread = _public._spread(inspect.signature(fn).parameters)
    names |= {spread} if spread else set()
    return names | _public._aliases(names, _public._FUNCTION_ALIASES).keys()


def _python_signature(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return [[p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]]


def _keyword_mismatches(namespace, torch_owner, ember_owner, stubs, method):
    """{name: torch keywords ember refuses} over the names both libraries have."""
    found = {}
    for name in dir(torch_owner):
        if name.startswith("_") or not hasattr(ember_owner, name):
            continue
        overloads = stubs.get(name) or _python_signature(getattr(torch_owner, name))
        if not overloads:
            continue
        wanted = {p for sig in overloads for p in (sig[1:] if method else sig)} - {"self"}
        if method:  # the stubs give some methods `out`, which torch's methods refuse
            wanted.discard("out")
        ember_fn = getattr(ember_owner, name)
        accepted = _accepted_keywords(ember_fn)
        if accepted is None or isinstance(ember_fn, type):
            continue
        if method:  # ember's first parameter is the tensor itself, whatever its name
            accepted |= {"input"}
        missing = wanted - accepted - set(KEYWORD_EXCLUDED.get((namespace, name), {}))
        if missing:
            found[name] = sorted(missing)
    return found


def test_functions_take_torchs_keyword_names():
    assert _keyword_mismatches("torch", torch, ember, TORCH_FUNCTIONS, False) == {}


def test_methods_take_torchs_keyword_names():
    assert _keyword_mismatches("Tensor", torch.Tensor, ember.Tensor, TENSOR_METHODS, True) == {}


def test_functional_takes_torchs_keyword_names():
    """F's Python functions by their signatures; its builtins (F.linear is torch._C._nn.linear,
    F.conv2d is torch.conv2d) by the stubs of the function they are."""
    nn_stubs = _stub_overloads("_nn.pyi")
    stubs = {}
    for name in dir(torch.nn.functional):
        fn = getattr(torch.nn.functional, name)
        if inspect.isbuiltin(fn):
            stubs[name] = nn_stubs.get(fn.__name__) or TORCH_FUNCTIONS.get(fn.__name__)
    assert any(stubs.values())
    found = _keyword_mismatches("nn.functional", torch.nn.functional, ember.nn.functional,
                                {k: v for k, v in stubs.items() if v}, False)
    assert found == {}


def test_keywords_by_name_work_as_torchs():
    """A sample of the names above, called: values as torch's."""
    def fn(m, a):
        return (a.flip(dims=[0]), m.flip(a, dims=(1,)), a.sum(dim=1, keepdim=True, dtype=m.float64),
                a.transpose(dim0=0, dim1=1), m.index_select(a, dim=1, index=m.tensor([2, 0])),
                m.sum(input=a, dim=0), a.view(size=(3, 2)), a.view(dtype=m.int32),
                a.reshape(shape=(6,)), a.permute(dims=(1, 0)), a.repeat(repeats=(2, 1)),
                a.expand(size=(2, 2, 3)), m.tensor_split(a, sections=3, dim=1),
                m.hsplit(a, indices=[1]), a.split(split_size=1), m.max(a, other=a.flip(0)),
                m.swapaxes(a, axis0=0, axis1=1), a.clone().copy_(other=a * 2),
                a.clone().copy_(3), m.concatenate([a, a], dim=1), a.new_zeros(size=(2,)))

    check(fn, [X])


# ----------------------------------------------------------------------------------------------
# NumPy-style aliases and factory keyword forms


def test_numpy_keyword_aliases():
    def fn(m, a, b):
        return (m.sum(a, axis=0), a.sum(axis=1, keepdims=True), a.mean(axis=0, keepdims=True),
                m.add(x1=a, x2=b), m.mul(a, x2=b), m.max(a, axis=1), a.argmax(axis=1),
                m.cat([a, b], axis=1), m.softmax(a, axis=1), m.std(a, axis=0, keepdims=True),
                m.cumsum(a, axis=1), m.exp(x=a), m.logsumexp(a, axis=1))

    check(fn, [X, INPUTS["y"]])


def test_an_alias_and_its_name_together_are_refused():
    check_raises(lambda m, a: m.sum(a, dim=0, axis=1), [X])


def test_factory_keyword_forms():
    def fn(m):
        return (m.empty(size=(2, 3)).shape, m.zeros(size=(2, 3)), m.ones(size=[2, 3],
                                                                          dtype=m.float64),
                m.full(size=(2,), fill_value=3.0), m.arange(start=1, end=7, step=2),
                m.arange(end=4), m.tensor(data=[1, 2]), m.zeros((2, 3), dtype=m.int32),
                m.linspace(start=0, end=1, steps=3), m.eye(n=2, m=3), m.rand(size=(2,)).shape,
                m.randn(size=(3,)).shape, m.zeros_like(m.ones(2), pin_memory=False))

    check(fn, [], grad=False)


# ----------------------------------------------------------------------------------------------
# module-level in-place functions


def test_inplace_list_is_torchs():
    torch_names = {n for n in dir(torch) if n.endswith("_") and not n.startswith("_")
                   and hasattr(torch.Tensor, n)}
    assert set(_public.INPLACE) == torch_names


def test_every_inplace_function_ember_can_have_exists():
    missing = [n for n in _public.INPLACE if hasattr(ember.Tensor, n) and not hasattr(ember, n)]
    assert not missing


@pytest.mark.parametrize("name", ["sin_", "exp_", "abs_", "sqrt_", "sigmoid_", "tanh_", "neg_",
                                  "floor_", "round_", "log1p_", "reciprocal_"])
def test_inplace_functions_write_into_their_input(name):
    def fn(m, a):
        a = a.clone()
        result = getattr(m, name)(a)
        return a, result is a

    check(fn, [X - 0.4])


def test_inplace_functions_with_arguments():
    def fn(m, a):
        a, b, c = a.clone(), a.clone(), a.clone()
        m.clamp_(a, min=0.3, max=0.6)
        m.relu_(b.sub_(0.5))
        m.fill_(c, 2.0)
        return a, b, c, m.zero_(c.clone()), m.xlogy_(a.clone(), 2.0)

    check(fn, [X], grad=False)


def test_inplace_functions_refuse_leaves_that_require_grad():
    check_raises(lambda m, a: m.sin_(a.requires_grad_()), [X])


def test_cumsum_and_cumprod_in_place():
    def fn(m, a):
        b = a * 1
        b.cumsum_(1)
        c = a * 1
        c.cumprod_(0)
        ints = m.tensor([[1, 2], [3, 4]], dtype=m.int32)
        ints.cumsum_(dim=1)
        return b, c, ints

    check(fn, [X])

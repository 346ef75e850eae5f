"""nn.Module vs torch: registration, traversal, state_dict / load_state_dict (messages included),
modes, conversions, copying and pickling, printing, and exchanging weights with real torch models.

Most cases are functions `case(m)` run once with m = ember and once with m = torch; `same`
compares what they return (tensors as dtype, shape and rounded values) or the exception type
and message they raise, with the library name ("torch." / "ember.") taken out of the text.
"""
import copy
import io
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember

# ----------------------------------------------------------------------------------------------
# the comparison helpers (test_nn_containers / hooks / init / utils import them)


def _is_tensor(x):
    return hasattr(x, "detach") and hasattr(x, "dtype") and hasattr(x, "shape")


def normalize(x):
    """A library-independent description of a result (floats kept exact; `matches` compares
    them with a tolerance)."""
    if _is_tensor(x):
        values = x.detach().cpu()
        values = values.double().numpy() if x.is_floating_point() else values.numpy()
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), values.tolist())
    if isinstance(x, bool) or x is None or isinstance(x, (int, float)):
        return x
    if isinstance(x, str):
        return _text(x)
    if type(x).__name__ == "Size":
        return ("Size", tuple(x))
    if type(x).__name__ == "dtype":
        return ("dtype", str(x).split(".")[-1])
    if isinstance(x, dict):
        return {normalize(k): normalize(v) for k, v in x.items()}
    if type(x) in (list, tuple):
        return type(x)(normalize(v) for v in x)
    return _text(str(x))


def matches(a, b, rtol=1e-5, atol=1e-7):
    """Equal structures; floats equal within float32 rounding (NaN equals NaN)."""
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or \
                isinstance(a, bool) or isinstance(b, bool):
            return False
        return bool(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and \
            all(matches(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(matches(a[k], b[k], rtol, atol) for k in a)
    return a == b


def _text(s):
    return s.replace("torch.", "LIB.").replace("ember.", "LIB.")


def outcome(lib, fn):
    """("ok", normalized result) or (exception type name, message without library names)."""
    try:
        result = fn(lib)
    except Exception as e:  # the exception itself is the result being compared
        return type(e).__name__, _text(str(e))
    return "ok", normalize(result)


def same(fn):
    """fn(ember) and fn(torch) return equal results or raise the same error (type and text)."""
    torch = pytest.importorskip("torch")
    ember.manual_seed(0)
    torch.manual_seed(0)
    mine = outcome(ember, fn)
    theirs = outcome(torch, fn)
    assert matches(mine, theirs), f"\nember: {mine}\ntorch: {theirs}"
    return mine


def cases_of(registry):
    return pytest.mark.parametrize("fn", list(registry.values()), ids=list(registry))


def register(registry):
    def add(fn):
        registry[fn.__name__] = fn
        return fn
    return add


# ----------------------------------------------------------------------------------------------
# registration

REG = {}
reg = register(REG)


@reg
def param_before_init(m):
    class M(m.nn.Module):
        def __init__(self):
            self.w = m.nn.Parameter(m.zeros(2))
    M()


@reg
def module_before_init(m):
    class M(m.nn.Module):
        def __init__(self):
            self.layer = m.nn.Linear(2, 2)
    M()


@reg
def buffer_before_init(m):
    class M(m.nn.Module):
        def __init__(self):
            self.register_buffer("b", m.zeros(2))
    M()


@reg
def nn_buffer_before_init(m):
    class M(m.nn.Module):
        def __init__(self):
            self.b = m.nn.Buffer(m.zeros(2))
    M()


@reg
def register_parameter_errors(m):
    errors = []
    for name, value in [("a.b", None), ("", None), (1, None), ("w", m.zeros(2)), ("w", [1]),
                        ("w", m.nn.Parameter(m.zeros(2)) * 2)]:
        errors.append(outcome(m, lambda m: m.nn.Module().register_parameter(name, value)))
    return errors


@reg
def register_buffer_errors(m):
    errors = []
    for name, value in [("a.b", None), ("", None), (1, None), ("w", [1]), ("w", 3.0)]:
        errors.append(outcome(m, lambda m: m.nn.Module().register_buffer(name, value)))
    return errors


@reg
def add_module_errors(m):
    errors = []
    for name, value in [("a.b", None), ("", None), (1, None), ("a", 3), ("a", m.zeros(1))]:
        errors.append(outcome(m, lambda m: m.nn.Module().add_module(name, value)))
        errors.append(outcome(m, lambda m: m.nn.Module().register_module(name, value)))
    return errors


@reg
def existing_attribute_errors(m):
    def attempt(register):
        def run(m):
            x = m.nn.Linear(2, 2)
            x.foo = 3
            register(x)
        return outcome(m, run)
    return [attempt(lambda x: x.register_parameter("foo", None)),
            attempt(lambda x: x.register_buffer("foo", None)),
            attempt(lambda x: x.add_module("foo", None)),
            attempt(lambda x: x.register_buffer("weight", None)),
            attempt(lambda x: x.add_module("weight", None)),
            attempt(lambda x: x.register_parameter("forward", None))]


@reg
def buffer_then_parameter_name(m):
    x = m.nn.Module()
    x.register_buffer("b", None)
    x.register_parameter("b", None)


@reg
def wrong_type_assignments(m):
    def assign(setup, name, value):
        def run(m):
            x = setup(m)
            setattr(x, name, value(m))
        return outcome(m, run)
    linear = lambda m: m.nn.Linear(2, 2)  # noqa: E731
    seq = lambda m: m.nn.Sequential(m.nn.Linear(2, 2))  # noqa: E731

    def with_buffer(m):
        x = m.nn.Module()
        x.register_buffer("b", m.zeros(1))
        return x
    return [assign(linear, "weight", lambda m: m.zeros(2, 2)),
            assign(linear, "weight", lambda m: m.nn.Linear(1, 1)),
            assign(seq, "0", lambda m: 3),
            assign(with_buffer, "b", lambda m: 3),
            assign(with_buffer, "b", lambda m: [1.0])]


@reg
def assignment_moves_between_registries(m):
    x = m.nn.Module()
    x.a = 3
    x.a = m.nn.Parameter(m.zeros(1))
    step1 = (list(x._parameters), "a" in x.__dict__)
    x.register_buffer("b", m.zeros(1))
    x.b = m.nn.Parameter(m.zeros(1))
    step2 = (list(x._parameters), list(x._buffers))
    x.c = m.nn.Parameter(m.zeros(1))
    x.c = m.nn.Buffer(m.zeros(1))
    step3 = (list(x._parameters), list(x._buffers))
    x.d = m.nn.Linear(1, 1)
    x.d = None
    x.e = m.nn.Parameter(m.zeros(1))
    x.e = None
    return step1, step2, step3, list(x._modules), x.d, list(x._parameters), x.e


@reg
def buffers_persistence(m):
    x = m.nn.Module()
    x.register_buffer("p", m.zeros(1))
    x.register_buffer("np", m.zeros(1), persistent=False)
    x.np = m.ones(2)  # reassigning keeps it non-persistent
    x.b1 = m.nn.Buffer(m.zeros(1), persistent=False)
    x.b2 = m.nn.Buffer(m.zeros(1))
    x.b1 = m.nn.Buffer(m.zeros(1))  # an nn.Buffer brings its own flag
    x.register_buffer("none", None)
    x.rg = m.nn.Buffer(m.ones(1, requires_grad=True))
    return (list(x.state_dict()), sorted(x._non_persistent_buffers_set), list(x._buffers),
            type(x.b2).__name__, x.rg.requires_grad, x.np.shape)


@reg
def buffer_none_assignment(m):
    x = m.nn.Module()
    x.register_buffer("b", m.zeros(1))
    x.b = None
    return list(x._buffers), x.b, list(x.state_dict())


@reg
def module_init_arguments(m):
    return outcome(m, lambda m: m.nn.Module(3)), outcome(m, lambda m: m.nn.Module(a=3)), \
        outcome(m, lambda m: m.nn.Module()(3))


@reg
def getattr_error(m):
    m.nn.Linear(2, 2).foo


@reg
def delattr_registries(m):
    x = m.nn.Linear(2, 2)
    x.register_buffer("b", m.zeros(1), persistent=False)
    x.sub = m.nn.Linear(1, 1)
    x.plain = 1
    del x.weight, x.b, x.sub, x.plain
    missing = outcome(m, lambda m: delattr(x, "foo"))
    return list(x._parameters), list(x._buffers), list(x._modules), \
        sorted(x._non_persistent_buffers_set), "plain" in x.__dict__, missing


@reg
def dir_lists_registered_names(m):
    x = m.nn.Sequential(m.nn.Linear(2, 2))
    x.register_buffer("bb", None)
    x.p = m.nn.Parameter(m.zeros(1))
    d = dir(x)
    names = ["bb", "p", "forward", "training", "_modules", "0"]
    return [k for k in names if k in d], d == sorted(d)


@reg
def nn_parameter_behaviour(m):
    p = m.nn.Parameter(m.ones(2))
    return (repr(p), repr(m.nn.Parameter(m.ones(2, dtype=m.float64), requires_grad=False)),
            outcome(m, lambda m: m.nn.Parameter(m.ones(2, dtype=m.int64))),
            m.nn.Parameter(m.ones(2, dtype=m.int64), requires_grad=False).requires_grad,
            type(p * 2).__name__, type(p.detach()).__name__, p.is_leaf,
            tuple(m.nn.Parameter().shape))


@reg
def parameter_shares_memory(m):
    t = m.zeros(2)
    p = m.nn.Parameter(t)
    t.add_(1)
    nonleaf = m.nn.Parameter(m.zeros(2, requires_grad=True) * 2)
    return p, nonleaf.is_leaf, nonleaf.requires_grad


@cases_of(REG)
def test_registration_like_torch(fn):
    same(fn)


# ----------------------------------------------------------------------------------------------
# traversal


def _net(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = m.nn.Linear(2, 3)
            self.register_buffer("running", m.zeros(3))
            self.register_buffer("tmp", m.zeros(3), persistent=False)
            self.seq = m.nn.Sequential(m.nn.Linear(3, 3), m.nn.Linear(3, 3, bias=False))
            self.scale = m.nn.Parameter(m.ones(1))
            self.tied = self.a
            self.register_buffer("nothing", None)
            self.register_parameter("absent", None)
            self.register_module("no_module", None)

        def forward(self, x):
            return self.seq(self.a(x)) * self.scale + self.running
    return Net()


TRAV = {}
trav = register(TRAV)


def _names(pairs):
    return [name for name, _ in pairs]


@trav
def named_parameters_variants(m):
    n = _net(m)
    return (_names(n.named_parameters()), _names(n.named_parameters(remove_duplicate=False)),
            _names(n.named_parameters(prefix="pre")),
            _names(n.named_parameters(prefix="pre", recurse=False)),
            _names(n.named_parameters(recurse=False)), len(list(n.parameters())),
            len(list(n.parameters(recurse=False))))


@trav
def named_buffers_variants(m):
    n = _net(m)
    return (_names(n.named_buffers()), _names(n.named_buffers(remove_duplicate=False, prefix="x")),
            _names(n.named_buffers(recurse=False)), len(list(n.buffers())))


@trav
def children_and_modules(m):
    n = _net(m)
    return (_names(n.named_children()), len(list(n.children())), _names(n.named_modules()),
            _names(n.named_modules(remove_duplicate=False, prefix="p")),
            [type(x).__name__ for x in n.modules()])


@trav
def named_modules_shared_memo(m):
    n = _net(m)
    memo = {n.seq}
    return _names(n.named_modules(memo=memo)), len(memo)


@trav
def tied_weights_counted_once(m):
    s = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Linear(2, 2))
    s[1].weight = s[0].weight
    return (_names(s.named_parameters()), _names(s.named_parameters(remove_duplicate=False)),
            list(s.state_dict()))


@trav
def get_submodule_parameter_buffer(m):
    n = _net(m)
    ok = (type(n.get_submodule("seq.1")).__name__, n.get_submodule("") is n,
          tuple(n.get_parameter("seq.0.weight").shape), tuple(n.get_parameter("scale").shape),
          tuple(n.get_buffer("running").shape))
    errors = [outcome(m, lambda m: n.get_submodule(t)) for t in ["seq.5", "seq.0.weight", "foo"]]
    errors += [outcome(m, lambda m: n.get_parameter(t)) for t in ["seq.0.foo", "seq",
                                                                    "a.in_features", "x.y"]]
    errors += [outcome(m, lambda m: n.get_buffer(t)) for t in ["scale", "foo", "seq.2.b", "tmp"]]
    return ok, errors


@trav
def set_submodule(m):
    n = _net(m)
    n.set_submodule("seq.1", m.nn.Identity())
    n.set_submodule("new", m.nn.Identity())
    errors = [outcome(m, lambda m: n.set_submodule(*args)) for args in [
        ("a.weight", m.nn.Identity()), ("a.foo", m.nn.Identity(), True), ("", m.nn.Identity()),
        ("a", 3)]]
    return _names(n.named_modules()), errors


@cases_of(TRAV)
def test_traversal_like_torch(fn):
    same(fn)


def test_deep_model_traversal_has_no_recursion_limit():
    model = ember.nn.Linear(1, 1)
    for _ in range(3000):
        outer = ember.nn.Module()
        outer.inner = model
        model = outer
    assert len(list(model.named_modules())) == 3001
    assert len(list(model.parameters())) == 2


# ----------------------------------------------------------------------------------------------
# state_dict and load_state_dict

SD = {}
sd = register(SD)


@sd
def state_dict_keys_metadata(m):
    n = _net(m)
    return (list(n.state_dict()), dict(n.state_dict()._metadata), list(n.state_dict(prefix="x.")),
            dict(n.state_dict(prefix="x.")._metadata))


@sd
def state_dict_values_detached(m):
    n = _net(m)
    plain = n.state_dict()
    kept = n.state_dict(keep_vars=True)
    return ([type(v).__name__ for v in plain.values()], [v.requires_grad for v in plain.values()],
            [type(v).__name__ for v in kept.values()], [v.requires_grad for v in kept.values()],
            kept["a.weight"] is n.a.weight, plain["a.weight"].data_ptr() == n.a.weight.data_ptr())


@sd
def state_dict_positional_form_warns(m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = m.nn.Linear(1, 1).state_dict(None, "x.")
    return list(d), [w.category.__name__ for w in caught]


@sd
def state_dict_into_destination(m):
    dest = OrderedDict()
    result = m.nn.Linear(1, 1).state_dict(destination=dest, prefix="p.")
    return result is dest, list(dest), hasattr(dest, "_metadata")


def _loaded(edit, strict=True, assign=False):
    def run(m):
        n = _net(m)
        d = n.state_dict()
        edit(m, d)
        return n.load_state_dict(d, strict=strict, assign=assign)
    return run


def _drop(*keys):
    def edit(m, d):
        for k in keys:
            del d[k]
    return edit


def _add(**entries):
    def edit(m, d):
        for k, shape in entries.items():
            d[k.replace("__", ".")] = m.zeros(*shape)
    return edit


LOADS = {
    "matching": _loaded(lambda m, d: None),
    "missing_strict": _loaded(_drop("a.bias", "running")),
    "missing_lenient": _loaded(_drop("a.bias", "running"), strict=False),
    "unexpected_strict": _loaded(_add(foo=(1,), seq__0__bar=(1,), tmp=(3,), seq__9__w=(1,))),
    "unexpected_lenient": _loaded(_add(foo=(1,), seq__0__bar=(1,), tmp=(3,)), strict=False),
    "both_strict": _loaded(lambda m, d: (_add(foo=(1,))(m, d), _drop("scale")(m, d))),
    "size_mismatch": _loaded(_add(a__weight=(3, 3), running=(2,))),
    "size_mismatch_lenient": _loaded(_add(a__weight=(3, 3)), strict=False),
    "size_and_keys": _loaded(lambda m, d: (_add(a__weight=(3, 3), z=(1,))(m, d),
                                           _drop("scale")(m, d))),
    "not_a_tensor": _loaded(lambda m, d: d.__setitem__("a.weight", 3)),
    "assign_missing": _loaded(_drop("scale"), strict=False, assign=True),
}


@pytest.mark.parametrize("name", list(LOADS))
def test_load_state_dict_reports_like_torch(name):
    # the same RuntimeError text (after the library name) and the same _IncompatibleKeys repr
    same(LOADS[name])


@sd
def load_not_a_mapping(m):
    m.nn.Linear(1, 1).load_state_dict([1])


@sd
def load_copies_values(m):
    n, source = _net(m), _net(m)
    with m.no_grad():
        for p in source.parameters():
            p.fill_(0.5)
    weight = n.a.weight
    result = n.load_state_dict(source.state_dict())
    return (str(result), n.a.weight is weight, n.a.weight, n.seq[0].bias,
            n.a.weight.requires_grad, type(n.a.weight).__name__)


@sd
def load_casts_dtype_unless_assign(m):
    n = _net(m)
    d = n.state_dict()
    d["a.weight"] = m.ones(3, 2, dtype=m.float64)
    n.load_state_dict(d)
    copied = n.a.weight.dtype
    n.load_state_dict(d, assign=True)
    return copied, n.a.weight.dtype, n.a.weight


@sd
def load_assign_replaces_objects(m):
    n = _net(m)
    n.scale.requires_grad_(False)
    d = n.state_dict()
    d["scale"] = m.full((1,), 7.0, requires_grad=True)
    d["running"] = m.ones(3)
    new_running = d["running"]
    n.load_state_dict(d, assign=True)
    return (type(n.scale).__name__, n.scale.requires_grad, n.scale, n.running is new_running,
            n.tied is n.a)


@sd
def load_one_element_into_scalar(m):
    n = m.nn.Module()
    n.register_buffer("s", m.tensor(1.0))
    n.load_state_dict({"s": m.tensor([5.0])})
    return n.s


@sd
def load_copy_failure_message(m):
    n = m.nn.Module()
    n.register_buffer("b", m.zeros(2, dtype=m.int64))
    n.load_state_dict({"b": m.tensor([1.5, 2.5])})
    return n.b


@sd
def extra_state(m):
    class E(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.v = 1
            self.layer = m.nn.Linear(1, 1)

        def get_extra_state(self):
            return {"v": self.v}

        def set_extra_state(self, state):
            self.v = state["v"]
    e = E()
    e.v = 7
    d = e.state_dict()
    f = E()
    loaded = f.load_state_dict(d)
    without = {k: v for k, v in d.items() if k != "_extra_state"}
    missing = outcome(m, lambda m: E().load_state_dict(without))
    return list(d), f.v, str(loaded), missing


@sd
def extra_state_unexpected(m):
    n = m.nn.Linear(1, 1)
    d = n.state_dict()
    d["_extra_state"] = 1
    return str(n.load_state_dict(d, strict=False)), outcome(m, lambda m: n.load_state_dict(d))


@sd
def extra_state_default_raises(m):
    # the same error type; torch's text goes on to ask for a bug report on its tracker
    return outcome(m, lambda m: m.nn.Linear(1, 1).get_extra_state())[0]


@sd
def state_dict_hooks(m):
    n = m.nn.Linear(1, 1)
    log = []
    n.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(
        ("pre", prefix, keep_vars)))

    def post(mod, d, prefix, meta):
        log.append(("post", prefix, list(d), meta))
        d[prefix + "extra"] = 1
    n.register_state_dict_post_hook(post)
    keys = list(m.nn.Sequential(n).state_dict(prefix="p."))
    errors = outcome(m, lambda m: _returning_post_hook(m))
    private = m.nn.Linear(1, 1)
    private._register_state_dict_hook(lambda mod, d, prefix, meta: {"replaced": 1})
    return keys, log, errors, private.state_dict()


def _returning_post_hook(m):
    n = m.nn.Linear(1, 1)
    n.register_state_dict_post_hook(lambda *args: {})
    n.state_dict()


@sd
def load_state_dict_hooks(m):
    s = m.nn.Sequential(m.nn.Linear(1, 1), m.nn.Linear(1, 1))
    log = []

    def pre(mod, d, prefix, meta, strict, missing, unexpected, errors):
        log.append(("pre", type(mod).__name__, prefix, sorted(d), dict(meta)))
        d.pop(prefix + "bias", None)

    def post(mod, keys):
        log.append(("post", type(mod).__name__, list(keys.missing_keys),
                    list(keys.unexpected_keys)))
        if mod is s:
            keys.missing_keys.clear()
    s[1].register_load_state_dict_pre_hook(pre)
    s[1].register_load_state_dict_post_hook(post)
    s.register_load_state_dict_post_hook(post)
    result = s.load_state_dict(s.state_dict())
    s.load_state_dict(s.state_dict(), assign=True)
    returning = m.nn.Linear(1, 1)
    returning.register_load_state_dict_post_hook(lambda mod, keys: 1)
    return log, str(result), outcome(m, lambda m: returning.load_state_dict(
        returning.state_dict()))


@cases_of(SD)
def test_state_dict_like_torch(fn):
    same(fn)


def test_load_state_dict_without_metadata_and_with_plain_dict():
    n = ember.nn.Sequential(ember.nn.Linear(2, 2))
    d = dict(n.state_dict())
    assert str(n.load_state_dict(d)) == "<All keys matched successfully>"


# ----------------------------------------------------------------------------------------------
# modes, gradients, conversions

CONV = {}
conv = register(CONV)


def _small(m):
    n = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.Sequential(m.nn.Linear(3, 2)))
    n.register_buffer("step", m.tensor(3))
    n.register_buffer("avg", m.zeros(2))
    return n


@conv
def train_eval_recursive(m):
    n = _small(m)
    results = [n.eval() is n, [x.training for x in n.modules()]]
    n[1].train()
    results.append([x.training for x in n.modules()])
    results.append(n.train(False) is n)
    results.append(outcome(m, lambda m: n.train(1)))
    return results


@conv
def requires_grad_recursive(m):
    n = _small(m)
    returned = n[1].requires_grad_(False) is n[1]
    return returned, [p.requires_grad for p in n.parameters()]


@conv
def zero_grad_modes(m):
    n = _small(m)
    for p in n.parameters():
        p.grad = m.ones_like(p)
    n.zero_grad(set_to_none=False)
    zeroed = [p.grad for p in n.parameters()]
    n.zero_grad()
    return zeroed, [p.grad for p in n.parameters()]


@conv
def zero_grad_detaches_graph_grads(m):
    p = m.nn.Parameter(m.ones(2))
    n = m.nn.Module()
    n.p = p
    with warnings.catch_warnings():  # torch warns about the reference cycle this creates
        warnings.simplefilter("ignore")
        (p * p).sum().backward(create_graph=True)
    had_graph = p.grad.grad_fn is not None
    n.zero_grad(set_to_none=False)
    return had_graph, p.grad.grad_fn is None, p.grad.requires_grad, p.grad


@conv
def double_keeps_parameter_identity(m):
    n = _small(m)
    w = n[0].weight
    w.grad = m.ones(3, 2)
    g = w.grad
    returned = n.double() is n
    return (returned, n[0].weight is w, w.dtype, w.grad.dtype, w.grad is g, n.step.dtype,
            n.avg.dtype, type(w).__name__, w.requires_grad, w.is_leaf)


@conv
def float_half_bfloat16(m):
    n = _small(m)
    n.half()
    half = (n[0].weight.dtype, n.avg.dtype, n.step.dtype)
    n.bfloat16()
    bf = n[0].weight.dtype
    n.float()
    return half, bf, n[0].weight.dtype


@conv
def to_argument_forms(m):
    n = _small(m)
    seen = []
    for args, kwargs in [((m.float64,), {}), (("cpu", m.float32), {}),
                         ((m.ones(1, dtype=m.float64),), {}),
                         ((), {"device": "cpu", "dtype": m.float16}),
                         (("cpu",), {"non_blocking": True}), ((m.float64, True), {})]:
        assert n.to(*args, **kwargs) is n
        seen.append((n[0].weight.dtype, n.step.dtype))
    return seen, outcome(m, lambda m: n.to(m.int64))


@conv
def type_and_apply(m):
    n = _small(m)
    n.type(m.float64)
    converted = (n[0].weight.dtype, n.step.dtype)
    names = []

    def init(module):
        names.append(type(module).__name__)
        if isinstance(module, m.nn.Linear):
            m.nn.init.constant_(module.weight, 0.5)
    returned = n.apply(init) is n
    return converted, names, returned, n[1][0].weight


@conv
def cpu_and_to_empty(m):
    n = _small(m)
    same_object = n.cpu() is n
    n.to_empty(device="cpu")
    return same_object, n[0].weight.shape, n[0].weight.dtype, type(n[0].weight).__name__


@cases_of(CONV)
def test_modes_and_conversions_like_torch(fn):
    same(fn)


def test_optimizer_keeps_working_after_double():
    model = ember.nn.Linear(3, 2)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    model.double()
    before = model.weight.detach().clone()
    model(ember.ones(4, 3, dtype=ember.float64)).sum().backward()
    opt.step()
    assert model.weight.dtype is ember.float64
    assert not ember.equal(model.weight.detach(), before)


# ----------------------------------------------------------------------------------------------
# copying, pickling, saving

COPY = {}
copying = register(COPY)


@copying
def deepcopy_model(m):
    n = _small(m)
    n.tied = n[0]
    n[0].weight.grad = m.ones(3, 2)
    c = copy.deepcopy(n)
    equal = all(bool((a == b).all()) for a, b in zip(n.parameters(), c.parameters()))
    disjoint = all(a is not b for a, b in zip(n.parameters(), c.parameters()))
    with m.no_grad():
        c[0].weight.add_(1)
    return (equal, disjoint, c.tied is c[0], c.tied.weight is c[0].weight,
            len(list(c.parameters())), c[0].weight.grad, bool((n[0].weight != c[0].weight).all()),
            list(c.state_dict()), c.step, type(c[0].weight).__name__)


@copying
def deepcopy_keeps_hooks(m):
    n = m.nn.Linear(2, 2)
    log = []
    n.register_forward_hook(lambda *args: log.append(1))
    c = copy.deepcopy(n)
    c(m.ones(2))
    return len(log), len(c._forward_hooks)


@copying
def deepcopy_parameter(m):
    p = m.nn.Parameter(m.ones(2))
    p.grad = m.ones(2)
    p.note = 3
    q = copy.deepcopy(p)
    return type(q).__name__, q.grad, q.requires_grad, getattr(q, "note", None), q


@copying
def pickle_model(m):
    n = _small(m)
    n.tied = n[0]
    n.register_buffer("hidden", m.ones(2), persistent=False)
    n.eval()
    c = pickle.loads(pickle.dumps(n))
    return (type(c).__name__, list(c.state_dict()), c.tied is c[0], c.training, c[0].training,
            all(bool((a == b).all()) for a, b in zip(n.parameters(), c.parameters())),
            type(c[0].weight).__name__, c[0].weight.requires_grad,
            sorted(c._non_persistent_buffers_set), repr(c))


@cases_of(COPY)
def test_copy_and_pickle_like_torch(fn):
    same(fn)


def test_save_and_load_whole_model():
    model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.Conv2d(1, 2, 3))
    model.tied = model[0]
    buf = io.BytesIO()
    ember.save(model, buf)
    buf.seek(0)
    loaded = ember.load(buf, weights_only=False)
    assert repr(loaded) == repr(model)
    assert loaded.tied is loaded[0]
    for a, b in zip(model.parameters(), loaded.parameters()):
        assert ember.equal(a.detach(), b.detach()) and isinstance(b, ember.nn.Parameter)


# ----------------------------------------------------------------------------------------------
# printing

REPR = {}
printing = register(REPR)


@printing
def nested_repr(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = m.nn.Sequential(OrderedDict([
                ("c1", m.nn.Conv2d(1, 4, 3, padding=1)), ("id", m.nn.Identity())]))
            self.heads = m.nn.ModuleList([m.nn.Linear(4, 2) for _ in range(3)])
            self.d = m.nn.ModuleDict({"x": m.nn.Linear(2, 2, bias=False)})
            self.empty = m.nn.Sequential()
            self.register_module("nomod", None)
            self.pl = m.nn.ParameterList([m.ones(3)])

        def extra_repr(self):
            return "line one\nline two"
    return repr(Net())


@printing
def one_line_extra_repr(m):
    class A(m.nn.Module):
        def extra_repr(self):
            return "k=1"

    class B(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = A()

        def extra_repr(self):
            return "k=2"
    return repr(A()), repr(B()), repr(m.nn.Module()), str(m.nn.Linear(2, 3, bias=False))


@cases_of(REPR)
def test_repr_like_torch(fn):
    same(fn)


# ----------------------------------------------------------------------------------------------
# exchanging weights with real torch models


def _models(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = m.nn.Conv2d(2, 4, 3, padding=1)
            self.body = m.nn.Sequential(m.nn.Linear(4 * 5 * 5, 8), m.nn.Linear(8, 8))
            self.head = m.nn.ModuleDict({"out": m.nn.Linear(8, 3)})
            self.register_buffer("shift", m.zeros(3))

        def forward(self, x):
            h = self.conv(x).flatten(1)
            return self.head["out"](self.body(h)) + self.shift
    return Net()


def test_torch_state_dict_loads_into_ember_model():
    torch = pytest.importorskip("torch")
    t_model, e_model = _models(torch), _models(ember)
    with torch.no_grad():
        t_model.shift.fill_(0.25)
    t_state = t_model.state_dict()
    e_state = OrderedDict((k, ember.from_numpy(v.numpy().copy())) for k, v in t_state.items())
    e_state._metadata = t_state._metadata
    assert list(e_state) == list(e_model.state_dict())
    assert str(e_model.load_state_dict(e_state)) == "<All keys matched successfully>"
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(e_model(ember.from_numpy(x)).detach().numpy(),
                               t_model(torch.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_ember_state_dict_loads_into_torch_model():
    torch = pytest.importorskip("torch")
    t_model, e_model = _models(torch), _models(ember)
    e_state = e_model.state_dict()
    assert dict(e_state._metadata) == dict(t_model.state_dict()._metadata)
    t_state = OrderedDict((k, torch.from_numpy(v.numpy().copy())) for k, v in e_state.items())
    assert str(t_model.load_state_dict(t_state)) == "<All keys matched successfully>"
    x = np.random.default_rng(1).standard_normal((2, 2, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(t_model(torch.from_numpy(x)).detach().numpy(),
                               e_model(ember.from_numpy(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-5)


def test_checkpoint_file_from_torch_loads_into_ember():
    torch = pytest.importorskip("torch")
    t_model, e_model = _models(torch), _models(ember)
    buf = io.BytesIO()
    torch.save(t_model.state_dict(), buf)
    buf.seek(0)
    e_model.load_state_dict(ember.load(buf))
    for (name, e), (_, t) in zip(e_model.state_dict().items(), t_model.state_dict().items()):
        np.testing.assert_array_equal(e.numpy(), t.numpy(), err_msg=name)

"""ember.compile / Module.compile, ember.jit, ember.onnx and ember.compiler: what they accept
and refuse (as torch does), and that the results are those of eager execution."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def test_compiled_module_gives_the_same_results_and_torchs_state_dict_keys():
    model = _model(ember)
    compiled = ember.compile(model)
    x = ember.randn(5, 3)
    assert ember.equal(compiled(x), model(x))
    assert isinstance(compiled, ember.nn.Module) and compiled._orig_mod is model
    assert getattr(compiled, "0") is model[0]  # attributes are looked up on the wrapped model
    theirs = torch.compile(_model(torch), backend="eager")
    assert list(compiled.state_dict()) == list(theirs.state_dict())
    assert type(compiled).__name__ == type(theirs).__name__ == "OptimizedModule"
    compiled(x).sum().backward()
    assert model[0].weight.grad is not None


def test_compiled_functions_and_the_decorator_form():
    def f(a, b):
        return a * b + 1

    compiled = ember.compile(f, mode="reduce-overhead", fullgraph=True, dynamic=False)
    assert compiled(ember.tensor(2.0), ember.tensor(3.0)).item() == 7.0
    assert compiled.__name__ == "f"

    @ember.compile(backend="eager")
    def g(a):
        return a + 1
    assert g(ember.tensor(1.0)).item() == 2.0
    assert ember.compile(f, disable=True) is f


def test_compile_refuses_what_torch_refuses():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="unexpected keyword argument 'not_an_option'"):
            lib.compile(lambda x: x, not_an_option=1)
        with pytest.raises(RuntimeError, match="Unrecognized mode=fastest"):
            lib.compile(lambda x: x, mode="fastest")
        with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
            lib.compile(lambda x: x, mode="default", options={"a": 1})
        with pytest.raises(RuntimeError, match="Invalid backend: 'nope'"):
            lib.compile(lambda x: x, backend="nope")


def test_module_compile_in_place():
    for lib in (ember, torch):
        model = _model(lib)
        x = lib.ones(2, 3)
        before = model(x).detach()
        assert model.compile(backend="eager") is None
        np.testing.assert_allclose(model(x).detach().numpy(), before.numpy(), rtol=1e-6)
        with pytest.raises(TypeError):
            model.compile(unknown_option=True)


def test_jit_is_a_pass_through_with_eager_semantics():
    model = _model(ember)
    assert ember.jit.script(model) is model
    assert ember.jit.trace(model, ember.ones(1, 3)) is model

    def branchy(x):
        return x * 2 if x.sum() > 0 else x - 1
    traced = ember.jit.trace(branchy, ember.ones(2))
    assert traced(-ember.ones(2)).tolist() == [-2.0, -2.0]  # eager: the other branch runs

    @ember.jit.ignore
    def helper(x):
        return x + 1

    @ember.jit.ignore(drop=True)
    def dropped(x):
        return x

    assert helper(1) == 2 and dropped(3) == 3
    assert ember.jit.unused(helper) is helper and ember.jit.export(helper) is helper
    assert ember.jit.is_scripting() is torch.jit.is_scripting() is False
    assert ember.jit.is_tracing() is torch.jit.is_tracing() is False
    assert ember.jit.annotate(list, [1]) == [1]
    assert ember.jit.wait(ember.jit.fork(helper, 4)) == 5
    assert not isinstance(model, ember.jit.ScriptModule)


def test_jit_save_load_and_onnx_export_say_why_they_cannot():
    model = _model(ember)
    with pytest.raises(NotImplementedError, match="ember does not compile TorchScript"):
        ember.jit.save(model, "m.pt")
    with pytest.raises(NotImplementedError, match="cannot run TorchScript programs"):
        ember.jit.load("m.pt")
    with pytest.raises(NotImplementedError, match="exporting to ONNX needs a captured graph"):
        ember.onnx.export(model, (ember.ones(1, 3),), "m.onnx")
    assert ember.onnx.is_in_onnx_export() is False


def test_compiler_questions():
    for lib in (ember, torch):
        assert lib.compiler.is_compiling() is False

        def f(x):
            return x
        assert lib.compiler.disable(f)(1) == 1

"""torch.Stream / torch.Event on the CPU, torch.get_device_module, torch.cond / while_loop run
eagerly, and torch.nn.attention's kernel choice: each against torch's answers here."""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")


def _both(expr):
    """The outcome of `expr(m)` in torch and in ember: a value, or the exception's type."""
    outcomes = []
    for m in (torch, ember):
        try:
            outcomes.append(expr(m))
        except Exception as error:  # the type is what is compared
            outcomes.append(type(error))
    return outcomes


@pytest.mark.parametrize("expr", [
    lambda m: m.Stream().query(), lambda m: m.Stream().synchronize(),
    lambda m: m.Stream().stream_id, lambda m: m.Stream().device_index,
    lambda m: m.Stream().is_capturing(), lambda m: m.Stream() == m.Stream(),
    lambda m: str(m.Stream().device), lambda m: m.Stream(priority=-1).query(),
    lambda m: m.Stream().record_event(), lambda m: m.Stream().wait_event(m.Event()),
    lambda m: m.Stream().wait_stream(m.Stream()),
    lambda m: m.Event().query(), lambda m: m.Event().record(), lambda m: m.Event().wait(),
    lambda m: m.Event().synchronize(), lambda m: str(m.Event(device="cpu").device),
    lambda m: m.Event().elapsed_time(m.Event()),
    lambda m: m.Event(enable_timing=True).elapsed_time(m.Event(enable_timing=True)),
    lambda m: repr(m.Stream()).replace(m.__name__, "lib"),
    lambda m: repr(m.Event(enable_timing=True)).replace(m.__name__, "lib"),
])
def test_cpu_streams_and_events_answer_as_torch(expr):
    theirs, ours = _both(expr)
    assert ours == theirs


def test_a_stream_is_a_context_manager():
    with ember.Stream() as stream:
        assert stream.query()


def test_streams_and_events_on_other_devices_say_what_is_missing():
    with pytest.raises(NotImplementedError, match="only for the CPU"):
        ember.Event(device="cuda")


@pytest.mark.parametrize("device", [None, "cpu", "cuda", "cuda:0"])
def test_get_device_module_names_the_module(device):
    theirs = torch.get_device_module(device).__name__
    assert ember.get_device_module(device).__name__ == theirs.replace("torch", "ember")


def test_get_device_module_refuses_an_unknown_type():
    check_raises(lambda m: m.get_device_module("meta"))


@pytest.mark.parametrize("pred", [True, False, 1, 0.0, "tensor-true", "tensor-false"])
def test_cond_takes_the_branch_torch_takes(pred):
    def run(m, x):
        p = m.tensor(pred == "tensor-true") if isinstance(pred, str) else pred
        return m.cond(p, lambda v: (v * 3).sin(), lambda v: v.cos(), (x,))
    check(run, [np.array([1.0, 2.0])])


def test_cond_refuses_a_predicate_of_several_elements():
    check_raises(lambda m: m.cond(m.tensor([True, False]), lambda v: v, lambda v: v,
                                  (m.ones(2),)))


def test_while_loop_returns_what_torch_returns():
    cases = [
        lambda m: m.while_loop(lambda i: i < 3, lambda i: i + 1, (m.tensor(0),)),
        lambda m: m.while_loop(lambda i: i < 3, lambda i: (i + 1,), (m.tensor(0),)),
        lambda m: m.while_loop(lambda i: i < 0, lambda i: i + 1, (m.tensor(5),)),
        lambda m: m.while_loop(lambda i, j: i < 3, lambda i, j: [i + 1, j * 2],
                               (m.tensor(0), m.tensor(1.0))),
    ]
    for case in cases:
        theirs, ours = case(torch), case(ember)
        assert isinstance(ours, ember.Tensor) if isinstance(theirs, torch.Tensor) else \
            type(ours) is type(theirs)
        check(lambda m, case=case: case(m), [])


def test_while_loop_refuses_a_body_that_drops_values():
    with pytest.raises(RuntimeError, match="returned 1 values for 2"):
        ember.while_loop(lambda i, j: i < 3, lambda i, j: i + 1,
                         (ember.tensor(0), ember.tensor(1)))


def test_sdpa_kernel_sets_and_restores_the_switches_as_torch():
    def switches(m):
        c = m.backends.cuda
        return (c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.math_sdp_enabled(),
                c.cudnn_sdp_enabled())

    results = []
    for m in (torch, ember):
        attention = m.nn.attention
        before = switches(m)
        with attention.sdpa_kernel(attention.SDPBackend.MATH) as value:
            only_math = switches(m)
        with attention.sdpa_kernel([attention.SDPBackend.FLASH_ATTENTION,
                                    attention.SDPBackend.MATH], set_priority=True):
            two = switches(m)
        results.append((before, only_math, two, switches(m), value))
    assert results[0] == results[1]


def test_sdpa_kernel_refuses_what_is_not_a_backend():
    check_raises(lambda m: m.nn.attention.sdpa_kernel("MATH").__enter__())


def test_sdp_backends_have_torchs_names_and_values():
    theirs = torch.nn.attention.SDPBackend
    ours = ember.nn.attention.SDPBackend
    assert {name: int(value) for name, value in theirs.__members__.items()} == \
        {name: int(value) for name, value in ours.__members__.items()}
    assert str(ours.MATH) == str(theirs.MATH)


def test_attention_under_a_kernel_choice_is_unchanged():
    def run(m, q, k, v):
        with m.nn.attention.sdpa_kernel(m.nn.attention.SDPBackend.MATH):
            return m.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    rng = np.random.default_rng(0)
    check(run, [rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(3)],
          atol=1e-6)


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the machine without a GPU")
def test_pinned_memory_answers_as_torch_without_a_gpu():
    check(lambda m, x: x.is_pinned(), [np.ones(2, np.float32)], grad=False)
    check_raises(lambda m, x: x.pin_memory(), [np.ones(2, np.float32)])


def test_is_distributed_answers_as_torch():
    check(lambda m, x: (m.is_distributed(x), x.is_distributed()), [np.ones(2, np.float32)],
          grad=False)
    check_raises(lambda m: m.is_distributed(3))


@pytest.mark.parametrize("call", [
    "xpu.is_available()", "xpu.device_count()", "xpu.is_initialized()",
    "xpu.is_bf16_supported()", "xpu.manual_seed(0)", "xpu.manual_seed_all(0)", "xpu.seed()",
    "xpu.seed_all()", "xpu.empty_cache()", "xpu.current_device()", "xpu.synchronize()",
    "xpu.get_device_name()",
    "mps.is_available()", "mps.device_count()", "mps.manual_seed(0)", "mps.seed()",
    "mps.synchronize()", "mps.empty_cache()", "mps.current_allocated_memory()",
    "mps.driver_allocated_memory()",
])
@pytest.mark.skipif(torch.xpu.is_available() or torch.backends.mps.is_available(),
                    reason="checks a machine without Intel or Apple GPUs")
def test_absent_device_modules_answer_as_torch_here(call):
    theirs, ours = _both(lambda m: eval(f"m.{call}", {"m": m}))
    assert ours == theirs

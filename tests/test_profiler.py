"""ember.profiler: FLOP totals against the analytic counts, the table, the chrome trace,
record_function, schedules, per-module totals, and that nothing is left hooked afterwards."""
import json

import pytest

import ember
from ember.autograd import _instrument, engine
from ember.ops import _dispatch
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

B, IN, HID, OUT = 5, 4, 8, 3


def mlp():
    return ember.nn.Sequential(ember.nn.Linear(IN, HID), ember.nn.ReLU(),
                               ember.nn.Linear(HID, OUT))


def flops_by_name(prof):
    return {e.key: e.flops for e in prof.key_averages()}


def test_mlp_flops_equal_the_analytic_count():
    model = mlp()
    x = ember.randn(B, IN)
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        model(x).sum().backward()
    flops = flops_by_name(prof)
    # forward: one GEMM per layer, 2 * rows * in * out (Linear is addmm(bias, x, weight.t()))
    assert flops["ember::addmm"] == 2 * B * IN * HID + 2 * B * HID * OUT
    # backward: layer 2 needs grad_x and grad_w, layer 1 only grad_w (x needs no grad)
    backward_gemms = 2 * (2 * B * HID * OUT) + 2 * B * IN * HID
    assert flops.get("ember::mm", 0) + flops.get("ember::matmul", 0) == backward_gemms
    assert flops["ember::relu"] == B * HID                  # elementwise: output elements
    assert flops["ember::threshold_backward"] == B * HID
    assert flops["ember::sum"] == B * OUT                   # reductions: input elements
    # the bias gradients: the engine sums addmm's gradient down to each bias's shape
    assert flops["ember::sum_to_size"] == B * OUT + B * HID


@pytest.mark.parametrize("groups", [1, 2])
def test_conv_flops_equal_the_im2col_gemm(groups):
    n, c_in, c_out, k, size = 2, 4, 6, 3, 9
    conv = ember.nn.Conv2d(c_in, c_out, k, stride=2, padding=1, groups=groups)
    x = ember.randn(n, c_in, size, size, requires_grad=True)
    with profile(with_flops=True) as prof:
        y = conv(x)
        y.sum().backward()
    out = (size + 2 - k) // 2 + 1
    gemm = 2 * n * out * out * c_out * (c_in // groups) * k * k
    flops = flops_by_name(prof)
    assert tuple(y.shape) == (n, c_out, out, out)
    assert flops["ember::convolution"] == gemm
    assert flops["ember::conv_input_grad"] == gemm   # dL/dx: the adjoint GEMM
    assert flops["ember::conv_weight_grad"] == gemm  # dL/dw


def test_table_lists_forward_and_backward_ops():
    model = mlp()
    with profile(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        with record_function("forward"):
            loss = model(ember.randn(B, IN)).sum()
        loss.backward()
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=100)
    for name in ("forward", "ember::addmm", "ember::relu", "AddmmBackward0", "ReluBackward0",
                 "autograd::engine::evaluate_function: AddmmBackward0", "AccumulateGrad",
                 "Total FLOPs", "CPU Mem", "# of Calls", "Self CPU time total"):
        assert name in table, name
    rows = prof.key_averages()
    times = [r.cpu_time_total for r in rows]
    short = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    assert len(short.splitlines()) == 3 + 3 + 2  # rules, header, 3 rows, total
    assert max(times) == max(r.cpu_time_total for r in rows)
    by_calls = {r.key: r.count for r in rows}
    assert by_calls["ember::addmm"] == 2 and by_calls["AddmmBackward0"] == 2
    shaped = prof.key_averages(group_by_input_shape=True)
    assert sorted(r.input_shapes for r in shaped if r.key == "ember::addmm") == \
        sorted([[[OUT], [B, HID], [HID, OUT]], [[HID], [B, IN], [IN, HID]]])
    assert "Input Shapes" in shaped.table()
    with pytest.raises(ValueError):
        rows.table(sort_by="nonsense")


def test_events_nest_and_times_add_up():
    model = mlp()
    with profile() as prof:
        with record_function("step"):
            model(ember.randn(B, IN)).sum().backward()
    events = prof.events()
    step = next(e for e in events if e.name == "step")
    assert step.cpu_parent is None
    outer = [e for e in events if e.name == "autograd::engine::evaluate_function: AddmmBackward0"]
    for e in outer:
        assert e.cpu_parent is step
        (inner,) = e.cpu_children
        assert inner.name == "AddmmBackward0"
        assert all(c.name.startswith("ember::") for c in inner.cpu_children)
        assert inner.cpu_children  # the rule's ops ran inside the node
    for e in events:
        assert e.self_cpu_time_total >= -1e-6
        assert e.start_us <= e.end_us
    assert events.self_cpu_time_total == pytest.approx(step.cpu_time_total, rel=1e-9)


def test_chrome_trace(tmp_path):
    model = mlp()
    with profile(record_shapes=True, with_flops=True) as prof:
        with record_function("forward"):
            loss = model(ember.randn(B, IN)).sum()
        loss.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = {e["name"] for e in complete}
    assert {"forward", "ember::addmm", "AddmmBackward0", "SumBackward0",
            "autograd::engine::evaluate_function: SumBackward0"} <= names
    for e in complete:
        assert e["dur"] >= 0 and isinstance(e["ts"], float)
        assert {"pid", "tid", "cat", "args"} <= set(e)
    linear = [e for e in complete if e["name"] == "ember::addmm"]
    assert sum(e["args"]["flops"] for e in linear) == 2 * B * IN * HID + 2 * B * HID * OUT
    assert linear[0]["args"]["Input Dims"] == [[HID], [B, IN], [IN, HID]]
    forward = next(e for e in complete if e["name"] == "forward")
    assert forward["cat"] == "user_annotation"
    for e in linear:  # the ops ran inside the user range
        assert forward["ts"] <= e["ts"] and e["ts"] + e["dur"] <= forward["ts"] + forward["dur"]


def test_record_function_as_decorator_and_without_profiler():
    @record_function("helper")
    def helper(x):
        return x * 2

    helper(ember.ones(2))  # no profiler: nothing happens
    with profile() as prof:
        helper(ember.ones(2))
        helper(ember.ones(2))
    counts = {r.key: r.count for r in prof.key_averages()}
    assert counts["helper"] == 2 and counts["ember::mul_scalar"] == 2


def test_schedule_records_only_active_steps():
    actions = [schedule(wait=1, warmup=1, active=2, repeat=2)(step) for step in range(10)]
    A = ProfilerAction
    assert actions == [A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE,
                       A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE]
    traces = []

    def ready(prof):
        traces.append(sorted(r.key for r in prof.key_averages() if r.key.startswith("Profiler")))

    x = ember.ones(3)
    with profile(schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=ready) as prof:
        for _ in range(8):
            x = x * 1.0
            prof.step()
    assert traces == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]


def test_per_module_totals():
    model = mlp()
    with profile(with_flops=True, with_modules=True) as prof:
        model(ember.randn(B, IN)).sum().backward()
    modules = {r.key: r for r in prof.key_averages(group_by_module=True)}
    assert set(modules) == {"Sequential", "Sequential.0", "Sequential.1", "Sequential.2"}
    first = 2 * B * IN * HID  # forward GEMM; backward: grad_w only (the engine sums the bias
    assert modules["Sequential.0"].flops == 2 * first  # gradient outside the layer's nodes)
    assert modules["Sequential.1"].flops == 2 * B * HID           # relu, threshold_backward
    assert modules["Sequential"].flops == sum(modules[f"Sequential.{k}"].flops for k in range(3))
    assert modules["Sequential"].self_cpu_time_total == 0.0
    assert "Sequential.2" in prof.key_averages(group_by_module=True).table()


def test_nothing_stays_hooked():
    with profile(with_modules=True):
        assert _dispatch._observer is not None
    assert _dispatch._observer is None and engine._observer is None
    assert _instrument._listeners == []
    assert not ember.nn.modules._hooks.any_global_hooks()
    assert ember.profiler.profiler._recording == []


def test_unsupported_arguments_say_so():
    with pytest.raises(NotImplementedError):
        profile(experimental_config=object())
    with pytest.warns(UserWarning, match="host"):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


def test_with_stack_names_the_user_line():
    with profile(with_stack=True) as prof:
        ember.ones(2) * 3
    (mul,) = [e for e in prof.events() if e.name == "ember::mul_scalar"]
    assert mul.stack and mul.stack[0].startswith(__file__)
    assert mul.stack[0].endswith("test_with_stack_names_the_user_line")


def test_tensorboard_trace_handler_writes_chrome_traces(tmp_path):
    from ember.profiler import tensorboard_trace_handler

    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="w")):
        ember.ones(2) + 1
    (path,) = tmp_path.iterdir()
    assert path.name.startswith("w.") and path.name.endswith(".pt.trace.json")
    names = {e["name"] for e in json.loads(path.read_text())["traceEvents"]}
    assert "ember::add_scalar" in names or "ember::add" in names

"""torch.autograd's other names against torch: the profiler modules and types, the engine
switches, variable, is_view_replay_enabled."""
import pytest

import ember

torch = pytest.importorskip("torch")


def test_autograd_profiler_records_ops_and_backward():
    with ember.autograd.profiler.profile(record_shapes=True, with_flops=True) as prof:
        with ember.autograd.profiler.record_function("step"):
            x = ember.ones(3, 4, requires_grad=True)
            (x @ x.mT).sum().backward()
    names = {e.name for e in prof.function_events}
    assert {"step", "ember::mm", "MmBackward0"} <= names
    assert "Name" in prof.table() and str(prof) == prof.table()
    assert isinstance(prof.function_events, ember.autograd.profiler_util.EventList)
    assert prof.key_averages().table(row_limit=3)


def test_disabled_profile_records_nothing():
    with ember.autograd.profiler.profile(enabled=False) as prof:
        ember.ones(2) * 2
    assert prof.enabled is False


def test_profiler_legacy_and_types():
    with ember.autograd.profiler_legacy.profile() as prof:
        ember.ones(2).exp()
    assert any(e.name == "ember::exp" for e in prof.function_events)
    for name in ("DeviceType", "ProfilerState"):
        ours, theirs = getattr(ember.autograd, name), getattr(torch.autograd, name)
        assert {m: int(v) for m, v in ours.__members__.items()} == \
            {m: int(v) for m, v in theirs.__members__.items()}
    config = ember.autograd.ProfilerConfig(ember.autograd.ProfilerState.CPU, True, False,
                                           False, False, False, None)
    assert config.state is ember.autograd.ProfilerState.CPU and config.report_input_shapes
    assert ember.autograd.ProfilerActivity is ember.profiler.ProfilerActivity
    assert ember.autograd.kineto_available() is False


def test_nvtx_and_itt_need_their_libraries():
    with pytest.raises(RuntimeError, match="no NVTX binding"):
        with ember.autograd.profiler.emit_nvtx():
            pass
    with pytest.raises(RuntimeError, match="no Intel ITT binding"):
        with ember.autograd.profiler.emit_itt():
            pass
    with ember.autograd.profiler.emit_nvtx(enabled=False):
        pass


@pytest.mark.parametrize("switch, query", [
    ("set_multithreading_enabled", lambda m: m.autograd.is_multithreading_enabled()),
])
def test_engine_switches(switch, query):
    for m in (ember, torch):
        assert query(m) is True
        with getattr(m.autograd, switch)(False):
            assert query(m) is False
        assert query(m) is True
        getattr(m.autograd, switch)(False)
        assert query(m) is False
        getattr(m.autograd, switch)(True)


def test_enforce_grad_layout_policy_keeps_gradients():
    for m in (ember, torch):
        p = m.ones(2, 3, requires_grad=True)
        with m.autograd.enforce_grad_layout_policy(False):
            (p * 2).sum().backward()
        assert p.grad.tolist() == [[2.0] * 3] * 2


def test_variable_and_view_replay():
    for m in (ember, torch):
        with pytest.raises(RuntimeError, match="torch.autograd.variable\\(...\\) is deprecated"):
            m.autograd.variable(m.ones(2))
        assert m.autograd.is_view_replay_enabled() is False

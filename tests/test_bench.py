"""The benchmark runner's bookkeeping on two quick workloads (nothing here is timed against a
limit: benchmarks never run as timed tests)."""
import pytest

torch = pytest.importorskip("torch")


def test_time_workloads_reports_medians_ratios_and_their_range(monkeypatch):
    from bench.run import time_workloads

    # run.py's parent process sets the thread count; keep this process's own
    monkeypatch.setenv("OMP_NUM_THREADS", str(torch.get_num_threads()))
    rows = time_workloads(["overhead_forward", "mlp"], rounds=2, repeats=1)
    assert [r["workload"] for r in rows] == ["overhead_forward", "mlp"]
    assert [r["unit"] for r in rows] == ["us/op", "ms/step"]
    for r in rows:
        assert r["ember"] > 0 and r["torch"] > 0
        assert r["ratio"] == pytest.approx(r["ember"] / r["torch"])
        low, high = r["ratio_range"]
        assert 0 < low <= high

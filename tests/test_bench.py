"""The benchmark runner's bookkeeping on two quick workloads (nothing here is timed against a
limit: benchmarks never run as timed tests)."""
import pytest

torch = pytest.importorskip("torch")


def test_time_workloads_reports_medians_ratios_and_their_range(monkeypatch):
    from bench.run import time_workloads

    # run.py's parent process sets the thread count; keep this process's own
    monkeypatch.setenv("OMP_NUM_THREADS", str(torch.get_num_threads()))
    rows = time_workloads(["overhead_forward", "mlp"], rounds=2, repeats=1, device="cpu")
    assert [r["workload"] for r in rows] == ["overhead_forward", "mlp"]
    assert [r["unit"] for r in rows] == ["us/op", "ms/step"]
    for r in rows:
        assert r["ember"] > 0 and r["torch"] > 0
        assert r["ratio"] == pytest.approx(r["ember"] / r["torch"])
        low, high = r["ratio_range"]
        assert 0 < low <= high


def test_tiny_op_loops_time_per_op_in_both_libraries(monkeypatch):
    """The issue's loop `(a * b + a).sum()` with grad recorded, with backward, and under
    no_grad: three ops an iteration, timed per op."""
    from bench.run import time_workloads
    from bench.workloads import WORKLOADS

    monkeypatch.setenv("OMP_NUM_THREADS", str(torch.get_num_threads()))
    names = ["tiny_forward", "tiny_backward", "tiny_no_grad"]
    rows = time_workloads(names, rounds=1, repeats=1, device="cpu")
    assert [(r["workload"], r["unit"]) for r in rows] == [(n, "us/op") for n in names]
    assert all(r["ember"] > 0 and r["torch"] > 0 for r in rows)
    assert {WORKLOADS[n](torch).ops_per_step for n in names} == {300}


def test_blas_kernels_script_times_every_shape_under_each_kernel_set():
    """bench/blas_kernels.py switches OpenBLAS's kernels back and forth in one process."""
    import os
    import subprocess
    import sys

    from ember import _blas

    if _blas.thread_control is None or _blas.openblas_choice is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS with a choice of kernels")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "bench", "blas_kernels.py"),
                          "--threads", "1", "--rounds", "1", "--repeats", "1",
                          "--cores", "Sandybridge,Haswell"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith("1 thread(s)") and "Sandybridge / Haswell" in out[0]
    rows = out[2:]
    assert len(rows) >= 10  # LSTM, MLP, GPT and ResNet shapes
    for row in rows:  # "(M, K, N)  t1  t2  speed-up   where it runs"
        shape, numbers = row.split(")")[0] + ")", row.split(")")[1].split()
        assert shape.strip().startswith("(") and len(shape.split(",")) == 3
        assert float(numbers[0]) > 0 and float(numbers[1]) > 0 and float(numbers[2]) > 0
        assert len(numbers) > 3  # the description of where the benchmarks run it


def test_peak_memory_counts_the_helper_process():
    """A large LSTM layer runs half its batch in ember's helper process: that process's
    private memory is part of what the workload costs."""
    from bench.run import _status, peak_memory
    from ember import _helper

    if not _helper.usable():
        pytest.skip("no helper process here (one thread, or no memfd / OpenBLAS)")
    mib = peak_memory("ember", "lstm", steps=1)
    helper = _helper._helper
    assert helper is not None and helper.up  # the warm-up lasted until it was up
    assert mib * 1024 >= _status("RssAnon", helper.process.pid)


def test_no_workload_computes_in_float64(monkeypatch):
    """Every array an op's kernel hands back during a step of every workload -- forward,
    backward and the LSTM's workspaces, before dispatch casts it to the op's dtype -- is
    float32 (or an integer or bool index), never float64."""
    import numpy as np

    import ember
    from bench.workloads import WORKLOADS
    from ember.ops import _dispatch

    seen = {}
    wrap, make_tensor = _dispatch._wrap, _dispatch._make

    def recording_wrap(r, out_np, device, xp):  # results that dispatch casts or converts
        seen.setdefault(np.asarray(r).dtype, set()).add(current)
        return wrap(r, out_np, device, xp)

    def recording_make(data, *args):  # results wrapped as they came
        seen.setdefault(data.dtype, set()).add(current)
        return make_tensor(data, *args)
    monkeypatch.setattr(_dispatch, "_wrap", recording_wrap)
    monkeypatch.setattr(_dispatch, "_make", recording_make)
    for current, make in WORKLOADS.items():
        make(ember)()
    assert np.dtype(np.float64) not in seen, sorted(seen.get(np.dtype(np.float64), ()))
    assert set(seen[np.dtype(np.float32)]) == set(WORKLOADS)


def test_profile_script_ranks_each_librarys_ops_by_self_time():
    """bench/op_profile.py prints one table per library, its rows in order of self time."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "bench", "op_profile.py"), "mlp",
                          "--threads", "1", "--steps", "1", "--rows", "4"],
                         capture_output=True, text=True, check=True).stdout
    tables = {}
    for block in out.split("\n\n"):
        lines = [line for line in block.strip().splitlines() if line]
        if lines and lines[0].startswith(("ember:", "torch:")):
            tables[lines[0].split(":")[0]] = lines[2:]
    assert set(tables) == {"ember", "torch"}
    for label, rows in tables.items():
        assert 1 <= len(rows) <= 4
        times = [float(row.split()[-3]) for row in rows]
        assert times == sorted(times, reverse=True) and times[0] > 0
        assert any(row.startswith(("ember::addmm", "ember::mm", "aten::addmm", "aten::mm"))
                   for row in rows)  # an MLP step is mostly its products


def test_profile_top_ops_per_step_and_share():
    from types import SimpleNamespace

    from bench.op_profile import top_ops

    events = [SimpleNamespace(key="a", self_cpu_time_total=3000.0, count=4),
              SimpleNamespace(key="b", self_cpu_time_total=1000.0, count=2),
              SimpleNamespace(key="c", self_cpu_time_total=6000.0, count=8)]
    assert top_ops(events, steps=2, rows=2) == [("c", 3.0, 4.0, 0.6), ("a", 1.5, 2.0, 0.3)]

"""The helper process (ember/_helper.py) and its shared memory (ember/_shared_memory.py).

An LSTM or GRU layer whose batch is shared with the helper computes what torch computes,
for padded and packed batches, both directions, projections and stacked layers. A helper
that fails or stops gives a clear error or a fallback to this process, never a wrong result.
"""
import gc
import operator
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ember
from ember import _helper
from ember import _shared_memory as shared
from ember.ops.nn import rnn as rnn_ops

from .test_nn_rnn import T, compare, hidden_shapes, pair, run_packed

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.usefixtures("one_torch_thread"),
              pytest.mark.skipif(not shared.available or _helper.thread_control is None
                                 or not _helper._PYTHON,
                                 reason="needs Linux memfd, NumPy's OpenBLAS and an "
                                        "interpreter named python"),
              pytest.mark.skipif(os.environ.get("EMBER_HELPER_PROCESS") == "0",
                                 reason="the helper process is turned off")]


def _wait_until_up(seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        helper = _helper._idle_helper()
        if helper is not None:
            helper.lock.release()
            return helper
        time.sleep(0.05)
    raise AssertionError("the helper process did not come up")


@pytest.fixture
def helper(monkeypatch):
    """Every LSTM layer shares its batch with a running helper; `helper.calls` counts the
    calls that went to it."""
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    monkeypatch.setattr(rnn_ops, "SPLIT_MACS", 0)
    monkeypatch.setattr(rnn_ops, "SPLIT_BATCH", 2)
    calls = []
    submit = _helper._Helper.submit

    def counting_submit(self, fn, args):
        calls.append(fn.__name__)
        return submit(self, fn, args)
    monkeypatch.setattr(_helper._Helper, "submit", counting_submit)
    running = _wait_until_up()
    running.calls = calls
    yield running
    ember.set_num_threads(threads)


@pytest.fixture
def own_news():
    """For tests that read the news themselves: the helper is told of every segment again
    afterwards, so that what they took is not lost to it."""
    _drain_news()
    yield
    shared.tell_all()


def _drain_news():
    news = shared.take_news()
    for item in news:
        if item[0] == "map":
            os.close(item[3])
    return [item[:2] for item in news]


@pytest.fixture
def fresh_helper_state():
    """Tests that stop the helper leave the module as they found it: no helper, not retired."""
    retired = _helper._retired
    yield
    if _helper._helper is not None:
        _helper._helper.close()
    _helper._helper, _helper._retired = None, retired


# ----------------------------------------------------------------------------------------------
# the split LSTM against torch


SPLIT_MODES = [("LSTM", {}), ("LSTM", {"proj_size": 3}), ("GRU", {})]
WALKS = {"LSTM": "_lstm_steps", "GRU": "_gru_steps"}


@pytest.mark.parametrize("mode", SPLIT_MODES, ids=["lstm", "lstm_proj", "gru"])
@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
@pytest.mark.parametrize("batch", [2, 5])
def test_split_layers_against_torch(helper, mode, layers, bidirectional, batch):
    name, kw = mode
    t_mod, e_mod = pair(name, 4, 6, num_layers=layers, bidirectional=bidirectional, **kw)
    states = [T(*s) for s in hidden_shapes(name, kw, layers, 1 + bidirectional, batch,
                                           hidden=6)]

    def run(lib, mod, x, *states):
        return mod(x, tuple(states) if name == "LSTM" else states[0])
    compare(t_mod, e_mod, run, [T(7, batch, 4)] + states)
    directions = layers * (1 + bidirectional)
    assert helper.calls.count(WALKS[name]) == directions
    assert helper.calls.count(WALKS[name] + "_backward") == directions


@pytest.mark.parametrize("name", ["LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_split_packed_layers_against_torch(helper, name, enforce_sorted, bidirectional):
    # batch 6 in halves of 3: the second half holds the short sequences and empties first
    t_mod, e_mod = pair(name, 4, 5, bidirectional=bidirectional)
    lengths = [5, 5, 3, 2, 2, 1] if enforce_sorted else [2, 5, 1, 5, 3, 2]
    compare(t_mod, e_mod, run_packed(name, lengths, False, enforce_sorted),
            [T(5, 6, 4)])
    assert helper.calls.count(WALKS[name]) == 1 + bidirectional


def test_split_float32_training_step_matches_one_process(helper):
    """The workload's float32 layer: both ways give the same loss and gradients."""
    results = []
    for split in (True, False):
        rnn_ops.SPLIT_MACS = 0 if split else 1 << 62
        ember.manual_seed(0)
        model = ember.nn.LSTM(8, 32)
        x = ember.randn(12, 16, 8)
        loss = model(x)[0].square().mean()
        loss.backward()
        results.append([loss.item()] + [p.grad.numpy().copy() for p in model.parameters()])
    assert helper.calls.count("_lstm_steps") == 1
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-6)
    for a, b in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_training_steps_reuse_their_segments(helper):
    """After the first steps, a training loop makes no new shared memory: the pool hands the
    freed segments out again."""
    model = ember.nn.LSTM(8, 16)
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01)
    x = ember.randn(10, 6, 8)

    def step():
        optimizer.zero_grad()
        model(x)[0].square().mean().backward()
        optimizer.step()
    for _ in range(3):
        step()
    made = shared._pool.count
    for _ in range(30):
        step()
    assert helper.calls.count("_lstm_steps") == 33
    assert shared._pool.count == made


def test_outputs_live_in_shared_memory_and_outlive_the_helper(helper, fresh_helper_state):
    out, (h_n, c_n) = ember.nn.LSTM(3, 4)(ember.randn(5, 4, 3))
    assert shared.where(out.detach().numpy()) is not None
    expected = out.detach().numpy().copy()
    _helper._helper.close()
    _helper._retire()
    gc.collect()
    np.testing.assert_array_equal(out.detach().numpy(), expected)


def test_small_layers_and_one_thread_stay_in_this_process():
    assert rnn_ops.SPLIT_MACS > 0
    threads = ember.get_num_threads()
    try:
        ember.set_num_threads(2)  # where the layers would be split if they were large enough
        out, _ = ember.nn.LSTM(3, 4)(ember.randn(5, 30, 3))  # far below SPLIT_MACS
        assert shared.where(out.detach().numpy()) is None
        out, _ = ember.nn.LSTM(64, 256)(ember.randn(50, 16, 64))  # a batch below SPLIT_BATCH
        assert shared.where(out.detach().numpy()) is None
        ember.set_num_threads(1)
        assert not _helper.usable()
    finally:
        ember.set_num_threads(threads)


def test_the_environment_can_turn_the_helper_off():
    code = ("import ember, ember._helper as h; ember.set_num_threads(2); "
            "print(h.usable(), h._helper)")
    env = dict(os.environ, EMBER_HELPER_PROCESS="0")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["False", "None"]


def test_a_script_that_ends_while_the_helper_starts_exits_cleanly():
    """The helper may still be starting (or just up) when a short script ends: it must leave
    quietly, with no traceback on the shared stderr."""
    code = ("import ember; ember.set_num_threads(2); "
            "ember.nn.LSTM(64, 256)(ember.randn(50, 32, 64)); print('done')")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0 and out.stdout.split() == ["done"]
        assert out.stderr == ""


# ----------------------------------------------------------------------------------------------
# failures


def test_an_error_in_the_helper_is_raised_here_and_it_keeps_serving(helper):
    helper.lock.acquire()
    try:
        helper.submit(operator.truediv, (0,))  # runs truediv(numpy, 0) there
        with pytest.raises(RuntimeError, match="(?s)in ember's helper process.*TypeError"):
            helper.wait()
        helper.submit(getattr, ("float32",))
        helper.wait()
    finally:
        helper.lock.release()


def test_large_private_arrays_are_refused_before_anything_is_sent(helper):
    made = shared.empty((5 << 20,), np.float32)  # a new segment: its news are pending
    helper.lock.acquire()
    try:
        with pytest.raises(ValueError, match="bytes of arguments"):
            helper.submit(operator.is_not, (np.zeros(1 << 20),))
        helper.submit(operator.is_not, (made,))  # the news of `made` were kept for this call
        helper.wait()
    finally:
        helper.lock.release()


def test_a_killed_helper_means_this_process_works_alone(helper, fresh_helper_state):
    t_mod, e_mod = pair("LSTM", 4, 5)
    os.kill(helper.process.pid, signal.SIGKILL)
    helper.process.wait()

    def run(lib, mod, x):
        return mod(x)
    compare(t_mod, e_mod, run, [T(6, 4, 4)])  # the send fails: the whole batch runs here
    assert _helper._retired and not _helper.usable()


def test_a_helper_that_stops_mid_call_is_a_clear_error(helper, fresh_helper_state):
    helper.lock.acquire()
    try:
        os.kill(helper.process.pid, signal.SIGKILL)
        helper.process.wait()
        with pytest.raises(RuntimeError, match=r"helper process \(pid \d+\) stopped"):
            helper.wait()
    finally:
        helper.lock.release()
    assert _helper._retired


def test_an_interrupted_wait_stops_the_helper_at_once(helper, fresh_helper_state):
    """Ctrl-C while the helper works: it is killed before the arrays it writes are freed."""
    steps, batch, hidden = 20000, 4, 16  # ~0.3 s in the helper
    part = ((batch,) * steps, False, batch // 2, batch)
    acts = shared.empty((steps * batch, 4 * hidden), np.float32)
    acts[...] = 0
    h_ext, c_ext = (shared.empty(((steps + 1) * batch, hidden), np.float32) for _ in range(2))
    h_ext[...] = c_ext[...] = 0
    w_hh_t = shared.empty((hidden, 4 * hidden), np.float32)
    w_hh_t[...] = 0
    scale, shift = rnn_ops._lstm_gate_affine(np, hidden, np.float32)

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, interrupt)
    helper.lock.acquire()
    try:
        helper.submit(rnn_ops._lstm_steps, (part, acts, h_ext, c_ext, w_hh_t, None, scale,
                                            shift))
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(KeyboardInterrupt):
            helper.wait()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        helper.lock.release()
    assert helper.process.poll() is not None and _helper._retired


def test_a_forked_child_has_its_own_pool_and_no_helper(helper):
    kept = shared.empty((1000,), np.float32)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child reports, then leaves at once
        ok = _helper._helper is None and shared._pool.count == 0 and not shared._pool.free
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"1"
    os.close(read)
    os.waitpid(pid, 0)
    assert _helper._helper is helper and shared.where(kept) is not None


# ----------------------------------------------------------------------------------------------
# shared memory


def test_a_new_helper_learns_every_segment_even_more_than_a_message_can_carry(
        helper, fresh_helper_state):
    arrays = [shared.empty((100 + k,), np.float32) for k in range(_helper._MAX_FDS + 10)]
    helper.lock.acquire()
    helper.submit(operator.is_not, (arrays[-1],))  # the first helper hears of them all
    helper.wait()
    helper.lock.release()
    helper.close()
    _helper._helper = None
    fresh = _wait_until_up()  # a second helper, which has mapped nothing yet
    assert fresh is not helper
    fresh.lock.acquire()
    try:
        fresh.submit(operator.is_not, (arrays[-1],))  # the last segment, after 250 others
        fresh.wait()  # a KeyError there if it had not been told
    finally:
        fresh.lock.release()


def test_shared_arrays_views_and_private_arrays():
    a = shared.empty((3, 5), np.float64)
    assert a.shape == (3, 5) and a.dtype == np.float64 and a.flags.c_contiguous
    segment, offset = shared.where(a)
    assert offset == 0
    assert shared.where(a.T)[0] == segment
    assert shared.where(a[1:, 2:]) == (segment, (5 + 2) * 8)
    assert shared.where(np.empty((3, 5))) is None


def test_freed_segments_are_reused_and_the_news_follow(monkeypatch, own_news):
    monkeypatch.setattr(shared, "_KEEP_FREE_BYTES", 1 << 40)
    a = shared.empty((12 << 20,), np.float32)  # a size no other test uses (pages untouched)
    segment = shared.where(a)[0]
    assert _drain_news() == [("map", segment)]
    del a
    gc.collect()
    b = shared.empty((13 << 20,), np.float32)  # same rounded size: the same segment again
    assert shared.where(b)[0] == segment and _drain_news() == []
    monkeypatch.setattr(shared, "_KEEP_FREE_BYTES", 0)
    del b
    gc.collect()
    assert ("unmap", segment) in _drain_news()

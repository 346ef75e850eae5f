"""The recurrent layers' fast paths against their plain forms.

- The helper process imports the time loops (`ops/nn/_rnn_steps.py`) without the rest of
  ember, which keeps its private memory small; the split walks themselves are compared with
  torch and with one process in test_helper_process.py.
- The W_hh gradient of a padded batch is two products on views of the saved states, where a
  packed batch gathers each row's previous state first (`_previous`).
"""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import ember
from ember import _helper
from ember import _shared_memory as shared
from ember.ops.nn import _rnn_steps
from ember.ops.nn import rnn as rnn_ops

from .test_nn_rnn import compare, pair

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

EMBER_DIR = os.path.dirname(os.path.abspath(ember.__file__))

# what the helper imports of ember: itself, what it needs to map shared memory and hold BLAS
# to one thread, and the module of the loops -- not the package's __init__ (all of ember)
HELPER_MODULES = {"ember", "ember._helper", "ember._shared_memory", "ember._blas",
                  "ember._parallel", "ember._allocator", "ember.ops", "ember.ops.nn",
                  "ember.ops.nn._rnn_steps"}


def _in_bare_python(code):
    """Run `code` in a fresh interpreter set up as the helper is, and return its stdout."""
    script = (_helper._BARE_EMBER + "; import ember._helper as h; h._bare_imports(); " + code)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(EMBER_DIR))
    done = subprocess.run([sys.executable, "-c", script, "0", EMBER_DIR], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_helper_imports_the_loops_without_the_rest_of_ember():
    out = _in_bare_python("import ember.ops.nn._rnn_steps as s; print(s._plan((2, 1), False)[2]); "
                          "print(sys.modules['ember.ops'].__file__); "
                          "print(sorted(m for m in sys.modules if m.startswith('ember')))")
    rows, ops_init, modules = out.splitlines()
    assert rows == "3" and ops_init == "None"  # the module ran; the package's __init__ did not
    assert set(eval(modules)) == HELPER_MODULES
    # the helper is sent the loops by reference to this module
    for walk in (rnn_ops._lstm_steps, rnn_ops._lstm_steps_backward, rnn_ops._gru_steps,
                 rnn_ops._gru_steps_backward):
        assert walk.__module__ == "ember.ops.nn._rnn_steps"


def _rss_anon_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon:"))


@pytest.mark.skipif(not shared.available or _helper.thread_control is None
                    or not _helper._PYTHON or os.environ.get("EMBER_HELPER_PROCESS") == "0",
                    reason="needs Linux memfd, NumPy's OpenBLAS and the helper process")
def test_a_working_helper_holds_less_private_memory_than_ember_imported(monkeypatch):
    """The helper's private memory counts in a program's peak: after a split LSTM's forward
    and backward it holds less than a bare `import ember` does."""
    threads = ember.get_num_threads()
    ember.set_num_threads(2)
    monkeypatch.setattr(rnn_ops, "SPLIT_MACS", 0)
    monkeypatch.setattr(rnn_ops, "SPLIT_BATCH", 2)
    try:
        t_mod, e_mod = pair("LSTM", 4, 16, dtype="float32")
        deadline = time.monotonic() + 30
        while (running := _helper._idle_helper()) is None:  # started by the first call
            assert time.monotonic() < deadline, "the helper process did not come up"
            time.sleep(0.05)
        running.lock.release()

        def run(lib, mod, x):
            return mod(x)
        compare(t_mod, e_mod, run, [np.random.default_rng(0).standard_normal(
            (6, 4, 4)).astype(np.float32)], rtol=1e-4, atol=1e-5)
        helper_kib = _rss_anon_kib(_helper._helper.process.pid)
    finally:
        ember.set_num_threads(threads)
    full = subprocess.run([sys.executable, "-c", "import ember, sys; "
                           "print(next(l.split()[1] for l in open('/proc/self/status') "
                           "if l.startswith('RssAnon:')))"],
                          env=dict(os.environ, PYTHONPATH=os.path.dirname(EMBER_DIR)),
                          capture_output=True, text=True, check=True, timeout=120)
    assert helper_kib < int(full.stdout)


# ----------------------------------------------------------------------------------------------
# the W_hh gradient


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("batch_sizes", [(3,), (3, 3, 3, 3), (3, 2, 2, 1)],
                         ids=["one_step", "padded", "packed"])
def test_weight_grad_matches_the_gathered_previous_states(batch_sizes, reverse):
    rng = np.random.default_rng(0)
    n = sum(batch_sizes)
    d_gates = rng.standard_normal((n, 8))
    hs = rng.standard_normal((n, 2))
    h0 = rng.standard_normal((batch_sizes[0], 2))
    steps = _rnn_steps._plan(batch_sizes, reverse)[0]
    plain = d_gates.T @ rnn_ops._previous(np, hs, h0, steps)
    fast = rnn_ops._weight_grad(np, d_gates, hs, h0, steps, batch_sizes, reverse)
    np.testing.assert_allclose(fast, plain, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["LSTM", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_padded_layers_weight_grads_against_torch(name, bidirectional):
    """The padded path end to end, both directions, one step and several."""
    t_mod, e_mod = pair(name, 3, 4, bidirectional=bidirectional)

    def run(lib, mod, x):
        return mod(x)
    for steps in (1, 5):
        t_mod.zero_grad()
        e_mod.zero_grad()
        compare(t_mod, e_mod, run, [np.random.default_rng(steps).standard_normal((steps, 2, 3))])

"""tests/programs/: PyTorch programs written the way well-known examples and tutorials are
(`import torch`, argparse, DataLoader, ...), each run unmodified twice -- by real torch and
by `python -m ember.run` -- and compared: the same parameter count and facts, a first loss of
the same size, and loss trajectories that both fall to a similar magnitude. (The two libraries
draw different random numbers, so values are compared by magnitude, not digit by digit.)

Each program prints one `RESULT {json}` line (tests/programs/_report.py)."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
ROOT = os.path.dirname(HERE)

# id: (script and arguments, facts that need other helpers' work: {fact: reason}, xfail reason)
CASES = {
    "cnn_adadelta_steplr": (["mnist_cnn.py", "--save-model"], {}, None),
    "lstm_language_model": (["word_language_model.py", "--model", "LSTM"], {}, None),
    "transformer_language_model": (["word_language_model.py", "--model", "Transformer"], {},
                                   None),
    "vae": (["vae.py"], {}, None),
    "dcgan": (["dcgan.py"], {}, None),
    "lbfgs_sine_lstm": (["time_sequence_prediction.py"], {}, None),
    "gpt_amp_compile": (["gpt.py"], {}, None),
    "custom_function": (["custom_function.py"], {}, None),
    "hogwild": (["hogwild.py"], {}, None),
    "legacy_typed_tensors": (["legacy_tensors.py"], {}, None),
}


def run(argv, tmp_path, with_ember):
    """Run a program from its folder's copy in tmp_path; returns its RESULT dict."""
    env = dict(os.environ, PYTHONPATH=PROGRAMS + os.pathsep + ROOT, OMP_NUM_THREADS="1",
               PYTHONWARNINGS="ignore")
    command = [sys.executable] + (["-m", "ember.run"] if with_ember else []) + \
        [os.path.join(PROGRAMS, argv[0])] + argv[1:]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=600)
    who = "ember" if with_ember else "torch"
    assert done.returncode == 0, f"{who} run failed:\n{done.stderr[-3000:]}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"{who} run printed no RESULT line:\n{done.stdout[-2000:]}"
    return json.loads(lines[-1][len("RESULT "):])


_torch_results = {}


def torch_result(case, tmp_path_factory):
    """Real torch's result for a case (run once per session: it does not change)."""
    pytest.importorskip("torch")
    if case not in _torch_results:
        _torch_results[case] = run(CASES[case][0], tmp_path_factory.mktemp("torch"), False)
    return _torch_results[case]


def compare(ours, theirs, pending):
    assert ours["params"] == theirs["params"]
    compare_trajectories(ours["losses"], theirs["losses"])
    for fact in set(theirs) - {"params", "losses"} - set(pending):
        if _is_trajectory(theirs[fact]):
            compare_trajectories(ours[fact], theirs[fact])
        elif isinstance(theirs[fact], float):  # a reloaded model's loss, a learning rate
            assert 1 / 3 <= ours[fact] / theirs[fact] <= 3, (fact, ours[fact], theirs[fact])
        else:
            assert ours[fact] == theirs[fact], fact


def compare_trajectories(mine, reference):
    """The same length, a first value within 25%, both falling, last values within 3x."""
    assert len(mine) == len(reference) >= 2
    assert abs(mine[0] - reference[0]) <= 0.25 * abs(reference[0]), (mine[0], reference[0])
    assert mine[-1] < mine[0] and reference[-1] < reference[0], (mine, reference)
    assert 1 / 3 <= mine[-1] / reference[-1] <= 3, (mine[-1], reference[-1])


def _is_trajectory(value):
    return isinstance(value, list) and len(value) > 1 and all(isinstance(v, float)
                                                            for v in value)


def _params(with_pending):
    params = []
    for case, (_, pending, reason) in CASES.items():
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        if with_pending:
            params.extend(pytest.param(case, fact, marks=pytest.mark.xfail(strict=True,
                                                                          reason=why),
                                       id=f"{case}-{fact}") for fact, why in pending.items())
        else:
            params.append(pytest.param(case, marks=marks, id=case))
    return params


@pytest.mark.parametrize("case", _params(False))
def test_program_trains_as_under_torch(case, tmp_path, tmp_path_factory):
    argv, pending, _ = CASES[case]
    theirs = torch_result(case, tmp_path_factory)
    ours = run(argv, tmp_path, True)
    compare(ours, theirs, pending)


@pytest.mark.parametrize("case,fact", _params(True))
def test_program_fact_pending_other_work(case, fact, tmp_path, tmp_path_factory):
    theirs = torch_result(case, tmp_path_factory)
    ours = run(CASES[case][0], tmp_path, True)
    assert ours[fact] == theirs[fact]

"""Anomaly mode: detect_anomaly / set_detect_anomaly / is_anomaly_enabled, NaN detection in
backward with the forward stack of the failing node, and the in-place error naming where the
tensor was saved and where it was modified."""
import os
import threading
import warnings

import numpy as np
import pytest

import ember

from .oracle import check_raises

EMBER_PACKAGE = os.path.join(os.path.dirname(os.path.abspath(ember.__file__)), "")
THIS_FILE = __file__


def _line_of(text):
    """The line number of the first line of this file containing `text`."""
    with open(THIS_FILE) as f:
        for number, line in enumerate(f, 1):
            if text in line and "_line_of" not in line:
                return number
    raise AssertionError(text)


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    ember.autograd.set_detect_anomaly(False)


def quiet_detect_anomaly(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ember.autograd.detect_anomaly(**kwargs)


# ----------------------------------------------------------------------------------------------
# switching it on and off


def test_detect_anomaly_context_manager_and_decorator():
    assert not ember.autograd.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        manager = ember.autograd.detect_anomaly()
    with manager:
        assert ember.autograd.is_anomaly_enabled() and ember.is_anomaly_enabled()
        with quiet_detect_anomaly(check_nan=False):
            assert not ember.autograd.anomaly_mode.is_anomaly_check_nan_enabled()
        assert ember.autograd.anomaly_mode.is_anomaly_check_nan_enabled()
    assert not ember.autograd.is_anomaly_enabled()

    @quiet_detect_anomaly()
    def inside(depth):
        deeper = inside(depth - 1) if depth else True
        return deeper and ember.autograd.is_anomaly_enabled()
    assert inside(2) and not ember.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_function_and_context_manager():
    ember.autograd.set_detect_anomaly(True)
    assert ember.autograd.is_anomaly_enabled()
    with ember.autograd.set_detect_anomaly(False):
        assert not ember.autograd.is_anomaly_enabled()
    assert ember.autograd.is_anomaly_enabled()
    ember.autograd.set_detect_anomaly(False)
    assert not ember.autograd.is_anomaly_enabled()


def test_mode_is_global_like_torch():
    seen = []
    with quiet_detect_anomaly():
        thread = threading.Thread(target=lambda: seen.append(ember.is_anomaly_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]


# ----------------------------------------------------------------------------------------------
# NaN in backward


def _nan_graph():
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    zero = x * 0
    y = zero / zero  # the NaN-making line
    return x, y


def test_nan_in_backward_names_the_node_and_its_forward_line():
    with np.errstate(all="ignore"), quiet_detect_anomaly():
        x, y = _nan_graph()
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert message.startswith("Function 'DivBackward0' returned nan values in its ")
    assert "th output." in message
    assert f'File "{THIS_FILE}", line {_line_of("zero / zero")}' in message


def test_nan_check_matches_torch_and_can_be_turned_off():
    def run(m):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autograd.detect_anomaly():
                x = m.tensor([0.0, 1.0], requires_grad=True)
                zero = x * 0
                (zero / zero).sum().backward()
    error = check_raises(run)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as t_info:
        run(torch)
    assert str(error).splitlines()[0] == str(t_info.value).splitlines()[0]

    with np.errstate(all="ignore"), quiet_detect_anomaly(check_nan=False):
        x, y = _nan_graph()
        y.sum().backward()
    assert np.isnan(x.grad.numpy()).any()
    with np.errstate(all="ignore"):
        x, y = _nan_graph()
        y.sum().backward()  # off: no check at all


def test_nan_from_a_custom_function_names_its_node():
    class Broken(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")
    x = ember.ones(2, requires_grad=True)
    with quiet_detect_anomaly():
        y = Broken.apply(x)  # the custom function's line
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert message.startswith("Function 'BrokenBackward' returned nan values in its 0th output.")
    assert f'line {_line_of("the custom function")}' in message


def test_nodes_remember_their_forward_stack_only_while_on():
    x = ember.ones(2, requires_grad=True)
    with quiet_detect_anomaly():
        y = x * 2  # remembered line
    z = x * 3
    trace = "".join(y.grad_fn.metadata["traceback_"])
    assert f'line {_line_of("remembered line")}' in trace
    assert EMBER_PACKAGE not in trace  # no frames of ember itself
    assert "traceback_" not in z.grad_fn.metadata


# ----------------------------------------------------------------------------------------------
# in-place modification of a saved tensor


def test_inplace_error_says_who_saved_and_who_modified():
    x = ember.ones(3, requires_grad=True)
    with quiet_detect_anomaly():
        a = x * 2
        y = a * a  # saves a
        a.add_(1)  # modifies a
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "modified by an inplace operation" in message
    assert "which is output 0 of Add, is at version 1; expected version 0" in message
    assert "saved for backward by MulBackward0" in message
    assert f'line {_line_of("saves a")}' in message
    assert "in-place op 'add_'" in message and f'line {_line_of("modifies a")}' in message


def test_inplace_error_through_a_view_under_no_grad():
    x = ember.ones(2, 2, requires_grad=True)
    with quiet_detect_anomaly():
        a = x * 1
        y = a.exp()  # saves its output a.exp()
        with ember.no_grad():
            y[0].mul_(3)  # writes through a view
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
    message = str(info.value)
    assert "saved for backward by ExpBackward0" in message
    assert f'line {_line_of("saves its output")}' in message
    assert f'line {_line_of("writes through a view")}' in message


def test_without_anomaly_mode_the_error_has_the_hint_only():
    x = ember.ones(3, requires_grad=True)
    a = x * 2
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError, match="Hint: enable anomaly detection") as info:
        y.sum().backward()
    assert "saved for backward by" not in str(info.value)


def test_inplace_log_is_cleared_when_turned_off():
    with quiet_detect_anomaly():
        ember.ones(3).add_(1)
        assert ember.autograd.anomaly_mode._inplace_log
    assert not ember.autograd.anomaly_mode._inplace_log

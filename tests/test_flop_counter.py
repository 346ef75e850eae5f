"""ember.utils.flop_counter.FlopCounterMode against torch's, forward and backward, per module."""
import numpy as np
import pytest

import ember
from ember.utils.flop_counter import FlopCounterMode

torch = pytest.importorskip("torch")
from torch.utils.flop_counter import FlopCounterMode as TorchFlopCounterMode  # noqa: E402


def totals(counter):
    return {name: sum(ops.values()) for name, ops in counter.get_flop_counts().items()}


def run_both(build, make_inputs, backward=True):
    """Run build(m)(*inputs) (and its backward) under each library's counter; the modules get
    the same weights (module names, not values, matter, but equal weights keep it honest)."""
    results = []
    arrays = make_inputs(np.random.default_rng(0))
    for m, counter_class in ((torch, TorchFlopCounterMode), (ember, FlopCounterMode)):
        m.manual_seed(0)
        model = build(m)
        tensors = [m.tensor(a, requires_grad=bool(grad)) for a, grad in arrays]
        with counter_class(display=False) as counter:
            out = model(*tensors)
            if backward:
                out.sum().backward()
        results.append(counter)
    return results


def check_same(build, make_inputs, backward=True):
    theirs, ours = run_both(build, make_inputs, backward)
    assert totals(ours) == totals(theirs)
    assert ours.get_total_flops() == theirs.get_total_flops() > 0
    return ours


def mlp(m):
    return m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Sequential(m.nn.Linear(8, 3)))


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("shape", [(5, 4), (3, 5, 4)])
def test_linear_mlp(shape, backward):
    ours = check_same(mlp, lambda rng: [(rng.standard_normal(shape).astype(np.float32), False)],
                      backward)
    assert set(ours.get_flop_counts()) == {"Global", "Sequential", "Sequential.0",
                                           "Sequential.2", "Sequential.2.0"}


def test_linear_without_bias_and_input_grad():
    check_same(lambda m: m.nn.Linear(6, 2, bias=False),
               lambda rng: [(rng.standard_normal((4, 6)).astype(np.float32), True)])


@pytest.mark.parametrize("backward", [False, True])
def test_conv2d(backward):
    check_same(lambda m: m.nn.Conv2d(3, 4, 3, stride=2, padding=1),
               lambda rng: [(rng.standard_normal((2, 3, 9, 9)).astype(np.float32), True)],
               backward)


def test_conv1d_and_conv_transpose2d():
    check_same(lambda m: m.nn.Conv1d(2, 5, 3, dilation=2),
               lambda rng: [(rng.standard_normal((3, 2, 12)).astype(np.float32), True)])
    check_same(lambda m: m.nn.ConvTranspose2d(3, 2, 3, stride=2),
               lambda rng: [(rng.standard_normal((1, 3, 5, 5)).astype(np.float32), True)])


class Products:
    """Calls mm, addmm and bmm through the library `m`."""

    def __init__(self, m):
        self.m = m

    def __call__(self, a, b, c, bias):
        m = self.m
        return m.mm(a, b).sum() + m.addmm(bias, a, b).sum() + m.bmm(c, c.transpose(1, 2)).sum()


def test_mm_addmm_bmm_forward_and_backward():
    def inputs(rng):
        return [(rng.standard_normal((3, 4)).astype(np.float32), True),
                (rng.standard_normal((4, 5)).astype(np.float32), True),
                (rng.standard_normal((2, 3, 6)).astype(np.float32), True),
                (rng.standard_normal(5).astype(np.float32), True)]
    check_same(Products, inputs)
    forward = check_same(Products, inputs, backward=False).get_flop_counts()["Global"]
    assert forward == {"mm": 2 * 3 * 4 * 5, "addmm": 2 * 3 * 4 * 5, "bmm": 2 * 2 * 3 * 6 * 3}


def test_table_and_display(capsys):
    with FlopCounterMode(depth=2) as counter:  # display=True prints the table on exit
        mlp(ember)(ember.randn(5, 4)).sum().backward()
    printed = capsys.readouterr().out
    assert printed.strip() == counter.get_table().strip()
    lines = printed.splitlines()
    assert lines[0].split() == ["Module", "FLOP", "%", "Total"]
    assert any(line.strip().startswith("Sequential.0") for line in lines)
    assert not any("Sequential.2.0" in line for line in lines)  # deeper than depth=2
    assert "100.00%" in printed


def test_custom_mapping_and_mods():
    model = mlp(ember)
    with FlopCounterMode(mods=model, display=False,
                         custom_mapping={"relu": lambda args, attrs, outs: 7}) as counter:
        model(ember.randn(5, 4))
    assert counter.get_flop_counts()["Sequential.1"] == {"relu": 7}
    assert counter.get_total_flops() == 2 * 5 * 4 * 8 + 2 * 5 * 8 * 3 + 7

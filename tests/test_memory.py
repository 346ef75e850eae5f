"""Training does not leak: graphs are freed after each step (no reference cycles keep them)."""
import gc
import resource

import numpy as np

import ember
from ember import nn


def _step_fn():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = ember.randn(32, 64)
    y = ember.randint(0, 10, (32,))

    def step():
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss
    return step


def test_a_thousand_training_steps_keep_memory_flat():
    step = _step_fn()
    for _ in range(50):
        step()
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(1000):
        step()
    gc.collect()
    growth_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert growth_kib < 20 * 1024, f"peak memory grew by {growth_kib} KiB over 1000 steps"


def test_graphs_are_freed_without_the_cycle_collector():
    """Reference counting alone frees a finished step's graph: nothing in it is cyclic."""
    step = _step_fn()
    step()
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(20):
            step()
        after = len(gc.get_objects())
    finally:
        gc.enable()
    assert after - before < 50, f"{after - before} objects survived 20 steps"


def test_saved_tensors_are_released_by_backward():
    x = ember.randn(1000, requires_grad=True)
    y = (x * 2).exp()
    node = y.grad_fn
    y.sum().backward()
    assert node._saved is None
    assert isinstance(np.asarray(x.grad), np.ndarray)

"""ember.utils.checkpoint against torch.utils.checkpoint: the block really runs again in
backward, both variants give the gradients of running it directly (and torch's), dropout
replays the same mask, and the errors and warnings are torch's. Also the saved-tensor hooks
the non-reentrant variant is built on."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)


class Counting:
    """A block (Linear, tanh, dropout, Linear) that counts how often it runs."""

    def __init__(self, lib):
        lib.manual_seed(0)
        self.net = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(0.3),
                                     lib.nn.Linear(8, 3))
        self.calls = 0

    def __call__(self, x, scale=1.0):
        self.calls += 1
        return self.net(x) * scale


def _gradients(lib, use_reentrant):
    block = Counting(lib)
    x = lib.tensor(X, requires_grad=True)
    lib.manual_seed(1)
    if use_reentrant is None:
        out = block(x)
    else:
        out = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=use_reentrant)
    out.pow(2).sum().backward()
    return block.calls, x.grad.numpy().copy(), block.net[0].weight.grad.numpy().copy()


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_the_forward_runs_again_and_the_gradients_are_the_same(use_reentrant):
    calls, dx, dw = _gradients(ember, use_reentrant)
    direct_calls, direct_dx, direct_dw = _gradients(ember, None)
    assert (calls, direct_calls) == (2, 1)
    np.testing.assert_allclose(dx, direct_dx, rtol=1e-6, atol=1e-7)  # the same dropout mask
    np.testing.assert_allclose(dw, direct_dw, rtol=1e-6, atol=1e-7)
    torch_calls, torch_dx, _ = _gradients(torch, use_reentrant)
    assert torch_calls == 2


def test_same_gradients_as_torch_without_randomness():
    def run(lib, use_reentrant):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(X[:3]))
            lin.bias.zero_()
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda t: lib.tanh(lin(t)) * t[:, :3], x,
                                              use_reentrant=use_reentrant)
        out.sum().backward()
        return x.grad.numpy(), lin.weight.grad.numpy()

    for mode in (True, False):
        for ours, theirs in zip(run(ember, mode), run(torch, mode)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_non_reentrant_works_with_autograd_grad_and_keywords():
    block = Counting(ember)
    x = ember.tensor(X, requires_grad=True)
    out = ember.utils.checkpoint.checkpoint(block, x, use_reentrant=False, scale=2.0)
    grad, = ember.autograd.grad(out.sum(), [x])
    assert grad.shape == (5, 4) and block.calls == 2


def test_reentrant_refuses_what_torch_refuses():
    for lib in (ember, torch):
        block = Counting(lib)
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(block, x, use_reentrant=True)
        with pytest.raises(RuntimeError, match="incompatible with .grad\\(\\) or passing an "
                                               "`inputs` parameter"):
            lib.autograd.grad(out.sum(), [x])
        with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
            lib.utils.checkpoint.checkpoint(block, x, use_reentrant=True, scale=2.0)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            lib.utils.checkpoint.checkpoint(block, lib.tensor(X), use_reentrant=True)
        with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed "
                                             "explicitly"):
            lib.utils.checkpoint.checkpoint(block, x)


def test_checkpoint_sequential_matches_running_the_model():
    torch.manual_seed(0)
    weights = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(4)]).state_dict()

    def run(lib, segmented):
        model = lib.nn.Sequential(*[lib.nn.Linear(4, 4) for _ in range(4)])
        model.load_state_dict({k: lib.tensor(v.numpy()) for k, v in weights.items()})
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False) \
            if segmented else model(x)
        out.sum().backward()
        return x.grad.numpy()

    np.testing.assert_allclose(run(ember, True), run(ember, False), rtol=1e-6)
    np.testing.assert_allclose(run(ember, True), run(torch, True), rtol=1e-5, atol=1e-6)


def test_a_different_recomputation_is_an_error():
    state = {"first": True}

    def changing(x):
        y = x * 2
        if state.pop("first", False):
            y = y.exp()  # saves one more tensor the first time than on recomputation
        return y.sin()

    x = ember.tensor(X, requires_grad=True)
    out = ember.utils.checkpoint.checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(ember.utils.checkpoint.CheckpointError, match="Recomputed values"):
        out.sum().backward()


def test_saved_tensors_hooks_see_every_saved_tensor_like_torch():
    def run(lib):
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t * 1

        def unpack(t):
            return t

        x = lib.tensor(X, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).exp().sum()
        y.backward()
        return sorted(packed), x.grad.numpy()

    (ours, ours_grad), (theirs, theirs_grad) = run(ember), run(torch)
    assert ours == theirs
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = ember.tensor(X, requires_grad=True)
        with ember.autograd.graph.save_on_cpu():
            y = x.sin().sum()
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(X), rtol=1e-6)
    with ember.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="no hooks here"):
            with ember.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

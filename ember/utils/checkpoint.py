"""Activation checkpointing (torch.utils.checkpoint): trade compute for memory by keeping
none of a block's intermediate results and computing the block's forward again in backward.

    out = checkpoint(block, x, use_reentrant=False)
    out.sum().backward()        # block(x) runs a second time here, with grad enabled

Both of torch's variants, with the same gradients as running the block directly:

  * use_reentrant=True (torch's default, with a warning when not given): the block runs
    under no_grad inside a custom Function, which saves only the inputs; its backward
    recomputes the block with grad enabled and calls backward on the recomputed outputs
    (a backward inside a backward -- "reentrant"). Gradients reach the block's parameters by
    that inner backward, so `autograd.grad()` and `backward(inputs=...)` are refused, as
    in torch.
  * use_reentrant=False: the block runs with grad enabled, so its graph is recorded, but
    under saved-tensor hooks (autograd/graph.py) that keep *no* saved tensor: the first time
    backward needs one, the whole block is run again and the recomputed tensors fill in for
    the ones not kept (matched by the order they were saved in; shapes and dtypes are checked
    as torch's determinism_check="default" does). Works with autograd.grad, keyword
    arguments, and inputs that do not require grad.

The RNG state is saved before the forward and restored for the recomputation (dropout draws
the same mask) when preserve_rng_state=True; the autocast state of the forward is restored
too. `checkpoint_sequential` splits a Sequential into segments and checkpoints each one but
the last. Unlike torch's, the non-reentrant recomputation always runs the whole block (no
early stop).
"""
import contextlib
import warnings

from .. import _random
from .._tensor import Tensor
from ..autograd import function as _function
from ..autograd import grad_mode
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "noop_context_fn", "detach_variable"]


class CheckpointError(RuntimeError):
    """The recomputed forward did not save what the first forward saved."""


def noop_context_fn():
    """The default `context_fn`: no extra context for the forward and the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """The tensors in `inputs` detached, each requiring grad as its original did."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def _autocast_state():
    from ..amp import autocast_mode as ac

    return [(device, ac.is_autocast_enabled(device), ac.get_autocast_dtype(device))
            for device in ("cpu", "cuda")]


@contextlib.contextmanager
def _replaying(rng_state, autocast_state):
    """The forward's RNG and autocast state, for the recomputation; the caller's RNG state is
    restored after (torch's fork_rng)."""
    from ..amp import autocast_mode as ac

    if rng_state is None:
        outer = None
    else:
        outer = _random.get_rng_state()
        _random.set_rng_state(rng_state)
    try:
        with contextlib.ExitStack() as stack:
            for device, enabled, dtype in autocast_state:
                if enabled:
                    stack.enter_context(ac.autocast(device, dtype=dtype))
            yield
    finally:
        if outer is not None:
            _random.set_rng_state(outer)


# ----------------------------------------------------------------------------------------------
# use_reentrant=True


class CheckpointFunction(_function.Function):
    """The reentrant variant as a custom Function: forward without a graph, backward that
    recomputes and backpropagates through the recomputed block."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        """Run `run_function(*args)` without recording a graph, keeping the tensor inputs (and, with
        preserve_rng_state, the RNG state) for backward."""
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=4)
        ctx.run_function = run_function
        ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.autocast_state = _autocast_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Rerun `run_function` with grad enabled on detached copies of the inputs (same RNG and
        autocast state), backpropagate `grad_outputs` through it, and return the inputs' gradients.
        Refused (RuntimeError) under `autograd.grad` or `backward(inputs=...)`, as in torch."""
        from ..autograd import _is_checkpoint_valid, backward

        if not _is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible "
                               "with .grad() or passing an `inputs` parameter to .backward(). To "
                               "resolve this error, you can either set use_reentrant=False, or "
                               "call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with _replaying(ctx.rng_state, ctx.autocast_state), grad_mode.enable_grad():
            outputs = ctx.run_function(*detached)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        grads = tuple(x.grad if isinstance(x, Tensor) else None for x in detached)
        return (None, None) + grads


# ----------------------------------------------------------------------------------------------
# use_reentrant=False


class _Recomputation:
    """One checkpointed call's saved tensors: placeholders while the graph waits for backward,
    filled by running the block again on first use."""

    def __init__(self, function, args, kwargs, rng_state, context_fn, check):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = rng_state
        self.autocast_state = _autocast_state()
        self.context_fn = context_fn
        self.check = check
        self.metadata = []   # (shape, dtype, device) of each tensor the forward saved
        self.values = {}     # index -> recomputed tensor, until unpacked

    def pack(self, t):
        self.metadata.append((t.shape, t.dtype, t.device))
        return len(self.metadata) - 1

    def unpack(self, index):
        if index not in self.values:
            self._recompute()
        return self.values.pop(index)

    def _recompute(self):
        recomputed = []

        def keep(t):
            recomputed.append(t.detach())
            return len(recomputed) - 1

        _, recompute_context = self.context_fn()
        with _replaying(self.rng_state, self.autocast_state), grad_mode.enable_grad(), \
                saved_tensors_hooks(keep, lambda i: recomputed[i]), recompute_context:
            self.function(*self.args, **self.kwargs)
        if self.check and [(t.shape, t.dtype, t.device) for t in recomputed] != self.metadata:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                                  "tensors have different metadata than during the forward "
                                  f"pass: saved {len(self.metadata)} tensors, recomputed "
                                  f"{len(recomputed)}, or their shapes/dtypes differ.")
        self.values = dict(enumerate(recomputed))


def _checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check,
                                  args, kwargs):
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    rng_state = _random.get_rng_state() if preserve_rng_state else None
    frame = _Recomputation(function, args, kwargs, rng_state, context_fn,
                           determinism_check == "default")
    forward_context, _ = context_fn()
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


# ----------------------------------------------------------------------------------------------
# the public functions


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """`function(*args, **kwargs)` without keeping its intermediate results; they are
    recomputed in backward (see the module docstring for the two variants)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                      "use_reentrant will raise an exception. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or a list of modules) as `segments` checkpointed chunks; the last
    chunk runs normally (its results are needed for backward right away)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly. In version 2.9 we will raise an "
                      "exception if use_reentrant is not passed. use_reentrant=False is "
                      "recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the "
                      "differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_run_segment(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return _run_segment(end + 1, len(functions) - 1, functions)(input)


def _run_segment(start, end, functions):
    def forward(input):
        for j in range(start, end + 1):
            input = functions[j](input)
        return input
    return forward

"""`ember.random`: the global random state, as `torch.random`.

    with ember.random.fork_rng():
        noise = ember.randn(3)      # draws here do not change what is drawn afterwards

The generator and the state functions live in `_generator.py`; this module only publishes
torch's names.
"""
from ._generator import (
    Generator,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state", "thread_safe_generator"]


def thread_safe_generator():
    """The generator random transforms should draw from: a thread worker's own generator when
    called in a DataLoader thread worker, else None (meaning the global generator), as
    `torch.random.thread_safe_generator`. ember's DataLoader workers are processes, whose
    global generator is already their own, so inside ember's workers this is None too."""
    from .utils.data import get_worker_info  # utils.data imports ember: import it late

    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng.torch_generator
    return None

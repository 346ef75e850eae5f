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
           "manual_seed", "seed", "set_rng_state"]

"""ember.backends.mps (torch.backends.mps): ember has no Apple-GPU backend."""

__all__ = ["is_available", "is_built"]


def is_available():
    """False: ember does not run on Apple's Metal GPUs."""
    return False


def is_built():
    """False: no MPS backend is part of ember."""
    return False

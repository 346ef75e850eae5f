"""ember.backends.openmp (torch.backends.openmp): ember parallelises with its own thread pool
(_parallel.py) and the BLAS's threads, not OpenMP."""
__all__ = ["is_available"]


def is_available():
    """False: no OpenMP runtime is part of ember."""
    return False

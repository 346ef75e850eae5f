"""ember.backends.mkl (torch.backends.mkl): whether the BLAS under NumPy is Intel's MKL."""
__all__ = ["is_available"]


def is_available():
    """True when NumPy was built against MKL (ember's matrix products then run on it)."""
    import numpy as np

    blas = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {})
    return "mkl" in str(blas.get("name", "")).lower()

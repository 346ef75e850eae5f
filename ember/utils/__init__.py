"""ember.utils: hooks, data loading and other helpers (torch.utils)."""
from . import hooks  # noqa: F401

"""`ember.signal` (torch.signal): signal-processing helpers; today only `windows`.

Read next: `windows.py`.
"""
from . import windows  # noqa: F401

__all__ = ["windows"]

"""ember.autograd.profiler_legacy: torch's legacy profiler, which is the autograd profiler
here.

Read next: `profiler.py`.
"""
from . import profiler as _profiler
from .profiler_util import EventList, FunctionEvent

__all__ = ["profile", "EventList", "FunctionEvent"]


class profile(_profiler.profile):
    """The legacy profiler: autograd.profiler.profile with the legacy arguments."""

    def __init__(self, enabled=True, *, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False):
        super().__init__(enabled, use_cuda=use_cuda, record_shapes=record_shapes,
                         with_flops=with_flops, profile_memory=profile_memory,
                         with_stack=with_stack, with_modules=with_modules)

"""ember.autograd.profiler_util: the profiler's event classes under torch's module path.

Read next: `profiler.py`.
"""
from ..profiler.profiler import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg"]

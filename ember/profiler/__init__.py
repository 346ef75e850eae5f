"""ember.profiler: torch.profiler's API -- `profile`, `record_function`, `schedule`.

See `profiler.py`; FLOP formulas are in `ember/utils/flop_counter.py`.
"""
from .profiler import (  # noqa: F401
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)

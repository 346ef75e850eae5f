"""ember.autograd.profiler: torch.autograd.profiler's API -- the older entry point to the same
profiler as ember.profiler (`profile(use_cuda=...)`, `record_function`, `emit_nvtx`, ...).

`profile` here takes the autograd-profiler arguments (enabled, use_cpu, use_cuda, use_device)
and records what ember.profiler.profile records; `table()`, `key_averages()`,
`function_events` and `export_chrome_trace()` work as torch's.

Read next: `profiler_util.py` (the event classes), ../profiler/profiler.py (the machinery).
"""
import enum

from ..profiler import profiler as _profiler
from ..profiler.profiler import ProfilerActivity, record_function
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg", "ProfilerActivity", "ProfilerState",
           "ProfilerConfig", "ProfilerEvent", "DeviceType", "kineto_available"]

ProfilerEvent = FunctionEvent  # the type of a recorded event


class DeviceType(enum.IntEnum):
    """c10's device types, with torch's numbers."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


class ProfilerState(enum.IntEnum):
    """What the autograd profiler records, with torch's numbers."""

    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_PRIVATEUSE1 = 9


class ProfilerConfig:
    """The settings of one profiling session (torch's record of them): state, what to record,
    the experimental config and a trace id."""

    def __init__(self, state, report_input_shapes, profile_memory, with_stack, with_flops,
                 with_modules, experimental_config, trace_id=""):
        self.state = ProfilerState(state)
        self.report_input_shapes = report_input_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.trace_id = trace_id


def kineto_available():
    """False: ember's profiler is its own (torch's Kineto library is not linked)."""
    return False


class profile(_profiler.profile):
    """Record ops, backward nodes and record_function ranges while the block runs (nothing
    when enabled=False)."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        for name, value in (("custom_trace_id_callback", custom_trace_id_callback),
                            ("activity_filters", activity_filters)):
            if value is not None:
                raise NotImplementedError(f"profile({name}=...) is not supported by ember")
        activities = {ProfilerActivity.CPU} if use_cpu else set()
        if use_cuda or (use_device is not None and "cuda" in str(use_device)):
            activities.add(ProfilerActivity.CUDA)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules,
                         experimental_config=experimental_config, acc_events=acc_events)
        self.enabled = enabled
        self.use_device = use_device

    def __enter__(self):
        return super().__enter__() if self.enabled else self

    def __exit__(self, *exc):
        return super().__exit__(*exc) if self.enabled else False

    @property
    def function_events(self):
        """Every recorded event (an EventList)."""
        return self.events()

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None,
              top_level_events_only=False):
        """key_averages() as a text table."""
        return self.key_averages().table(sort_by=sort_by, row_limit=row_limit,
                                         max_name_column_width=max_name_column_width,
                                         header=header,
                                         top_level_events_only=top_level_events_only)

    def __str__(self):
        return self.table()


class emit_nvtx:
    """torch's NVTX ranges for NVIDIA's profilers: not available in ember (no NVTX binding;
    torch without CUDA raises here too)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            raise RuntimeError("emit_nvtx: ember has no NVTX binding (NVIDIA Nsight ranges); "
                               "use ember.autograd.profiler.profile")
        return self

    def __exit__(self, *exc):
        return False


class emit_itt:
    """torch's ITT ranges for Intel VTune: not available in ember (no ITT binding)."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            raise RuntimeError("emit_itt: ember has no Intel ITT binding (VTune ranges); use "
                               "ember.autograd.profiler.profile")
        return self

    def __exit__(self, *exc):
        return False

"""NumPy's floating-point error reports: silent for ember's own kernels, as torch is silent
(`tensor(0.) * inf` is nan, `log(0)` is -inf, nan cast to an integer is whatever the cast
gives), and unchanged for the user's own NumPy code.

NumPy reports an inf or nan it makes (divide by zero, overflow, invalid value) according to its
error state, a RuntimeWarning by default. An `np.errstate` around every kernel would silence
ember's but costs about a microsecond a call; instead `install()` sets the state, once per
thread, to call `_report`, which looks at who ran the ufunc: nothing is said when that is ember
(NumPy's own Python wrappers, such as np.sum, are skipped over to find it), and anyone else
gets NumPy's RuntimeWarning (its message without the ufunc's name, which NumPy does not pass).
Only the kinds NumPy warns about by default are redirected, so underflow stays ignored.

Where the state is not ember's (another thread, or after the user's own `np.seterr`), dispatch
still keeps its promise when warnings are errors: a kernel that raised is rerun quietly.

Read next: `_tensor.py`.
"""
import os
import sys
import warnings

import numpy as np

__all__ = ["install"]

_EMBER = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep


def _report(kind, flag):
    """NumPy's error callback: silent for ember's kernels, NumPy's warning for anyone else."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(_NUMPY):
        frame, level = frame.f_back, level + 1
    if frame is not None and frame.f_code.co_filename.startswith(_EMBER):
        return
    warnings.warn(f"{kind} encountered", RuntimeWarning, stacklevel=level)


def install():
    """Route this thread's NumPy floating-point warnings through `_report`."""
    np.seterrcall(_report)
    np.seterr(**{kind: "call" for kind, mode in np.geterr().items() if mode == "warn"})

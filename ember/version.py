"""`ember.version` (torch.version): what this build of the library is.

`__version__` names the torch API ember follows, with ember's own release as the local label
(`2.13.0+ember.0.1.0`, as a CPU build of torch says `2.13.0+cpu`), so version checks in
programs written for torch take the paths of the API ember has. `ember` is ember's own release.

ember is not compiled against CUDA or ROCm: its GPU arrays are CuPy's, so `cuda` and `hip`
are None, as in a CPU build of torch, whatever CuPy is installed. Read next: torch_version.py.
"""
from .torch_version import TorchVersion

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu", "ember"]

ember = "0.1.0"
__version__ = TorchVersion(f"2.13.0+ember.{ember}")
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "Unknown"

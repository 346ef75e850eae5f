"""Layers, one file per family (torch's module paths: ember.nn.modules.linear.Linear, ...)."""
from .module import Module  # noqa: F401
from .container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                        Sequential)
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                   ConvTranspose3d)
from .linear import Bilinear, Identity, Linear  # noqa: F401

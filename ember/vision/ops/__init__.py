"""placeholder"""
from .misc import MLP, Conv2dNormActivation, Permute  # noqa: F401

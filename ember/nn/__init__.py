"""ember.nn: modules, parameters, functional forms, initialisation (torch.nn)."""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .parallel import DataParallel  # noqa: F401  (and ember.nn.parallel)
from .parameter import Buffer, Parameter  # noqa: F401

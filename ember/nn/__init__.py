"""ember.nn: modules, parameters, functional forms, initialisation (torch.nn)."""
from . import functional, init, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
from . import parallel  # noqa: F401,E402  (DistributedDataParallel builds on nn.Module)
from .parallel import DataParallel  # noqa: F401,E402

"""ember.nn: modules, parameters, functional forms, initialisation (torch.nn)."""
from . import (  # noqa: F401
    attention,  # noqa: F401  (ember.nn.attention)
    functional,
    grad,
    init,
    utils,
)
from .modules import *  # noqa: F401,F403
from .modules.module import Module  # noqa: F401
from .parallel import DataParallel  # noqa: F401  (and ember.nn.parallel)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401


def factory_kwargs(kwargs):
    """The `device`, `dtype` and `memory_format` entries of `kwargs` -- given directly or in a
    nested `factory_kwargs` dict -- as one dict to pass to factories; anything else, or an
    entry given both ways, is a TypeError (torch.nn.factory_kwargs)."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    expected = simple | {"factory_kwargs"}
    if not kwargs.keys() <= expected:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result


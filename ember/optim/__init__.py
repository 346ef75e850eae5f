"""ember.optim: optimizers, learning-rate schedules and weight averaging (torch.optim).

Read optimizer.py first (the base class and its two-method pattern), then sgd.py and adam.py;
the other optimizers follow the same pattern except lbfgs.py, which works on the flat
parameter vector. lr_scheduler.py and swa_utils.py build on the optimizer's param_groups.
"""
from . import lr_scheduler, swa_utils
from ._adafactor import Adafactor
from ._muon import Muon
from ._stateless import swap_in_optimizer_params_and_state
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Adadelta", "Adafactor", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS",
           "lr_scheduler", "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD",
           "swa_utils", "swap_in_optimizer_params_and_state"]

"""ember.optim: optimizers and learning-rate schedules (torch.optim)."""
from . import _checks as check
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401

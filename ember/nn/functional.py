"""ember.nn.functional: the functional forms of the layers (torch.nn.functional).

The implementations live beside their kernels in `ember/ops/nn/<family>.py`; this module only
gathers their public names.
"""
from .._tensor import Tensor  # noqa: F401,E402  (torch's F re-exports it)
from ..ops.nn.activation import *  # noqa: F401,F403
from ..ops.nn.attention import *  # noqa: F401,F403

# torch's own transformer layers call these private helpers as F._canonical_mask etc.
from ..ops.nn.attention import _canonical_mask, _mha_shape_check, _none_or_dtype  # noqa: F401
from ..ops.nn.conv import *  # noqa: F401,F403
from ..ops.nn.distance import *  # noqa: F401,F403
from ..ops.nn.dropout import *  # noqa: F401,F403
from ..ops.nn.embedding import *  # noqa: F401,F403
from ..ops.nn.linear import *  # noqa: F401,F403
from ..ops.nn.loss import *  # noqa: F401,F403
from ..ops.nn.norm import *  # noqa: F401,F403
from ..ops.nn.padding import *  # noqa: F401,F403
from ..ops.nn.pool import *  # noqa: F401,F403
from ..ops.nn.sampling import *  # noqa: F401,F403
from . import grad  # noqa: F401,E402  (torch.nn.functional.grad is torch.nn.grad)

"""ember.nn.utils: gradient clipping, parameter/vector conversion, weight and spectral norm,
parametrizations, BatchNorm fusion, functional_call (torch.nn.utils).

Read in this order: `clip_grad.py`, `convert_parameters.py`, `weight_norm.py`,
`spectral_norm.py`, `parametrize.py`, `parametrizations.py`, `fusion.py`, `stateless.py`.
Packed sequences for RNNs live in `rnn.py`.
"""
from . import parametrizations, parametrize, stateless  # noqa: F401
from .clip_grad import (  # noqa: F401
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .fusion import (  # noqa: F401
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

try:  # rnn.py (packed sequences) is written separately; the package works without it
    from . import rnn  # noqa: F401
except ModuleNotFoundError as error:
    if error.name != __name__ + ".rnn":
        raise

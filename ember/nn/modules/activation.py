"""Activation layers: each wraps one `F.*` function and remembers its arguments.

Only PReLU has a parameter (`weight`, one slope or one per channel, initialised to `init`);
RReLU draws random slopes in training mode and uses their mean in eval mode. The reprs are
torch's (`ReLU(inplace=True)`, `Softplus(beta=1.0, threshold=20.0)`, ...).

Read next: `normalization.py`.
"""
import warnings

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign",
           "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]

_STACKLEVEL = 4  # F.softmax's implicit-dim warning then points at the caller of the module


def _inplace_suffix(inplace, first=False):
    """torch's ", inplace=True" tail of a repr (or "inplace=True" when it comes first)."""
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class Threshold(Module):
    """y = x if x > threshold else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class _InplaceOnly(Module):
    """A parameterless activation whose only option is `inplace`."""

    _function = None  # the F function, set by each subclass
    _shows_inplace = True

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._function(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True) if self._shows_inplace else ""


class ReLU(_InplaceOnly):
    """max(x, 0)."""

    _function = staticmethod(F.relu)


class SiLU(_InplaceOnly):
    """x * sigmoid(x)."""

    _function = staticmethod(F.silu)


class Mish(_InplaceOnly):
    """x * tanh(softplus(x))."""

    _function = staticmethod(F.mish)


class SELU(_InplaceOnly):
    """scale * elu(x, alpha) with the self-normalising constants."""

    _function = staticmethod(F.selu)


class Hardsigmoid(_InplaceOnly):
    """relu6(x + 3) / 6 (torch's repr does not show `inplace`)."""

    _function = staticmethod(F.hardsigmoid)
    _shows_inplace = False


class Hardswish(_InplaceOnly):
    """x * relu6(x + 3) / 6 (torch's repr does not show `inplace`)."""

    _function = staticmethod(F.hardswish)
    _shows_inplace = False


class RReLU(Module):
    """Randomized leaky ReLU: slopes ~ U(lower, upper) per element in training, their mean in
    eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val "
                                 f"({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_suffix(self.inplace, first=True)


class Sigmoid(Module):
    """Apply `1 / (1 + exp(-x))` elementwise."""

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """Apply the hyperbolic tangent elementwise."""

    def forward(self, input):
        return input.tanh()


class LogSigmoid(Module):
    """Apply `log(sigmoid(x)) = -softplus(-x)` elementwise, computed stably."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """Apply `x / (1 + |x|)` elementwise."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """Apply `x - tanh(x)` elementwise."""

    def forward(self, input):
        return F.tanhshrink(input)


class _AlphaActivation(Module):
    """ELU and CELU: an `alpha` and an `inplace` option."""

    _function = None

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return type(self)._function(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class ELU(_AlphaActivation):
    """x for x > 0, else alpha * (exp(x) - 1)."""

    _function = staticmethod(F.elu)


class CELU(_AlphaActivation):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    _function = staticmethod(F.celu)


class LeakyReLU(Module):
    """x for x > 0, else negative_slope * x."""

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class GLU(Module):
    """a * sigmoid(b) for the two halves a, b of the input along `dim`."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x), exact ('none') or with the tanh approximation ('tanh')."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class _Shrink(Module):
    """Hardshrink and Softshrink: one threshold `lambd`, shown bare in the repr."""

    _function = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._function(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""

    _function = staticmethod(F.hardshrink)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    _function = staticmethod(F.softshrink)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above `threshold`."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """leaky_relu with learnt slopes: `num_parameters` of them (1, or the channel count),
    each initialised to `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Set every slope to `init` (0.25 by default)."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxBase(Module):
    """softmax, log_softmax or softmin along `dim` (None: torch's deprecated implicit dim)."""

    _function = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):  # modules pickled by old versions had no `dim`
            self.dim = None

    def forward(self, input):
        return type(self)._function(input, self.dim, _stacklevel=_STACKLEVEL)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along `dim`."""

    _function = staticmethod(F.softmax)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along `dim`, computed stably."""

    _function = staticmethod(F.log_softmax)


class Softmin(_SoftmaxBase):
    """softmax(-x) along `dim`."""

    _function = staticmethod(F.softmin)


class Softmax2d(Module):
    """softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=_STACKLEVEL)


# ----------------------------------------------------------------------------------------------
# multi-head attention (torch keeps it in this module: torch.nn.modules.activation)


class MultiheadAttention(Module):
    """Multi-head attention with torch's parameters: in_proj_weight (3E, E) and in_proj_bias
    (3E), or q/k/v_proj_weight when kdim / vdim differ from embed_dim; out_proj; optional
    bias_k / bias_v (1, 1, E). Inputs are (L, N, E) (or (N, L, E) with batch_first) or
    unbatched (L, E); forward returns (output, weights averaged over heads or per head, or
    None with need_weights=False). See F.multi_head_attention_forward for the masks."""

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        from .linear import NonDynamicallyQuantizableLinear

        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")

        def param(*shape):
            return Parameter(_creation.empty(shape, device=device, dtype=dtype))
        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        """xavier_uniform_ projections, zero biases, xavier_normal_ bias_k / bias_v."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for extra in (self.bias_k, self.bias_v):
            if extra is not None:
                init.xavier_normal_(extra)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """Attend from `query` to `key`/`value`; returns `(output, weights)`.

        Shapes are (L, N, E) (or (N, L, E) with batch_first, or unbatched (L, E)).
        `key_padding_mask` (N, S) marks keys to ignore (bool True, or a float added to the scores);
        `attn_mask` is (L, S) or (N * num_heads, L, S), bool (True = not allowed) or float (added).
        `weights` is None unless need_weights, else (N, L, S) averaged over heads, or (N, num_heads,
        L, S) with average_attn_weights=False. `is_causal` is a hint that `attn_mask` is the causal
        mask."""
        from ...ops.nn import attention

        batched = query.dim() == 3
        key_padding_mask = attention._canonical_mask(
            key_padding_mask, "key_padding_mask", attention._none_or_dtype(attn_mask),
            "attn_mask", query.dtype)
        attn_mask = attention._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                              check_other=False)
        if self.batch_first and batched:  # keep `query is key is value` for self-attention
            same_kv = key is value
            same_qk = query is key
            query = query.transpose(1, 0)
            key = query if same_qk else key.transpose(1, 0)
            value = key if same_kv else value.transpose(1, 0)
        separate = not self._qkv_same_embed_dim
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(merged additive mask of shape (N, heads, L, L), mask type: 1 padding, 2 both)."""
        merged, mask_type = None, None
        if key_padding_mask is not None:
            merged, mask_type = key_padding_mask, 1
        if attn_mask is not None:
            batch, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(batch, -1, seq_len, seq_len)
            else:
                merged = attn_mask.view(1, 1, seq_len, seq_len).expand(batch, self.num_heads,
                                                                        -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(batch, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type


__all__.append("MultiheadAttention")

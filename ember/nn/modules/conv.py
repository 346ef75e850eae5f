"""Conv1d/2d/3d and ConvTranspose1d/2d/3d.

Parameters, defaults, init and repr follow torch: weight (out, in/groups, *kernel) for
convolutions and (in, out/groups, *kernel) for transposed ones, initialised with
kaiming_uniform_(a=sqrt(5)), bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)). Padding modes other
than 'zeros' pad explicitly with F.pad, then convolve without padding.

Read next: `pooling.py`.
"""
import math

from ... import _creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _ConvNd(Module):
    _n = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None, output_padding=0):
        super().__init__()
        n = self._n
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._explicit_padding()
        shape = ((in_channels, out_channels // groups) if self._transposed else
                 (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(_creation.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _explicit_padding(self):
        """F.pad's argument (last dim first, both sides) for non-'zeros' padding modes."""
        if self.padding == "valid":
            return (0, 0) * self._n
        if self.padding == "same":
            pads = []
            for d, k in zip(reversed(self.dilation), reversed(self.kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            return tuple(pads)
        return tuple(p for p in reversed(self.padding) for _ in range(2))

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * self._n:
            s += ", padding={padding}"
        if self.dilation != (1,) * self._n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * self._n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        self.__dict__.setdefault("padding_mode", "zeros")


class _Conv(_ConvNd):
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._function
        if self.padding_mode != "zeros":
            mode = "constant" if self.padding_mode == "zeros" else self.padding_mode
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=mode)
            return conv(padded, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution (cross-correlation, as in every framework) of (N, C_in, L) inputs (or
    unbatched, without N) with `out_channels` learned filters of `kernel_size`; weight
    `(out_channels, in_channels / groups, *kernel_size)`, initialised like torch's.

    `padding` is an int, a tuple, "valid" (none) or "same" (output size = input size, stride 1
    only); `padding_mode` "zeros", "reflect", "replicate" or "circular" says what fills it. `groups`
    splits the channels into independent convolutions (groups = in_channels: depthwise); `dilation`
    spaces the kernel's taps."""

    _n = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution (cross-correlation, as in every framework) of (N, C_in, H, W) inputs (or
    unbatched, without N) with `out_channels` learned filters of `kernel_size`; weight
    `(out_channels, in_channels / groups, *kernel_size)`, initialised like torch's.

    `padding` is an int, a tuple, "valid" (none) or "same" (output size = input size, stride 1
    only); `padding_mode` "zeros", "reflect", "replicate" or "circular" says what fills it. `groups`
    splits the channels into independent convolutions (groups = in_channels: depthwise); `dilation`
    spaces the kernel's taps."""

    _n = 2
    _function = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution (cross-correlation, as in every framework) of (N, C_in, D, H, W) inputs (or
    unbatched, without N) with `out_channels` learned filters of `kernel_size`; weight
    `(out_channels, in_channels / groups, *kernel_size)`, initialised like torch's.

    `padding` is an int, a tuple, "valid" (none) or "same" (output size = input size, stride 1
    only); `padding_mode` "zeros", "reflect", "replicate" or "circular" says what fills it. `groups`
    splits the channels into independent convolutions (groups = in_channels: depthwise); `dilation`
    spaces the kernel's taps."""

    _n = 3
    _function = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    _transposed = True
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the result `output_size` (torch's rule)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        output_size = list(output_size)[-n:]
        spatial = input.shape[-n:]
        result = []
        for i in range(n):
            smallest = ((spatial[i] - 1) * self.stride[i] - 2 * self.padding[i] +
                        self.dilation[i] * (self.kernel_size[i] - 1) + 1)
            extra = output_size[i] - smallest
            if not 0 <= extra < max(self.stride[i], self.dilation[i]):
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {smallest} to {smallest + self.stride[i] - 1} "
                                 f"(for an input of {list(spatial)})")
            result.append(extra)
        return tuple(result)

    def forward(self, input, output_size=None):
        """Apply the transposed convolution; `output_size` (the spatial sizes, or a full shape)
        picks the output size among the valid ones, ValueError for one out of range."""
        output_padding = self._output_padding(input, output_size)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution (the gradient of Conv1d with respect to its input, often called
    deconvolution) of (N, C_in, L) inputs; weight `(in_channels, out_channels / groups,
    *kernel_size)`.

    Each output size is `(in - 1) * stride - 2 * padding + dilation * (kernel_size - 1) +
    output_padding + 1`; `forward(input, output_size)` may instead name the wanted size, among those
    the stride makes ambiguous. Only padding_mode="zeros" is accepted, as in torch."""

    _n = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution (the gradient of Conv2d with respect to its input, often called
    deconvolution) of (N, C_in, H, W) inputs; weight `(in_channels, out_channels / groups,
    *kernel_size)`.

    Each output size is `(in - 1) * stride - 2 * padding + dilation * (kernel_size - 1) +
    output_padding + 1`; `forward(input, output_size)` may instead name the wanted size, among those
    the stride makes ambiguous. Only padding_mode="zeros" is accepted, as in torch."""

    _n = 2
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution (the gradient of Conv3d with respect to its input, often called
    deconvolution) of (N, C_in, D, H, W) inputs; weight `(in_channels, out_channels / groups,
    *kernel_size)`.

    Each output size is `(in - 1) * stride - 2 * padding + dilation * (kernel_size - 1) +
    output_padding + 1`; `forward(input, output_size)` may instead name the wanted size, among those
    the stride makes ambiguous. Only padding_mode="zeros" is accepted, as in torch."""

    _n = 3
    _function = staticmethod(F.conv_transpose3d)


# ----------------------------------------------------------------------------------------------
# lazy convolutions: in_channels comes from the first input (see lazy.py)


class _LazyConvMixin(LazyModuleMixin):
    """in_channels = the input's channel dim (dim 1, or 0 for an unbatched input)."""

    def _placeholders(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Materialize weight (and bias) for input's channel count."""
        if not self.has_uninitialized_params():
            return
        self.in_channels = input.shape[0 if input.ndim == self._n + 1 else 1]
        if self.in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups)
        else:
            shape = (self.out_channels, self.in_channels // self.groups)
        with no_grad():
            self.weight.materialize(shape + self.kernel_size)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode)
        self._placeholders(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode)
        self._placeholders(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose in_channels comes from its first input."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose in_channels comes from its first input."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose in_channels comes from its first input."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose in_channels comes from its first input."""

    cls_to_become = ConvTranspose3d

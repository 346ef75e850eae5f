"""Pooling layers: MaxPool, MaxUnpool, AvgPool, AdaptiveMaxPool, AdaptiveAvgPool, LPPool,
FractionalMaxPool.

Thin wrappers over `ember.nn.functional` (implemented in `ember/ops/nn/pool.py`); attribute
names, defaults and `extra_repr` are torch's, so printed models look the same. Pooling layers
have no parameters or buffers.

Read next: `padding.py`.
"""
from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


def _ntuple(value, n):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


class _MaxPoolNd(Module):
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, "
                "dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.dilation, ceil_mode=self.ceil_mode,
                                    return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """The maximum over each `kernel_size` window sliding over (N, C, L) or (C, L) inputs (stride
    defaults to kernel_size; padding pads with -inf; dilation spaces the window's elements). With
    return_indices=True also returns each maximum's flat position in its input plane, for
    MaxUnpool1d; ceil_mode=True rounds the output size up."""

    _function = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The maximum over each `kernel_size` window sliding over (N, C, H, W) or (C, H, W) inputs
    (stride defaults to kernel_size; padding pads with -inf; dilation spaces the window's elements).
    With return_indices=True also returns each maximum's flat position in its input plane, for
    MaxUnpool2d; ceil_mode=True rounds the output size up."""

    _function = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """The maximum over each `kernel_size` window sliding over (N, C, D, H, W) or (C, D, H, W)
    inputs (stride defaults to kernel_size; padding pads with -inf; dilation spaces the window's
    elements). With return_indices=True also returns each maximum's flat position in its input
    plane, for MaxUnpool3d; ceil_mode=True rounds the output size up."""

    _function = staticmethod(F.max_pool3d)


class _MaxUnpoolNd(Module):
    _n = 2
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        """Scatter `input` to the positions in `indices` (from the max pool's return_indices);
        `output_size` picks the exact output size when the pooling's could be ambiguous (e.g. after
        ceil_mode or an odd input size)."""
        return type(self)._function(input, indices, self.kernel_size, self.stride,
                                    self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: puts each value at the position its `indices` recorded and
    zeros everywhere else, on (N, C, L) or (C, L) inputs."""

    _n = 1
    _function = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: puts each value at the position its `indices` recorded and
    zeros everywhere else, on (N, C, H, W) or (C, H, W) inputs."""

    _n = 2
    _function = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: puts each value at the position its `indices` recorded and
    zeros everywhere else, on (N, C, D, H, W) or (C, D, H, W) inputs."""

    _n = 3
    _function = staticmethod(F.max_unpool3d)


class _AvgPoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """The mean over each `kernel_size` window sliding over (N, C, L) or (C, L) inputs (stride
    defaults to kernel_size). Zero padding counts in the mean unless count_include_pad=False;
    ceil_mode=True rounds the output size up."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolWithDivisor(_AvgPoolNd):
    _function = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._function(input, self.kernel_size, self.stride, self.padding,
                                    self.ceil_mode, self.count_include_pad,
                                    self.divisor_override)


class AvgPool2d(_AvgPoolWithDivisor):
    """The mean over each `kernel_size` window sliding over (N, C, H, W) or (C, H, W) inputs (stride
    defaults to kernel_size). Zero padding counts in the mean unless count_include_pad=False;
    divisor_override replaces the window size as divisor; ceil_mode=True rounds the output size up.
    """

    _function = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolWithDivisor):
    """The mean over each `kernel_size` window sliding over (N, C, D, H, W) or (C, D, H, W) inputs
    (stride defaults to kernel_size). Zero padding counts in the mean unless
    count_include_pad=False; divisor_override replaces the window size as divisor; ceil_mode=True
    rounds the output size up."""

    _function = staticmethod(F.avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    _function = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return type(self)._function(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, L) or (C, L) inputs to a fixed `output_size` (an int): output cell i
    covers the input from `floor(i * in / out)` to `ceil((i + 1) * in / out)`. return_indices=True
    also returns the argmax positions."""

    _function = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, H, W) or (C, H, W) inputs to a fixed `output_size` (an int or a tuple;
    None entries keep the input's size): output cell i covers the input from `floor(i * in / out)`
    to `ceil((i + 1) * in / out)`. return_indices=True also returns the argmax positions."""

    _function = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) inputs to a fixed `output_size` (an int or a
    tuple; None entries keep the input's size): output cell i covers the input from `floor(i * in /
    out)` to `ceil((i + 1) * in / out)`. return_indices=True also returns the argmax positions."""

    _function = staticmethod(F.adaptive_max_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _function = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"

    def forward(self, input):
        return type(self)._function(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, L) or (C, L) inputs to a fixed `output_size` (an int): output cell
    i averages the input from `floor(i * in / out)` to `ceil((i + 1) * in / out)`."""

    _function = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, H, W) or (C, H, W) inputs to a fixed `output_size` (an int or a
    tuple; None entries keep the input's size): output cell i averages the input from `floor(i * in
    / out)` to `ceil((i + 1) * in / out)`."""

    _function = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) inputs to a fixed `output_size` (an int or
    a tuple; None entries keep the input's size): output cell i averages the input from `floor(i *
    in / out)` to `ceil((i + 1) * in / out)`."""

    _function = staticmethod(F.adaptive_avg_pool3d)


class _LPPoolNd(Module):
    _function = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input):
        return type(self)._function(input, float(self.norm_type), self.kernel_size,
                                    self.stride, self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """Power-average pooling of (N, C, L) or (C, L) inputs: `(sum x ** p) ** (1 / p)` over each
    window, p = norm_type (p = 1 is sum pooling, large p approaches max pooling)."""

    _function = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Power-average pooling of (N, C, H, W) or (C, H, W) inputs: `(sum x ** p) ** (1 / p)` over
    each window, p = norm_type (p = 1 is sum pooling, large p approaches max pooling)."""

    _function = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W) inputs: `(sum x ** p) ** (1 / p)`
    over each window, p = norm_type (p = 1 is sum pooling, large p approaches max pooling)."""

    _function = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _n = 2
    _function = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             "or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._function(input, self.kernel_size, self.output_size,
                                    self.output_ratio, self.return_indices,
                                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, H, W) inputs: windows at pseudo-random starts."""

    _n = 2
    _function = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling over (N, C, D, H, W) inputs."""

    _n = 3
    _function = staticmethod(F.fractional_max_pool3d)


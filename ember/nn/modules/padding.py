"""Padding layers: ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad (1-3d).

Each stores `padding` as torch does -- an int becomes (p, p) for 1d, four values for 2d, six
for 3d, in F.pad's order (last dim first) -- and calls `F.pad` (`ember/ops/nn/padding.py`).

Read next: `upsampling.py`.
"""
from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _pad_tuple(padding, n):
    """torch's _ntuple(2 * n): a sequence is kept as given, an int is repeated."""
    return tuple(padding) if isinstance(padding, (list, tuple)) else (padding,) * (2 * n)


class _ConstantPadNd(Module):
    _n = 1

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _pad_tuple(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last 1 dimension with the constant `value`; `padding` is an int (every side) or
    (left, right). Negative amounts crop."""

    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last 2 dimensions with the constant `value`; `padding` is an int (every side) or
    (left, right, top, bottom). Negative amounts crop."""

    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last 3 dimensions with the constant `value`; `padding` is an int (every side) or
    (left, right, top, bottom, front, back). Negative amounts crop."""

    _n = 3


class ZeroPad1d(ConstantPad1d):
    """Pad the last 1 dimension with zeros; `padding` is an int (every side) or (left, right).
    Negative amounts crop."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last 2 dimensions with zeros; `padding` is an int (every side) or (left, right, top,
    bottom). Negative amounts crop."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last 3 dimensions with zeros; `padding` is an int (every side) or (left, right, top,
    bottom, front, back). Negative amounts crop."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ModePadNd(Module):
    """Padding by one of F.pad's gather modes."""

    _n = 1
    _mode = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _pad_tuple(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Pad the last 1 dimension with the input's mirror image, the edge itself excluded (`[1, 2, 3]`
    padded by 2: `[3, 2, 1, 2, 3, 2, 1]`); `padding` is an int or (left, right), each amount smaller
    than its dimension."""

    _n, _mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    """Pad the last 2 dimensions with the input's mirror image, the edge itself excluded (`[1, 2,
    3]` padded by 2: `[3, 2, 1, 2, 3, 2, 1]`); `padding` is an int or (left, right, top, bottom),
    each amount smaller than its dimension."""

    _n, _mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    """Pad the last 3 dimensions with the input's mirror image, the edge itself excluded (`[1, 2,
    3]` padded by 2: `[3, 2, 1, 2, 3, 2, 1]`); `padding` is an int or (left, right, top, bottom,
    front, back), each amount smaller than its dimension."""

    _n, _mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    """Pad the last 1 dimension by repeating the edge values; `padding` is an int or (left, right).
    """

    _n, _mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    """Pad the last 2 dimensions by repeating the edge values; `padding` is an int or (left, right,
    top, bottom)."""

    _n, _mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    """Pad the last 3 dimensions by repeating the edge values; `padding` is an int or (left, right,
    top, bottom, front, back)."""

    _n, _mode = 3, "replicate"


class _CircularPadNd(_ModePadNd):
    _mode = "circular"

    def forward(self, input):
        # torch's circular layers name the accepted ranks themselves (ValueError)
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pad the last 1 dimension by wrapping around (the left padding comes from the right end, ...);
    `padding` is an int or (left, right)."""

    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last 2 dimensions by wrapping around (the left padding comes from the right end,
    ...); `padding` is an int or (left, right, top, bottom)."""

    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last 3 dimensions by wrapping around (the left padding comes from the right end,
    ...); `padding` is an int or (left, right, top, bottom, front, back)."""

    _n = 3

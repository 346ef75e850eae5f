"""torchvision.ops.misc: small building blocks the models share.

`Conv2dNormActivation` (conv -> norm -> activation, "same" padding by default) and `MLP`
(linear -> [norm] -> activation -> dropout, repeated) are nn.Sequential subclasses, so their
state_dict keys are the layer indices ("0.weight", "1.running_mean", ...) as in torchvision.

Read next: `boxes.py`.
"""
from ember import nn

__all__ = ["Conv2dNormActivation", "MLP", "Permute"]


class Conv2dNormActivation(nn.Sequential):
    """Conv2d, then norm_layer (BatchNorm2d; None for none), then activation_layer (ReLU;
    None for none). padding defaults to (kernel_size - 1) // 2 * dilation; the convolution
    has a bias only when there is no norm layer (unless `bias` says otherwise)."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, padding=None,
                 groups=1, norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU, dilation=1,
                 inplace=True, bias=None):
        if padding is None:
            padding = _same_padding(kernel_size, dilation)
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(**({} if inplace is None else {"inplace": inplace})))
        super().__init__(*layers)
        self.out_channels = out_channels


def _same_padding(kernel_size, dilation):
    if isinstance(kernel_size, int) and isinstance(dilation, int):
        return (kernel_size - 1) // 2 * dilation
    dims = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else len(dilation)
    kernel_size = (kernel_size,) * dims if isinstance(kernel_size, int) else kernel_size
    dilation = (dilation,) * dims if isinstance(dilation, int) else dilation
    return tuple((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))


class MLP(nn.Sequential):
    """Linear layers of widths `hidden_channels`, each but the last followed by
    [norm_layer], activation_layer and Dropout; the last by Dropout only."""

    def __init__(self, in_channels, hidden_channels, norm_layer=None, activation_layer=nn.ReLU,
                 inplace=None, bias=True, dropout=0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        width = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(width, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
            width = hidden
        layers.append(nn.Linear(width, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


class Permute(nn.Module):
    """x.permute(dims) as a module."""

    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        """The permuted tensor."""
        return x.permute(self.dims)

"""RoIAlign (He et al., Mask R-CNN): average bilinear samples of each region of interest
into a fixed (pooled_height, pooled_width) grid, differentiable with respect to the input.

For a region (batch b, x1, y1, x2, y2) scaled by spatial_scale (and shifted by -0.5 when
aligned=True), each output bin averages a grid of sampling points (sampling_ratio per side,
or ceil(region size / bins) when sampling_ratio <= 0), each point bilinear in the input:
points more than one pixel outside the image count as 0, points just outside are clamped to
the border. The sampling points and weights depend only on the boxes, so they are computed
on the host; the values are four `index_select`s of the input's pixels, weighed and summed,
so autograd scatters the gradient back to those pixels.

Read next: `focal_loss.py`.
"""
import numpy as np

import ember
from ember import nn

__all__ = ["roi_align", "RoIAlign"]


def _pair(x):
    return (x, x) if isinstance(x, int) else tuple(x)


def _rois(boxes):
    """A (K, 5) tensor of (batch index, x1, y1, x2, y2) from either accepted form."""
    if isinstance(boxes, (list, tuple)):
        for b in boxes:
            if b.shape[1] != 4:
                raise AssertionError("The shape of the tensor in the boxes list is not correct "
                                     "as List[Tensor[L, 4]]")
        ids = [ember.full_like(b[:, :1], i) for i, b in enumerate(boxes)]
        return ember.cat([ember.cat(ids, dim=0), ember.cat(list(boxes), dim=0)], dim=1)
    if isinstance(boxes, ember.Tensor):
        if boxes.shape[1] != 5:
            raise AssertionError("The boxes tensor shape is not correct as Tensor[K, 5]")
        return boxes
    raise AssertionError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def _axis_samples(T, start, size, bins, grid, extent):
    """Per region, per bin, per sample: (low index, high index, low weight, high weight) along
    one axis. `grid` samples per bin; padded sample slots beyond a region's own grid get
    weight 0. Arrays are (K, bins, G)."""
    K = start.shape[0]
    G = int(grid.max()) if K else 1
    bin_size = size / T(bins)
    b = np.arange(bins, dtype=T)[None, :, None]
    g = np.arange(G, dtype=T)[None, None, :]
    coord = start[:, None, None] + b * bin_size[:, None, None] + \
        (g + T(0.5)) * bin_size[:, None, None] / grid[:, None, None].astype(T)
    valid = (g < grid[:, None, None]) & (coord >= T(-1)) & (coord <= T(extent))
    coord = np.maximum(coord, T(0))
    low = coord.astype(np.int64)
    at_edge = low >= extent - 1
    low = np.where(at_edge, extent - 1, low)
    high = np.where(at_edge, extent - 1, low + 1)
    coord = np.where(at_edge, low.astype(T), coord)
    frac = coord - low.astype(T)
    w_high = np.where(valid, frac, T(0)).astype(T)
    w_low = np.where(valid, T(1) - frac, T(0)).astype(T)
    return low, high, w_low, w_high


def _region_geometry(rois, spatial_scale, pooled, sampling_ratio, aligned, T):
    offset = T(0.5) if aligned else T(0)
    start = rois[:, 1:3].astype(T) * T(spatial_scale) - offset  # (K, 2): x, y
    size = rois[:, 3:5].astype(T) * T(spatial_scale) - offset - start
    if not aligned:  # the legacy behaviour: regions at least one pixel wide
        size = np.maximum(size, T(1))
    bins = np.array([pooled[1], pooled[0]])
    grid = np.full(size.shape, sampling_ratio, dtype=np.int64) if sampling_ratio > 0 else \
        np.ceil(size / bins).astype(np.int64)
    return start, size, grid


def roi_align(input, boxes, output_size, spatial_scale=1.0, sampling_ratio=-1, aligned=False):
    """(K, C, output_size) features of the K regions of interest of an (N, C, H, W) input."""
    rois = _rois(boxes)
    ph, pw = _pair(output_size)
    n, c, height, width = input.shape
    if rois.shape[0] == 0:
        return input.new_zeros((0, c, ph, pw))
    T = np.float64 if input.dtype == ember.float64 else np.float32
    host = rois.detach().cpu().numpy()
    start, size, grid = _region_geometry(host, spatial_scale, (ph, pw), sampling_ratio,
                                         aligned, T)
    ys = _axis_samples(T, start[:, 1], size[:, 1], ph, grid[:, 1], height)
    xs = _axis_samples(T, start[:, 0], size[:, 0], pw, grid[:, 0], width)
    batch = host[:, 0].astype(np.int64)[:, None, None, None, None]
    count = np.maximum(grid[:, 0] * grid[:, 1], 1).astype(T)[:, None, None, None, None]
    pixels = input.permute(0, 2, 3, 1).reshape(n * height * width, c)
    out = None
    for y_index, y_weight in ((ys[0], ys[2]), (ys[1], ys[3])):
        for x_index, x_weight in ((xs[0], xs[2]), (xs[1], xs[3])):
            # (K, ph, Gy, pw, Gx) positions of this corner, flattened into `pixels`
            index = (batch * height + y_index[:, :, :, None, None]) * width + \
                x_index[:, None, None, :, :]
            weight = y_weight[:, :, :, None, None] * x_weight[:, None, None, :, :] / count
            term = _weighted(pixels, index, weight, input)
            out = term if out is None else out + term
    return out.permute(0, 3, 1, 2)


def _weighted(pixels, index, weight, like):
    """sum over the sampling points of weight * pixels[index], as (K, ph, pw, C)."""
    k, ph, gy, pw, gx = index.shape
    picked = pixels.index_select(0, ember.tensor(index.reshape(-1), device=like.device))
    w = ember.tensor(weight.reshape(-1, 1), dtype=like.dtype, device=like.device)
    return (picked * w).reshape(k, ph, gy, pw, gx, -1).sum(dim=(2, 4))


class RoIAlign(nn.Module):
    """roi_align as a module."""

    def __init__(self, output_size, spatial_scale, sampling_ratio, aligned=False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        """The pooled features of the regions."""
        return roi_align(input, rois, self.output_size, self.spatial_scale,
                         self.sampling_ratio, self.aligned)

    def __repr__(self):
        return (f"{type(self).__name__}(output_size={self.output_size}, spatial_scale="
                f"{self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
                f"aligned={self.aligned})")


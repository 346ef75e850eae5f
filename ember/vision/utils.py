"""torchvision.utils: `make_grid` (a batch of images tiled into one), `save_image` (that grid
as an image file) and `draw_bounding_boxes` (boxes and labels drawn with Pillow).

Read next: `io/image.py`.
"""
import math
import warnings

import ember

from . import _pil

__all__ = ["make_grid", "save_image", "draw_bounding_boxes"]


def _as_batch(tensor):
    """(B, 3, H, W): a list is stacked, 2-d and 3-d images get batch / channel dims, and one
    channel is repeated to three."""
    if isinstance(tensor, list):
        for t in tensor:
            if not isinstance(t, ember.Tensor):
                raise TypeError(f"tensor or list of tensors expected, got a list containing "
                                f"{type(t)}")
        tensor = ember.stack(tensor, dim=0)
    elif not isinstance(tensor, ember.Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.ndim == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.ndim == 3:
        if tensor.shape[0] == 1:
            tensor = ember.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.ndim == 4 and tensor.shape[1] == 1:
        tensor = ember.cat((tensor, tensor, tensor), 1)
    return tensor


def _normalize_(images, value_range, scale_each):
    """Clamp to value_range (or each image's / the batch's min and max) and map it to [0, 1]."""
    if value_range is not None and not isinstance(value_range, tuple):
        raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                        "are numbers")

    def norm(img):
        low, high = value_range if value_range is not None else (float(img.min()),
                                                                 float(img.max()))
        img.clamp_(min=low, max=high)
        img.sub_(low).div_(max(high - low, 1e-5))

    for img in (images if scale_each else [images]):
        norm(img)


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """Tile a (B, C, H, W) batch (or a list of images) into one (3, H', W') image: nrow images
    per row, `padding` pixels of pad_value around each; normalize=True first maps
    value_range (default: min..max) to [0, 1]."""
    with ember.no_grad():
        tensor = _as_batch(tensor)
        if normalize is True:
            tensor = tensor.clone()
            _normalize_(tensor, value_range, scale_each)
        if tensor.shape[0] == 1:
            return tensor.squeeze(0)
        count = tensor.shape[0]
        columns = min(nrow, count)
        rows = int(math.ceil(float(count) / columns))
        height, width = int(tensor.shape[2] + padding), int(tensor.shape[3] + padding)
        grid = tensor.new_full((tensor.shape[1], height * rows + padding,
                                width * columns + padding), pad_value)
        for k in range(count):
            y, x = divmod(k, columns)
            top, left = y * height + padding, x * width + padding
            grid[:, top:top + height - padding, left:left + width - padding] = tensor[k]
        return grid


def save_image(tensor, fp, format=None, **kwargs):
    """make_grid(tensor, **kwargs) written as an image file (values in [0, 1] -> 0..255,
    rounded); `format` overrides the file name's extension."""
    with ember.no_grad():
        grid = make_grid(tensor, **kwargs)
        array = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to(
            "cpu", ember.uint8).numpy()
    _pil.module().fromarray(array).save(fp, format=format)


def _generate_color_palette(num_objects):
    palette = (2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1)
    return [tuple((i * p) % 255 for p in palette) for i in range(num_objects)]


def _parse_colors(colors, *, num_objects, dtype=ember.uint8):
    """One RGB tuple per object: a palette by default, a name or tuple for all, or a list."""
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got "
                         f"{colors}.")
    else:
        colors = [colors] * num_objects
    ImageColor = _pil.module("PIL.ImageColor")
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else c for c in colors]
    if dtype.is_floating_point:
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def _check_drawable(image, boxes):
    if not isinstance(image, ember.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == ember.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.ndim != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")
    if boxes.shape[-1] != 4:
        raise NotImplementedError("draw_bounding_boxes draws (xmin, ymin, xmax, ymax) boxes "
                                  "only; oriented 8-coordinate boxes are not supported")
    if (boxes[:, 0] > boxes[:, 2]).any() or (boxes[:, 1] > boxes[:, 3]).any():
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "torchvision.ops.box_convert to convert them")


def _font(font, font_size):
    ImageFont = _pil.module("PIL.ImageFont")
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        return ImageFont.load_default()
    return ImageFont.truetype(font=font, size=font_size or 10)


def _label_colors(colors, label_colors, label_background_colors, fill_labels, n):
    text = _parse_colors(label_colors or "black", num_objects=n) \
        if label_colors or fill_labels else list(colors)
    background = _parse_colors(label_background_colors, num_objects=n) \
        if fill_labels and label_background_colors else list(colors)
    return text, background


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1,
                        font=None, font_size=None, label_colors=None,
                        label_background_colors=None, fill_labels=False):
    """Draw (xmin, ymin, xmax, ymax) boxes, optionally filled (alpha 100) and labelled, on a
    (C, H, W) uint8 or float image; returns a new image of the same dtype."""
    from .transforms.v2 import functional as F

    with ember.no_grad():
        _check_drawable(image, boxes)
        n = boxes.shape[0]
        if n == 0:
            warnings.warn("boxes doesn't contain any box. No box was drawn")
            return image
        if labels is None:
            labels = [None] * n
        elif len(labels) != n:
            raise ValueError(f"Number of boxes ({n}) and labels ({len(labels)}) mismatch. "
                             "Please specify labels for each box.")
        colors = _parse_colors(colors, num_objects=n)
        text_colors, backgrounds = _label_colors(colors, label_colors,
                                                 label_background_colors, fill_labels, n)
        txt_font = _font(font, font_size)
        if image.shape[0] == 1:
            image = ember.tile(image, (3, 1, 1))
        dtype = image.dtype
        if dtype.is_floating_point:
            image = F.to_dtype(image, dtype=ember.uint8, scale=True)
        canvas = F.to_pil_image(image)
        draw = _pil.module("PIL.ImageDraw").Draw(canvas, "RGBA" if fill else None)
        for box, color, label, text_color, background in zip(
                boxes.to(ember.int64).tolist(), colors, labels, text_colors, backgrounds):
            draw.rectangle(box, width=width, outline=color,
                           fill=color + (100,) if fill else None)
            if label is not None:
                margin = width + 1
                at = (box[0] + margin, box[1] + margin)
                if fill_labels:
                    left, top, right, bottom = draw.textbbox(at, label, font=txt_font)
                    draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=background)
                draw.text(at, label, fill=text_color, font=txt_font)
        out = F.pil_to_tensor(canvas)
        return F.to_dtype(out, dtype=dtype, scale=True) if dtype.is_floating_point else out

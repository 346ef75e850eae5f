"""Box utilities: areas, IoU (plain and generalised), format conversion, clipping, and
non-maximum suppression. Boxes are (..., 4) tensors, (x1, y1, x2, y2) unless a `fmt` says
(x, y, w, h) or (cx, cy, w, h).

`nms` is torchvision's greedy rule: visit boxes by decreasing score (ties in input order),
keep a box unless one kept before overlaps it with IoU > iou_threshold. It runs on the host:
each kept box suppresses the later ones in one vectorised step, so memory stays linear.

Read next: `roi_align.py`.
"""
import numpy as np

import ember

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "generalized_box_iou", "box_convert",
           "clip_boxes_to_image", "remove_small_boxes", "masks_to_boxes"]


def _upcast(t):
    """Float boxes stay as they are (float16 goes to float32); integers go to int64 / int32
    so that products of coordinates cannot overflow."""
    if t.is_floating_point():
        return t if t.dtype in (ember.float32, ember.float64) else t.float()
    return t if t.dtype in (ember.int32, ember.int64) else t.int()


def _check_nms_input(boxes, scores):
    if boxes.ndim != 2 or boxes.shape[-1] != 4:
        raise RuntimeError(f"boxes should be a 2d tensor of shape [N, 4], got "
                           f"{tuple(boxes.shape)}")
    if scores.ndim != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.ndim}")
    if boxes.shape[0] != scores.shape[0]:
        raise RuntimeError(f"boxes and scores should have same number of elements in "
                           f"dimension 0, got {boxes.shape[0]} and {scores.shape[0]}")


def nms(boxes, scores, iou_threshold):
    """Indices (int64, by decreasing score) of the boxes that survive non-maximum
    suppression at iou_threshold."""
    _check_nms_input(boxes, scores)
    b = boxes.detach().cpu().numpy()
    order = np.argsort(-scores.detach().cpu().numpy(), kind="stable")
    b = b[order]
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    suppressed = np.zeros(len(b), dtype=bool)
    keep = []
    for i in range(len(b)):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = slice(i + 1, None)
        w = np.maximum(np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]), 0)
        h = np.maximum(np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]), 0)
        inter = w * h
        suppressed[rest] |= inter / (areas[i] + areas[rest] - inter) > iou_threshold
    return ember.tensor(order[keep], dtype=ember.int64, device=boxes.device)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """nms within each category idxs[k] (boxes of different categories never suppress each
    other); indices by decreasing score."""
    if boxes.numel() == 0:
        return ember.empty((0,), dtype=ember.int64, device=boxes.device)
    # shift each category's boxes far apart, so one nms call keeps them independent
    offsets = idxs.to(boxes.dtype) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def remove_small_boxes(boxes, min_size):
    """Indices of the boxes whose width and height are both at least min_size."""
    keep = ((boxes[..., 2] - boxes[..., 0]) >= min_size) & \
        ((boxes[..., 3] - boxes[..., 1]) >= min_size)
    return ember.where(keep)[0]


def clip_boxes_to_image(boxes, size):
    """Clamp x to [0, width] and y to [0, height] for size = (height, width)."""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return ember.stack((x, y), dim=boxes.ndim).reshape(boxes.shape)


def _to_xyxy(boxes, fmt):
    a, b, c, d = boxes.unbind(-1)
    if fmt == "xywh":
        return ember.stack([a, b, a + c, b + d], dim=-1)
    return ember.stack((a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d), dim=-1)


def _from_xyxy(boxes, fmt):
    x1, y1, x2, y2 = boxes.unbind(-1)
    if fmt == "xywh":
        return ember.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)
    return ember.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1), dim=-1)


def box_convert(boxes, in_fmt, out_fmt):
    """Convert between 'xyxy', 'xywh' and 'cxcywh' (rotated formats are not supported)."""
    allowed = ("xyxy", "xywh", "cxcywh", "xywhr", "cxcywhr", "xyxyxyxy")
    if in_fmt not in allowed or out_fmt not in allowed:
        raise ValueError(f"Unsupported Bounding Box Conversions for given in_fmt {in_fmt} and "
                         f"out_fmt {out_fmt}")
    if in_fmt == out_fmt:
        return boxes.clone()
    if {in_fmt, out_fmt} - {"xyxy", "xywh", "cxcywh"}:
        raise NotImplementedError(f"box_convert from {in_fmt} to {out_fmt}: rotated box "
                                  "formats are not supported by ember.vision")
    if in_fmt != "xyxy":
        boxes = _to_xyxy(boxes, in_fmt)
    return boxes if out_fmt == "xyxy" else _from_xyxy(boxes, out_fmt)


def box_area(boxes, fmt="xyxy"):
    """Areas of (..., 4) boxes in the given format."""
    if fmt not in ("xyxy", "xywh", "cxcywh"):
        raise ValueError(f"Unsupported Bounding Box area for given format {fmt}")
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def _corners(boxes, fmt):
    """(top-left, bottom-right) corners of (..., 4) boxes."""
    if fmt == "xyxy":
        return boxes[..., :2], boxes[..., 2:]
    if fmt == "xywh":
        return boxes[..., :2], boxes[..., :2] + boxes[..., 2:]
    return boxes[..., :2] - boxes[..., 2:] / 2, boxes[..., :2] + boxes[..., 2:] / 2


def _box_inter_union(boxes1, boxes2, fmt="xyxy"):
    area1, area2 = box_area(boxes1, fmt=fmt), box_area(boxes2, fmt=fmt)
    (lt1, rb1), (lt2, rb2) = _corners(boxes1, fmt), _corners(boxes2, fmt)
    lt = ember.max(lt1[..., None, :], lt2[..., None, :, :])
    rb = ember.min(rb1[..., None, :], rb2[..., None, :, :])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter, area1[..., None] + area2[..., None, :] - inter


def box_iou(boxes1, boxes2, fmt="xyxy"):
    """(..., N, M) intersection over union of every pair of boxes (differentiable)."""
    if fmt not in ("xyxy", "xywh", "cxcywh"):
        if fmt in ("cxcywhr", "xywhr", "xyxyxyxy"):
            raise NotImplementedError("box_iou of rotated boxes is not supported by "
                                      "ember.vision")
        raise ValueError(f"Unsupported format '{fmt}'. Supported axis-aligned formats: "
                         "('xyxy', 'xywh', 'cxcywh'). Supported rotated formats: "
                         "('cxcywhr', 'xywhr', 'xyxyxyxy').")
    inter, union = _box_inter_union(boxes1, boxes2, fmt=fmt)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    """IoU - (area of the enclosing box not covered by the union) / enclosing area."""
    inter, union = _box_inter_union(boxes1, boxes2)
    iou = inter / union
    lt = ember.min(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rb = ember.max(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    enclosing = wh[..., 0] * wh[..., 1]
    return iou - (enclosing - union) / enclosing


def masks_to_boxes(masks):
    """(N, 4) float xyxy boxes around the nonzero pixels of (N, H, W) masks (0 for empty)."""
    if masks.numel() == 0:
        return ember.zeros((0, 4), dtype=ember.float32, device=masks.device)
    _, h, w = masks.shape
    rows = masks.bool().any(dim=2).float()
    cols = masks.bool().any(dim=1).float()
    empty = rows.sum(dim=1) == 0
    boxes = ember.stack([cols.argmax(dim=1), rows.argmax(dim=1),
                         w - 1 - cols.flip(dims=[1]).argmax(dim=1),
                         h - 1 - rows.flip(dims=[1]).argmax(dim=1)], dim=1).float()
    return ember.where(empty[:, None], 0.0, boxes)

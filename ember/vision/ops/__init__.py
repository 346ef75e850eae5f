"""torchvision.ops: box utilities and NMS, RoIAlign, the focal loss, and the small layers
the models share. torchvision implements nms and roi_align in C++; here they are NumPy and
ember ops (roi_align differentiable).

Read `boxes.py`, then `roi_align.py`.
"""
from .boxes import (
                    batched_nms,
                    box_area,
                    box_convert,
                    box_iou,
                    clip_boxes_to_image,
                    generalized_box_iou,
                    masks_to_boxes,
                    nms,
                    remove_small_boxes,
)
from .focal_loss import sigmoid_focal_loss
from .misc import MLP, Conv2dNormActivation, Permute
from .roi_align import RoIAlign, roi_align

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "generalized_box_iou", "box_convert",
           "clip_boxes_to_image", "remove_small_boxes", "masks_to_boxes", "roi_align",
           "RoIAlign", "sigmoid_focal_loss", "Conv2dNormActivation", "MLP", "Permute"]

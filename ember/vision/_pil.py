"""Pillow, imported on first use: ember.vision works on tensors without it, and PIL images,
image files and the image datasets need it (`pip install ember[vision]`).

Read next: `transforms/functional.py`, the first user of these helpers.
"""
import importlib

_EXTRA = "pip install 'ember[vision]' (or pip install pillow)"


def module(name="PIL.Image"):
    """`PIL.Image` (or another PIL submodule), or an ImportError naming the extra to install."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(f"this part of ember.vision needs Pillow: {_EXTRA}") from e


def is_pil_image(obj):
    """True for a PIL image (without importing Pillow when it was never loaded)."""
    import sys

    image = sys.modules.get("PIL.Image")
    return image is not None and isinstance(obj, image.Image)


def fromarray(array, mode=None):
    """`Image.fromarray` with an explicit mode, without Pillow's deprecation of `mode=`: an
    array of the mode's layout becomes an image of that mode."""
    Image = module()
    image = Image.fromarray(array)
    if mode is not None and image.mode != mode:
        image = Image.frombuffer(mode, (array.shape[1], array.shape[0]), array.tobytes(),
                                 "raw", mode, 0, 1)
    return image

"""ember.vision: torchvision's API on ember -- datasets, transforms, models, ops, io, utils.

    from ember.vision import datasets, transforms, models

mirrors `from torchvision import datasets, transforms, models` (ember's runner maps the
`torchvision` name here). Pillow is the one extra dependency (`pip install ember[vision]`),
imported only when PIL images or image files are used.

Read next: `transforms/functional.py`, then `models/resnet.py`, then `datasets/mnist.py`.
"""
from . import datasets, io, models, ops, transforms, utils  # noqa: F401

__version__ = "0.28.0"  # the torchvision release whose API this package follows

_image_backend = "PIL"


def set_image_backend(backend):
    """Choose the image loader of the folder datasets; only 'PIL' is available ('accimage',
    torchvision's other choice, raises)."""
    global _image_backend
    if backend not in ("PIL", "accimage"):
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    if backend == "accimage":
        raise NotImplementedError("ember.vision reads images with Pillow only; accimage is "
                                  "not supported")
    _image_backend = backend


def get_image_backend():
    """The name of the image loader ('PIL')."""
    return _image_backend

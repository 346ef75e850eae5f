"""`FakeData`: random images and labels, for trying a pipeline without a real dataset.

Item k is drawn as torchvision draws it: seed ember's generator with k + random_offset,
take `randn(*image_size)` and one `randint(0, num_classes)`, restore the generator's state,
and turn the image into a PIL image (so the usual PIL transforms apply). The same index
always gives the same item, and the global random stream is left untouched.

Read next: `ember/vision/utils.py`.
"""
import ember

from .. import transforms
from .vision import VisionDataset

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """`size` random (image, label) pairs; images (C, H, W) = image_size."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        """(PIL image, int label) through the transforms."""
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        state = ember.get_rng_state()
        ember.manual_seed(index + self.random_offset)
        img = ember.randn(*self.image_size)
        target = ember.randint(0, self.num_classes, size=(1,), dtype=ember.long)[0]
        ember.set_rng_state(state)
        img = transforms.ToPILImage()(img)
        img, target = self._transformed(img, target)
        return img, target.item()

    def __len__(self):
        return self.size

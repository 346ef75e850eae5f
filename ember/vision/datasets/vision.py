"""`VisionDataset`: the base of the image datasets -- a root folder, a `transform` for the
image and a `target_transform` for the label (or one joint `transforms`), and torchvision's
repr.

Read next: `mnist.py`.
"""
import os

from ember.utils import data

__all__ = ["VisionDataset", "StandardTransform"]


class VisionDataset(data.Dataset):
    """Base class: `root`, and either transform/target_transform or a joint transforms."""
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        self.root = os.path.expanduser(root) if isinstance(root, str) else root
        separate = transform is not None or target_transform is not None
        if transforms is not None and separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as "
                             "argument")
        self.transform = transform
        self.target_transform = target_transform
        self.transforms = StandardTransform(transform, target_transform) if separate \
            else transforms

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __repr__(self):
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body += [repr(self.transforms)]
        return "\n".join(["Dataset " + type(self).__name__] +
                         [" " * self._repr_indent + line for line in body])

    def extra_repr(self):
        """Dataset-specific lines of the repr (the split, ...)."""
        return ""

    def _transformed(self, img, target):
        """(img, target) through `transform` and `target_transform`, as they are now (a
        program may set them after construction, as torchvision's datasets allow)."""
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


def _indented_repr(transform, head):
    lines = repr(transform).splitlines()
    return [f"{head}{lines[0]}"] + [" " * len(head) + line for line in lines[1:]]


class StandardTransform:
    """(input, target) -> (transform(input), target_transform(target))."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self):
        body = [type(self).__name__]
        if self.transform is not None:
            body += _indented_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += _indented_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)

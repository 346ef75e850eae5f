"""`DatasetFolder` and `ImageFolder`: a dataset from a folder tree with one sub-folder per
class,

    root/dog/xxx.png   root/dog/xxy.jpg   root/cat/123.png   ...

classes sorted by folder name (label = position), files walked in sorted order (following
links), kept by extension or by `is_valid_file`, read by `loader` when an item is asked for.

Read next: `fakedata.py`.
"""
import os

from .. import _pil
from .vision import VisionDataset

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "default_loader", "pil_loader",
           "has_file_allowed_extension", "is_image_file", "find_classes", "make_dataset"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename, extensions):
    """Whether the (lower-cased) file name ends with one of the extensions."""
    return filename.lower().endswith(extensions if isinstance(extensions, str)
                                     else tuple(extensions))


def is_image_file(filename):
    """Whether the file name has an image extension (IMG_EXTENSIONS)."""
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    """(sorted class folder names, {name: index})."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def _validity_check(extensions, is_valid_file):
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the "
                         "same time")
    if extensions is not None:
        return lambda path: has_file_allowed_extension(path, extensions)
    return is_valid_file


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None,
                 allow_empty=False):
    """[(path, class index)] for every valid file under each class folder, sorted."""
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any "
                         "samples.")
    is_valid = _validity_check(extensions, is_valid_file)
    instances, found = [], set()
    for target_class in sorted(class_to_idx):
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, names in sorted(os.walk(target_dir, followlinks=True)):
            for name in sorted(names):
                path = os.path.join(root, name)
                if is_valid(path):
                    instances.append((path, class_to_idx[target_class]))
                    found.add(target_class)
    empty = set(class_to_idx) - found
    if empty and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            msg += "Supported extensions are: " + (
                extensions if isinstance(extensions, str) else ", ".join(extensions))
        raise FileNotFoundError(msg)
    return instances


class DatasetFolder(VisionDataset):
    """Samples (loader(path), class index) from a class-per-folder tree."""

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None, allow_empty=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx=class_to_idx, extensions=extensions,
                                    is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None,
                     allow_empty=False):
        """The (path, class index) list (override to change how files are found)."""
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions,
                            is_valid_file=is_valid_file, allow_empty=allow_empty)

    def find_classes(self, directory):
        """(classes, class_to_idx) (override for another folder structure)."""
        return find_classes(directory)

    def __getitem__(self, index):
        """(sample, target), each through its transform."""
        path, target = self.samples[index]
        sample = self.loader(path)
        return self._transformed(sample, target)

    def __len__(self):
        return len(self.samples)


def pil_loader(path):
    """The image file as an RGB PIL image."""
    with open(path, "rb") as f:
        return _pil.module().open(f).convert("RGB")


def default_loader(path):
    """The image loader of the current image backend (Pillow)."""
    return pil_loader(path)


class ImageFolder(DatasetFolder):
    """DatasetFolder of image files (IMG_EXTENSIONS) read as RGB PIL images."""

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None, allow_empty=False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples

"""SVHN (Street View House Numbers, cropped digits) from the original MATLAB files
root/{train,test,extra}_32x32.mat, read with SciPy (optional: `pip install ember[vision-mat]`).

The .mat holds "X", a uint8 array (32, 32, 3, N), and "y", labels 1..10 where 10 means the
digit 0; `data` becomes (N, 3, 32, 32) and `labels` int64 with 10 replaced by 0, as in
torchvision.

Read next: `folder.py`.
"""
import os

import numpy as np

from .. import _pil
from .utils import check_integrity, download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["SVHN"]


def _loadmat(path):
    try:
        import scipy.io
    except ImportError as e:
        raise ImportError("SVHN reads MATLAB .mat files with SciPy: pip install "
                          "'ember[vision-mat]' (or pip install scipy)") from e
    return scipy.io.loadmat(path)


class SVHN(VisionDataset):
    """SVHN's train (73,257), test (26,032) or extra (531,131) split, 32 x 32 RGB."""
    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"]}

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError(f"Dataset not found or corrupted. You can use download=True to "
                               f"download it, or put {self.url} at "
                               f"{os.path.join(self.root, self.filename)}")
        mat = _loadmat(os.path.join(self.root, self.filename))
        self.labels = mat["y"].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)  # SVHN writes the digit 0 as class 10
        self.data = np.transpose(mat["X"], (3, 2, 0, 1))

    def __getitem__(self, index):
        """(image, target): a PIL RGB image and an int, each through its transform."""
        img, target = self.data[index], int(self.labels[index])
        img = _pil.module().fromarray(np.transpose(img, (1, 2, 0)))
        return self._transformed(img, target)

    def __len__(self):
        return len(self.data)

    def _check_integrity(self):
        return check_integrity(os.path.join(self.root, self.filename), self.file_md5)

    def download(self):
        """Fetch this split's .mat file into root (MD5 checked)."""
        download_url(self.url, self.root, self.filename, self.file_md5)

    def extra_repr(self):
        """The split, for the repr."""
        return f"Split: {self.split}"

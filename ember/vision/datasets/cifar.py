"""CIFAR-10 and CIFAR-100 from the original "python version" pickles, in torchvision's
layout: root/cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta} and
root/cifar-100-python/{train, test, meta}.

Each batch is a pickled dict: "data" a uint8 array (N, 3072) -- 1024 red, 1024 green, 1024
blue values per image, row-major 32 x 32 -- and "labels" (CIFAR-10) or "fine_labels"
(CIFAR-100). `data` becomes an (N, 32, 32, 3) uint8 array and `targets` a list of ints, as in
torchvision; items are (PIL RGB image, int label) before the transforms. Every file's MD5
is checked.

Read next: `svhn.py`.
"""
import os
import pickle

import numpy as np

from .. import _pil
from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(VisionDataset):
    """The CIFAR-10 images: 50,000 training and 10,000 test, 32 x 32 RGB, 10 classes."""
    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [["data_batch_1", "c99cafc152244af753f735de768cd75f"],
                  ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
                  ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
                  ["data_batch_4", "634d18415352ddfa80567beed471001a"],
                  ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"]]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names",
            "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError(f"Dataset not found or corrupted. You can use download=True to "
                               f"download it, or unpack {self.url} into {self.root} (it holds "
                               f"the folder {self.base_folder})")
        self.data, self.targets = self._load_batches(self.train_list if train else
                                                     self.test_list)
        self._load_meta()

    def _load_batches(self, files):
        data, targets = [], []
        for name, _ in files:
            with open(os.path.join(self.root, self.base_folder, name), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
            data.append(entry["data"])
            targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        # (N, 3072) channel planes -> (N, 3, 32, 32) -> (N, 32, 32, 3), what PIL takes
        return np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1)), targets

    def _load_meta(self):
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use "
                               "download=True to download it")
        with open(path, "rb") as f:
            self.classes = pickle.load(f, encoding="latin1")[self.meta["key"]]
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}

    def __getitem__(self, index):
        """(image, target): a PIL RGB image and an int, each through its transform."""
        img, target = self.data[index], self.targets[index]
        img = _pil.module().fromarray(img)
        return self._transformed(img, target)

    def __len__(self):
        return len(self.data)

    def _check_integrity(self):
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self):
        """Fetch the archive into root (MD5 checked) and unpack it."""
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename,
                                     md5=self.tgz_md5)

    def extra_repr(self):
        """The split, for the repr."""
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: CIFAR-10's format with 100 fine classes (targets are the fine labels)."""
    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names",
            "md5": "7973b15100ade9c7d40fb424638fde48"}

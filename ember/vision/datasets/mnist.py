"""MNIST and its drop-in relatives (FashionMNIST, KMNIST, EMNIST), read from the original
IDX files in torchvision's layout:

    root/MNIST/raw/train-images-idx3-ubyte   (and .gz as downloaded)
    root/MNIST/raw/train-labels-idx1-ubyte   t10k-images-idx3-ubyte  t10k-labels-idx1-ubyte

IDX ("SN3 / PascalVincent") format: a big-endian header -- two zero bytes, a type code
(0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64), the number of
dimensions -- then one big-endian uint32 per dimension, then the data, big-endian, row-major.
`data` is a uint8 tensor (N, 28, 28), `targets` an int64 tensor; items are (PIL 'L' image,
int label) before the transforms.

Read next: `cifar.py`.
"""
import gzip
import os
import shutil
import string
import warnings

import numpy as np

import ember

from .. import _pil
from .utils import check_integrity, download_and_extract_archive, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "read_sn3_pascalvincent_tensor",
           "read_image_file", "read_label_file"]

_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype(">i2"), 12: np.dtype(">i4"),
              13: np.dtype(">f4"), 14: np.dtype(">f8")}


def _read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw  # a .gz file as well


def read_sn3_pascalvincent_tensor(path, strict=True):
    """An IDX file (plain or gzip-compressed) as a tensor of its dtype and shape."""
    raw = _read_bytes(path)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise RuntimeError(f"{path} is not an IDX file (its magic number does not start "
                           "with two zero bytes)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES or not 1 <= ndim <= 3:
        raise RuntimeError(f"{path}: unsupported IDX type code 0x{code:02x} or {ndim} dims")
    shape = [int(n) for n in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4)]
    values = np.frombuffer(raw, dtype=_IDX_TYPES[code], offset=4 * (ndim + 1))
    if strict and values.size != int(np.prod(shape)):
        raise RuntimeError(f"{path}: the header promises {shape} values, the file holds "
                           f"{values.size}")
    values = values[:int(np.prod(shape))].astype(values.dtype.newbyteorder("="))
    return ember.from_numpy(values.reshape(shape).copy())


def read_label_file(path):
    """An IDX label file: a 1-d uint8 tensor, returned as int64."""
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != ember.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.ndim}")
    return x.long()


def read_image_file(path):
    """An IDX image file: a uint8 tensor (N, H, W)."""
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != ember.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndim != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.ndim}")
    return x


class MNIST(VisionDataset):
    """The MNIST digits: 60,000 training and 10,000 test images, 28 x 28 grey."""
    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if self._check_legacy_exist():
            self.data, self.targets = self._load_legacy_data()
            return
        if download:
            self.download()
        self._extract_local_archives()
        if not self._check_exists():
            raise RuntimeError(f"Dataset not found. You can use download=True to download it, "
                               f"or put {self._expected_files()} in {self.raw_folder} "
                               f"(from {self._source_urls()})")
        self.data, self.targets = self._load_data()

    @property
    def train_labels(self):
        """Deprecated name of `targets`."""
        warnings.warn("train_labels has been renamed targets")
        return self.targets

    @property
    def test_labels(self):
        """Deprecated name of `targets`."""
        warnings.warn("test_labels has been renamed targets")
        return self.targets

    @property
    def train_data(self):
        """Deprecated name of `data`."""
        warnings.warn("train_data has been renamed data")
        return self.data

    @property
    def test_data(self):
        """Deprecated name of `data`."""
        warnings.warn("test_data has been renamed data")
        return self.data

    def _check_legacy_exist(self):
        if not os.path.exists(self.processed_folder):
            return False
        return all(check_integrity(os.path.join(self.processed_folder, f))
                   for f in (self.training_file, self.test_file))

    def _load_legacy_data(self):
        # torchvision < 0.8 saved (data, targets) with torch.save in processed/
        data_file = self.training_file if self.train else self.test_file
        return ember.load(os.path.join(self.processed_folder, data_file), weights_only=True)

    def _load_data(self):
        prefix = "train" if self.train else "t10k"
        data = read_image_file(os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"))
        targets = read_label_file(os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))
        return data, targets

    def __getitem__(self, index):
        """(image, target): a PIL 'L' image and an int, each through its transform."""
        img, target = self.data[index], int(self.targets[index])
        img = _pil.fromarray(img.numpy(), "L")
        return self._transformed(img, target)

    def __len__(self):
        return len(self.data)

    @property
    def raw_folder(self):
        """root/<ClassName>/raw, where the IDX files live."""
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def processed_folder(self):
        """root/<ClassName>/processed (torchvision's old .pt format)."""
        return os.path.join(self.root, type(self).__name__, "processed")

    @property
    def class_to_idx(self):
        """{class name: label}."""
        return {name: i for i, name in enumerate(self.classes)}

    def _expected_files(self):
        return ", ".join(name for name, _ in self.resources)

    def _source_urls(self):
        return ", ".join(self.mirrors[0] + name for name, _ in self.resources)

    def _check_exists(self):
        return all(check_integrity(os.path.join(self.raw_folder, os.path.splitext(name)[0]))
                   for name, _ in self.resources)

    def _extract_local_archives(self):
        """Archives already in raw/ (put there by hand, md5 correct) are unpacked, so a
        dataset fetched elsewhere loads without download=True."""
        for name, md5 in self.resources:
            archive = os.path.join(self.raw_folder, name)
            plain = os.path.splitext(archive)[0]
            if not os.path.exists(plain) and check_integrity(archive, md5):
                extract_archive(archive, self.raw_folder)

    def download(self):
        """Fetch the archives into raw_folder (each from the first mirror that answers),
        checking their MD5, and unpack them."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}", self.raw_folder,
                                                 filename=filename, md5=md5)
                    break
                except RuntimeError as e:
                    errors.append(f"Tried {mirror}, got:\n{e}\n")
            else:
                raise RuntimeError(f"Error downloading {filename}:\n" + "".join(errors))

    def extra_repr(self):
        """The split, for the repr."""
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 10 kinds of clothing, MNIST's format and sizes."""
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: 10 cursive Japanese characters, MNIST's format and sizes."""
    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """Extended MNIST (handwritten letters and digits) in one of six splits; raw files are
    raw/emnist-<split>-<train|test>-<images|labels>-idx?-ubyte, from NIST's gzip.zip."""
    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    # letters whose upper and lower case look alike are one class in bymerge / balanced
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y",
                       "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.training_file = f"training_{split}.pt"
        self.test_file = f"test_{split}.pt"
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    @property
    def _file_prefix(self):
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self):
        """Path of this split's IDX image file."""
        return os.path.join(self.raw_folder, f"{self._file_prefix}-images-idx3-ubyte")

    @property
    def labels_file(self):
        """Path of this split's IDX label file."""
        return os.path.join(self.raw_folder, f"{self._file_prefix}-labels-idx1-ubyte")

    def _load_data(self):
        return read_image_file(self.images_file), read_label_file(self.labels_file)

    def _check_exists(self):
        return all(check_integrity(f) for f in (self.images_file, self.labels_file))

    def _expected_files(self):
        return f"{os.path.basename(self.images_file)} and {os.path.basename(self.labels_file)}"

    def _source_urls(self):
        return f"the gzip/ folder of {self.url}"

    def _extract_local_archives(self):
        for plain in (self.images_file, self.labels_file):
            if not os.path.exists(plain) and os.path.exists(plain + ".gz"):
                extract_archive(plain + ".gz", self.raw_folder)

    def download(self):
        """Fetch NIST's gzip.zip, unpack it and its .gz members into raw_folder."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        download_and_extract_archive(self.url, download_root=self.raw_folder, md5=self.md5)
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in os.listdir(gzip_folder):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)
        shutil.rmtree(gzip_folder)

"""torchvision.datasets: the classic image datasets in their original file formats and
torchvision's folder layouts, plus folder-of-images and fake datasets.

Read `utils.py` (download and extraction) and `vision.py` first, then `mnist.py`.
"""
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import EMNIST, KMNIST, MNIST, FashionMNIST
from .svhn import SVHN
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "CIFAR10", "CIFAR100", "SVHN",
           "ImageFolder", "DatasetFolder", "FakeData", "VisionDataset"]

"""ember.vision.datasets against torchvision 0.28 on small files written here in the
original formats (IDX, CIFAR pickles, SVHN .mat, image folders): the same data, targets,
classes, items and reprs; archives found locally are checked and extracted without a
network; missing files and failed downloads name the URL and the folder. No network use."""
import gzip
import hashlib
import os
import pickle
import tarfile

import numpy as np
import pytest

import ember
from ember.vision import datasets as ed
from ember.vision import transforms as et

from ._torchvision import import_torchvision

torchvision = import_torchvision()
torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
td = torchvision.datasets
tt = torchvision.transforms

rng = np.random.default_rng(5)


def write_idx(path, array, compress=False):
    codes = {np.uint8: 8, np.int8: 9, np.int16: 11, np.int32: 12, np.float32: 13,
             np.float64: 14}
    header = bytes([0, 0, codes[array.dtype.type], array.ndim])
    header += np.asarray(array.shape, dtype=">u4").tobytes()
    payload = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if compress else open)(path, "wb") as f:
        f.write(payload)


def same_items(e_set, t_set, indices):
    assert len(e_set) == len(t_set)
    for k in indices:
        (e_img, e_target), (t_img, t_target) = e_set[k], t_set[k]
        assert e_target == t_target and type(e_target) is type(t_target)
        if isinstance(t_img, torch.Tensor):
            np.testing.assert_array_equal(e_img.numpy(), t_img.numpy())
        else:
            assert e_img.mode == t_img.mode and e_img.size == t_img.size
            np.testing.assert_array_equal(np.asarray(e_img), np.asarray(t_img))


def mnist_files(root, folder, n_train=7, n_test=4, compress=False):
    raw = os.path.join(root, folder, "raw")
    os.makedirs(raw, exist_ok=True)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        suffix = ".gz" if compress else ""
        write_idx(os.path.join(raw, f"{prefix}-images-idx3-ubyte{suffix}"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), compress)
        write_idx(os.path.join(raw, f"{prefix}-labels-idx1-ubyte{suffix}"),
                  rng.integers(0, 10, n, dtype=np.uint8), compress)


@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "KMNIST"])
@pytest.mark.parametrize("train", [True, False])
def test_mnist_family_reads_idx_files_like_torchvision(tmp_path, name, train):
    mnist_files(tmp_path, name)
    e_set = getattr(ed, name)(str(tmp_path), train=train, transform=et.ToTensor())
    t_set = getattr(td, name)(str(tmp_path), train=train, transform=tt.ToTensor())
    np.testing.assert_array_equal(e_set.data.numpy(), t_set.data.numpy())
    np.testing.assert_array_equal(e_set.targets.numpy(), t_set.targets.numpy())
    assert e_set.data.dtype == ember.uint8 and e_set.targets.dtype == ember.int64
    assert e_set.classes == t_set.classes and e_set.class_to_idx == t_set.class_to_idx
    same_items(e_set, t_set, range(len(t_set)))
    assert repr(e_set) == repr(t_set)
    plain = getattr(ed, name)(str(tmp_path), train=train)
    same_items(plain, getattr(td, name)(str(tmp_path), train=train), [0])


def test_idx_reader_handles_every_type_code_and_gzip(tmp_path):
    for dtype in (np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64):
        array = rng.integers(-100, 100, (3, 4, 5)).astype(dtype)
        for compress in (False, True):
            path = str(tmp_path / f"a-{np.dtype(dtype).name}-{compress}")
            write_idx(path, array, compress)
            got = ed.mnist.read_sn3_pascalvincent_tensor(path)
            np.testing.assert_array_equal(got.numpy(), array)
            if not compress:
                expected = td.mnist.read_sn3_pascalvincent_tensor(path)
                assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
                np.testing.assert_array_equal(got.numpy(), expected.numpy())
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x01\x05")
    with pytest.raises(RuntimeError, match="IDX"):
        ed.mnist.read_sn3_pascalvincent_tensor(str(tmp_path / "bad"))


def test_mnist_archives_put_in_raw_by_hand_are_verified_and_extracted(tmp_path):
    mnist_files(tmp_path, "Tiny", compress=True)
    raw = tmp_path / "Tiny" / "raw"

    def md5(name):
        return hashlib.md5((raw / name).read_bytes()).hexdigest()

    class Tiny(ed.MNIST):
        resources = [(n, md5(n)) for n in ("train-images-idx3-ubyte.gz",
                                           "train-labels-idx1-ubyte.gz",
                                           "t10k-images-idx3-ubyte.gz",
                                           "t10k-labels-idx1-ubyte.gz")]
    data = Tiny(str(tmp_path), train=False)
    assert len(data) == 4 and (raw / "t10k-images-idx3-ubyte").exists()
    again = Tiny(str(tmp_path), download=True)  # present and complete: no network needed
    assert len(again) == 7


def test_missing_mnist_names_the_files_urls_and_folder(tmp_path):
    with pytest.raises(RuntimeError) as info:
        ed.MNIST(str(tmp_path))
    message = str(info.value)
    assert "download=True" in message and os.path.join(str(tmp_path), "MNIST", "raw") in message
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz" in message


def test_failed_download_names_the_url_and_the_target_file(tmp_path, monkeypatch):
    import urllib.request

    def offline(*args, **kwargs):
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(RuntimeError) as info:
        ed.MNIST(str(tmp_path), download=True)
    message = str(info.value)
    assert "train-images-idx3-ubyte.gz" in message and "ossci-datasets" in message
    assert os.path.join(str(tmp_path), "MNIST", "raw", "train-images-idx3-ubyte.gz") in message
    assert not [f for f in os.listdir(tmp_path / "MNIST" / "raw")]  # nothing half-written


def test_emnist_split(tmp_path):
    raw = tmp_path / "EMNIST" / "raw"
    raw.mkdir(parents=True)
    for part, n in (("train", 6), ("test", 3)):
        write_idx(str(raw / f"emnist-letters-{part}-images-idx3-ubyte"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(str(raw / f"emnist-letters-{part}-labels-idx1-ubyte"),
                  rng.integers(1, 27, n, dtype=np.uint8))
    for train in (True, False):
        e_set = ed.EMNIST(str(tmp_path), split="letters", train=train)
        t_set = td.EMNIST(str(tmp_path), split="letters", train=train)
        same_items(e_set, t_set, range(len(t_set)))
        assert e_set.classes == t_set.classes
    for split in ed.EMNIST.splits:
        assert ed.EMNIST.classes_split_dict[split] == td.EMNIST.classes_split_dict[split]
    with pytest.raises(ValueError, match="split"):
        ed.EMNIST(str(tmp_path), split="bogus")


def cifar_files(root, folder, batches, label_key, meta_name, meta_key, n_classes):
    base = os.path.join(root, folder)
    os.makedirs(base, exist_ok=True)
    for name in batches:
        n = 5
        entry = {"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 label_key: rng.integers(0, n_classes, n).tolist(),
                 "batch_label": name}
        with open(os.path.join(base, name), "wb") as f:
            pickle.dump(entry, f)
    with open(os.path.join(base, meta_name), "wb") as f:
        pickle.dump({meta_key: [f"class{k}" for k in range(n_classes)]}, f)

    def md5(name):
        with open(os.path.join(base, name), "rb") as f:
            return hashlib.md5(f.read()).hexdigest()
    return md5


def small_cifar(module, kind, md5):
    """The library's CIFAR class with the checksums of the files written here."""
    base = getattr(module, kind)
    if kind == "CIFAR10":
        files = [f"data_batch_{k}" for k in range(1, 6)]
        train, test = [[f, md5(f)] for f in files], [["test_batch", md5("test_batch")]]
        meta = {"filename": "batches.meta", "key": "label_names", "md5": md5("batches.meta")}
    else:
        train, test = [["train", md5("train")]], [["test", md5("test")]]
        meta = {"filename": "meta", "key": "fine_label_names", "md5": md5("meta")}
    return type(kind, (base,), {"train_list": train, "test_list": test, "meta": meta})


@pytest.mark.parametrize("kind", ["CIFAR10", "CIFAR100"])
def test_cifar_reads_the_pickles_like_torchvision(tmp_path, kind):
    if kind == "CIFAR10":
        md5 = cifar_files(tmp_path, "cifar-10-batches-py",
                          [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"], "labels",
                          "batches.meta", "label_names", 10)
    else:
        md5 = cifar_files(tmp_path, "cifar-100-python", ["train", "test"], "fine_labels",
                          "meta", "fine_label_names", 100)
    for train in (True, False):
        e_set = small_cifar(ed, kind, md5)(str(tmp_path), train=train)
        t_set = small_cifar(td, kind, md5)(str(tmp_path), train=train)
        np.testing.assert_array_equal(e_set.data, t_set.data)
        assert e_set.data.shape == t_set.data.shape and e_set.targets == t_set.targets
        assert e_set.classes == t_set.classes and e_set.class_to_idx == t_set.class_to_idx
        same_items(e_set, t_set, range(len(t_set)))
        assert repr(e_set) == repr(t_set)


def test_cifar_archive_in_root_is_verified_and_extracted(tmp_path):
    source = tmp_path / "source"
    md5 = cifar_files(source, "cifar-10-batches-py",
                      [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"], "labels",
                      "batches.meta", "label_names", 10)
    root = tmp_path / "root"
    root.mkdir()
    archive = root / "cifar-10-python.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    cls = small_cifar(ed, "CIFAR10", md5)
    cls.tgz_md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    data = cls(str(root), train=False, download=True)
    assert len(data) == 5 and (root / "cifar-10-batches-py" / "test_batch").exists()
    cls.tgz_md5 = "0" * 32  # a corrupted download is refused, and the network is not there
    (root / "cifar-10-batches-py" / "test_batch").unlink()
    with pytest.raises(RuntimeError):
        cls(str(root), download=False)


def test_svhn_reads_the_mat_file_like_torchvision(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    n = 6
    labels = np.array([[1], [10], [3], [10], [7], [2]], dtype=np.uint8)
    scipy_io.savemat(str(tmp_path / "test_32x32.mat"),
                     {"X": rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8), "y": labels})
    md5 = hashlib.md5((tmp_path / "test_32x32.mat").read_bytes()).hexdigest()

    def small(module):
        splits = dict(module.SVHN.split_list)
        splits["test"] = [splits["test"][0], "test_32x32.mat", md5]
        return type("SVHN", (module.SVHN,), {"split_list": splits})

    e_set = small(ed)(str(tmp_path), split="test", transform=et.PILToTensor())
    t_set = small(td)(str(tmp_path), split="test", transform=tt.PILToTensor())
    np.testing.assert_array_equal(e_set.data, t_set.data)
    np.testing.assert_array_equal(e_set.labels, t_set.labels)
    assert e_set.labels.dtype == np.int64 and 0 in e_set.labels and 10 not in e_set.labels
    same_items(e_set, t_set, range(n))
    assert repr(e_set) == repr(t_set)
    with pytest.raises(RuntimeError, match="train_32x32.mat"):
        ed.SVHN(str(tmp_path), split="train")


def test_svhn_without_scipy_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name.startswith("scipy"):
            raise ImportError("No module named 'scipy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    with pytest.raises(ImportError, match="vision-mat"):
        ed.svhn._loadmat(str(tmp_path / "x.mat"))


def image_tree(root):
    sizes = {"cat": 3, "dog": 2, "eel": 1}
    for name, count in sizes.items():
        os.makedirs(os.path.join(root, name, "nested"), exist_ok=True)
        for k in range(count):
            array = rng.integers(0, 256, (6 + k, 5, 3), dtype=np.uint8)
            Image.fromarray(array).save(os.path.join(root, name, f"{k}.png"))
        Image.fromarray(rng.integers(0, 256, (4, 4), dtype=np.uint8)).save(
            os.path.join(root, name, "nested", "g.bmp"))
        with open(os.path.join(root, name, "notes.txt"), "w") as f:
            f.write("not an image")


def test_image_folder_matches_torchvision(tmp_path):
    image_tree(tmp_path)
    e_set = ed.ImageFolder(str(tmp_path), transform=et.Compose([et.Resize(4), et.ToTensor()]))
    t_set = td.ImageFolder(str(tmp_path), transform=tt.Compose([tt.Resize(4), tt.ToTensor()]))
    assert e_set.classes == t_set.classes and e_set.class_to_idx == t_set.class_to_idx
    assert e_set.samples == t_set.samples and e_set.targets == t_set.targets
    assert e_set.imgs == t_set.imgs
    same_items(e_set, t_set, range(len(t_set)))
    assert repr(e_set) == repr(t_set)


def test_dataset_folder_with_a_custom_loader_and_filter(tmp_path):
    image_tree(tmp_path)

    def keep(path):
        return path.endswith(".txt")

    e_set = ed.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), is_valid_file=keep)
    t_set = td.DatasetFolder(str(tmp_path), loader=lambda p: open(p).read(), is_valid_file=keep)
    assert e_set.samples == t_set.samples and e_set[1] == t_set[1]
    for bad in (lambda m: m.DatasetFolder(str(tmp_path), loader=open),
                lambda m: m.DatasetFolder(str(tmp_path), loader=open, extensions=(".jpg",)),
                lambda m: m.ImageFolder(str(tmp_path / "cat" / "nested"))):
        with pytest.raises(Exception) as t_info:
            bad(td)
        with pytest.raises(type(t_info.value)):
            bad(ed)
    assert len(ed.DatasetFolder(str(tmp_path), loader=open, extensions=(".jpg",),
                                allow_empty=True)) == 0


def test_fake_data_is_deterministic_per_index_and_leaves_the_stream_alone():
    data = ed.FakeData(size=5, image_size=(3, 6, 7), num_classes=4, transform=et.ToTensor())
    ember.manual_seed(123)
    before = ember.rand(3)
    ember.manual_seed(123)
    first = data[2]
    again = data[2]
    np.testing.assert_array_equal(first[0].numpy(), again[0].numpy())
    assert first[1] == again[1] and isinstance(first[1], int) and 0 <= first[1] < 4
    np.testing.assert_array_equal(ember.rand(3).numpy(), before.numpy())
    assert tuple(first[0].shape) == (3, 6, 7) and len(data) == 5
    with pytest.raises(IndexError):
        data[5]
    assert repr(data) == repr(td.FakeData(size=5, image_size=(3, 6, 7), num_classes=4,
                                          transform=tt.ToTensor()))
    offset = ed.FakeData(size=5, image_size=(3, 6, 7), random_offset=1, transform=et.ToTensor())
    np.testing.assert_array_equal(offset[1][0].numpy(), data[2][0].numpy())


def test_datasets_work_with_the_dataloader(tmp_path):
    mnist_files(tmp_path, "MNIST")
    data = ed.MNIST(str(tmp_path), transform=et.Compose([et.ToTensor(),
                                                          et.Normalize((0.1307,), (0.3081,))]))
    images, labels = next(iter(ember.utils.data.DataLoader(data, batch_size=4)))
    assert tuple(images.shape) == (4, 1, 28, 28) and labels.dtype == ember.int64
    np.testing.assert_array_equal(labels.numpy(), data.targets[:4].numpy())

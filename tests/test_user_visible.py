"""What a user sees, against torch: printing parameters, comparing devices with strings, the
error of a save into a missing folder, tensors from any sequence, ranges as indices."""
import array
import collections
import collections.abc
import os

import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")


def test_parameters_print_as_torchs():
    for requires_grad in (True, False):
        e = ember.nn.Parameter(ember.ones(2, 3, dtype=ember.float64), requires_grad)
        t = torch.nn.Parameter(torch.ones(2, 3, dtype=torch.float64), requires_grad)
        for show in (repr, str, "{}".format, lambda p: repr([p])):
            assert show(e).replace("ember", "torch") == show(t)


def test_devices_never_equal_strings():
    def fn(m):
        d = m.device("cpu")
        return (d == "cpu", "cpu" == d, d != "cpu", d == m.device("cpu"), {d: 1}.get("cpu"),
                m.ones(1).device == m.device("cpu"))

    check(fn, [], grad=False)


@pytest.mark.parametrize("zipfile", [True, False])
def test_save_into_a_missing_folder_names_the_users_path(tmp_path, zipfile):
    path = str(tmp_path / "missing" / "model.pt")

    def save(m):
        m.save({"w": m.ones(2)}, path, _use_new_zipfile_serialization=zipfile)

    error = check_raises(save)
    assert path in str(error) or os.path.dirname(path) in str(error)
    assert ".tmp" not in str(error)
    assert not (tmp_path / "missing").exists()


class _Sequence(collections.abc.Sequence):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


SEQUENCES = {
    "deque": lambda m: collections.deque([1, 2, 3]),
    "nested deques": lambda m: [collections.deque([1.5, 2]), collections.deque([3, 4])],
    "array.array": lambda m: array.array("f", [1.0, 2.5]),
    "a Sequence": lambda m: _Sequence([1.0, 2.0]),
    "memoryview": lambda m: memoryview(b"\x01\x02"),
    "bytearray": lambda m: bytearray(b"ab"),
    "tuple of 0-d tensors": lambda m: (m.tensor(1.0), m.tensor(2.5)),
    "nested 0-d tensors": lambda m: [[m.tensor(1), m.tensor(2)], [m.tensor(3), m.tensor(4)]],
    "numbers and tensors": lambda m: [m.tensor(1.5), 2, m.tensor([3.0])],
    "numpy scalars": lambda m: [np.float32(1.5), np.int64(2), np.bool_(True)],
    "range": lambda m: range(2, 8, 2),
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_tensor_takes_any_sequence(name):
    check(lambda m: (m.tensor(SEQUENCES[name](m)), m.as_tensor(SEQUENCES[name](m))), [],
          grad=False)


@pytest.mark.parametrize("data", [lambda m: b"ab", lambda m: {1, 2}, lambda m: {0: 1},
                                  lambda m: (i for i in range(2)), lambda m: "ab",
                                  lambda m: [m.tensor([1.0, 2.0])]])
def test_tensor_refuses_what_torch_refuses(data):
    check_raises(lambda m: m.tensor(data(m)))


def test_ranges_and_other_sequences_index():
    def fn(m, x):
        y = m.tensor([3, 1, 0])
        x = x.clone()
        picked = (x[range(3), y], x[range(2)], x[range(0, 3, 2), 1:],
                  x[collections.deque([2, 0])])
        x[range(2)] = 0
        return picked + (x,)

    check(fn, [np.arange(12, dtype=np.float32).reshape(3, 4)])

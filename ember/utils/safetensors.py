"""safetensors files (the `safetensors` package's format), read and written without it.

A safetensors file is

    8 bytes       N, the header length (unsigned little-endian)
    N bytes       a JSON object: {"name": {"dtype": "F32", "shape": [2, 3],
                  "data_offsets": [begin, end]}, ..., "__metadata__": {"key": "text"}},
                  padded with spaces so that the data starts on an 8-byte boundary
    the data      each tensor's bytes, C order, little-endian; offsets count from here

Unlike a pickle, nothing in it can run code, and a reader can find any tensor from the header
alone. Tensors are written largest element size first (then by name), as the `safetensors`
package does, so each one starts aligned to its element size. The API follows
`safetensors.torch`: save_file / load_file / save / load.

Read next: `checkpoint/`, whose `info` command lists a file's tensors from this header.
"""
import json
import os
import struct

import numpy as np

from .. import _backend
from .. import _dtype as dt
from .._device import CPU, as_device
from .._tensor import Tensor

__all__ = ["save_file", "load_file", "save", "load", "SafetensorError"]

_CODES = {dt.float64: "F64", dt.float32: "F32", dt.float16: "F16", dt.bfloat16: "BF16",
          dt.int64: "I64", dt.int32: "I32", dt.int16: "I16", dt.int8: "I8", dt.uint8: "U8",
          dt.bool: "BOOL"}
_DTYPES = {code: d for d, code in _CODES.items()}
# codes of the format that ember has no dtype for
_FOREIGN = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2",
            "F4", "C64", "C128"}
_MAX_HEADER = 100_000_000  # the safetensors package's own bound: refuse absurd headers


class SafetensorError(RuntimeError):
    """A file (or bytes) that is not valid safetensors."""


# ----------------------------------------------------------------------------------------------
# writing


def _check(tensors, metadata):
    if not isinstance(tensors, dict):
        raise TypeError(f"tensors must be a dict of name -> Tensor, not "
                        f"{type(tensors).__name__}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {name!r}")
        if name == "__metadata__":
            raise ValueError("'__metadata__' is reserved and cannot name a tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"{name!r} is a {type(t).__name__}, not a Tensor")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise TypeError("metadata must be a dict of str -> str")


def _layout(tensors, metadata):
    """(header bytes, list of host arrays in file order)."""
    _check(tensors, metadata)
    order = sorted(tensors, key=lambda name: (-tensors[name].itemsize, name))
    header, arrays, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = dict(metadata)
    for name in order:
        t = tensors[name]
        array = np.asarray(_backend.transfer(t._data, CPU), order="C")
        header[name] = {"dtype": _CODES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        arrays.append(array)
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, arrays


def save(tensors, metadata=None):
    """The safetensors bytes for a dict of tensors (non-contiguous ones are laid out in C
    order; tensors sharing memory are each written in full)."""
    header, arrays = _layout(tensors, metadata)
    return header + b"".join(a.reshape(-1).view(np.uint8).tobytes() for a in arrays)


def save_file(tensors, filename, metadata=None):
    """Write a dict of tensors to `filename` (replacing it atomically)."""
    from ..serialization import _atomic_open

    header, arrays = _layout(tensors, metadata)
    with _atomic_open(filename) as f:
        f.write(header)
        for array in arrays:
            f.write(array.reshape(-1).view(np.uint8))


# ----------------------------------------------------------------------------------------------
# reading


def read_header(f, size, name="<bytes>"):
    """Parse the header of a file-like object holding `size` bytes of safetensors.

    Returns (entries, metadata, data_start): entries is a list of (name, dtype code, shape,
    begin, end) with offsets from data_start, in the header's order."""
    if size < 8:
        raise SafetensorError(f"{name}: {size} bytes is too short for a safetensors header")
    length = struct.unpack("<Q", f.read(8))[0]
    if length > min(size - 8, _MAX_HEADER):
        raise SafetensorError(f"{name}: the header claims {length} bytes, but the file holds "
                              f"{size - 8} after the length (truncated or not safetensors?)")
    try:
        header = json.loads(f.read(length).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SafetensorError(f"{name}: the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorError(f"{name}: the header is not a JSON object")
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict):
        raise SafetensorError(f"{name}: __metadata__ is not an object")
    data_size = size - 8 - length
    entries = [_entry(name, key, info, data_size) for key, info in header.items()]
    return entries, metadata, 8 + length


def _entry(filename, key, info, data_size):
    try:
        code, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        shape = [int(n) for n in shape]
        begin, end = int(begin), int(end)
    except (TypeError, KeyError, ValueError):
        raise SafetensorError(f"{filename}: bad header entry for {key!r}: {info!r}") from None
    if code not in _DTYPES and code not in _FOREIGN:
        raise SafetensorError(f"{filename}: {key!r} has unknown dtype {code!r}")
    numel = int(np.prod(shape)) if shape else 1
    itemsize = _DTYPES[code].itemsize if code in _DTYPES else None
    if any(n < 0 for n in shape) or not 0 <= begin <= end <= data_size or (
            itemsize is not None and end - begin != numel * itemsize):
        raise SafetensorError(f"{filename}: {key!r} (shape {shape}, {code}) does not match "
                              f"its data offsets [{begin}, {end}] in {data_size} bytes of data")
    return key, code, tuple(shape), begin, end


def _dtype_of(key, code):
    if code in _FOREIGN:
        raise NotImplementedError(f"tensor {key!r} has dtype {code}, which ember does not "
                                  "support")
    return _DTYPES[code]


def _tensor(key, code, shape, raw, device):
    """A tensor owning its memory (so saving it later never drags a neighbour along)."""
    array = raw.view(_dtype_of(key, code).np).reshape(shape)
    if device.type != "cpu":
        return Tensor._make(_backend.transfer(array, device), device=device)
    return Tensor._make(array)


def load(data):
    """The tensors stored in safetensors `data` (bytes), by name."""
    import io

    data = bytes(data)
    entries, _, start = read_header(io.BytesIO(data), len(data))
    out = {}
    for key, code, shape, begin, end in entries:
        raw = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=start + begin)
        out[key] = _tensor(key, code, shape, raw.copy(), CPU)
    return out


def load_file(filename, device="cpu"):
    """The tensors in a safetensors file, by name, on `device`."""
    from ..serialization import _read_exactly

    device = as_device(device)
    with open(filename, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        entries, _, start = read_header(f, size, os.fspath(filename))
        out = {}
        for key, code, shape, begin, end in entries:
            _dtype_of(key, code)
            raw = _read_exactly(f, start + begin, end - begin, f"tensor {key!r}")
            out[key] = _tensor(key, code, shape, raw, device)
    return out


def metadata(filename):
    """The `__metadata__` dict of a safetensors file (header only)."""
    with open(filename, "rb") as f:
        return read_header(f, os.fstat(f.fileno()).st_size, os.fspath(filename))[1]

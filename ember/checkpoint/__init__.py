"""`python -m ember.checkpoint info FILE`: what a checkpoint holds, without loading it.

Lists every tensor of a PyTorch / ember checkpoint (zip or legacy format) or a safetensors
file: its name as a dotted key path (`model.layers.0.weight`), dtype, shape, byte size, the
storage it lives in and which tensors share a storage, and the total size of the data.

No tensor data is read. For torch files, data.pkl is unpickled with an unpickler that runs
nothing: torch's rebuild functions become recorders of their arguments, storages stay
persistent ids, and any other global (a model class, say) becomes an inert stand-in that just
keeps its arguments and state, so even a whole pickled model is listed safely. Storage sizes
come from the zip central directory (or, in the legacy format, from the pickle itself). For
safetensors only the JSON header is read.

`describe(path)` returns the same listing as data (see `Summary`); `main(argv)` is the CLI.
"""
import argparse
import collections
import io
import os
import pickle
import struct
import sys
import zipfile

from .. import _dtype as dt
from .. import serialization as ser
from ..utils import safetensors as st

__all__ = ["describe", "Summary", "TensorEntry", "main"]

TensorEntry = collections.namedtuple(
    "TensorEntry", "name dtype shape nbytes storage offset requires_grad kind")
TensorEntry.__doc__ = """One tensor: dtype is torch's name ('float32'); storage is the
storage key (None for safetensors); kind is 'tensor' or 'Parameter'."""


class Summary:
    """What `describe` found: the format, the tensors in file order, the size of each storage
    by key, and metadata (safetensors' __metadata__)."""

    def __init__(self, path, format, tensors, storages, metadata=None):
        self.path = path
        self.format = format
        self.tensors = tensors
        self.storages = storages
        self.metadata = metadata or {}

    def shared(self):
        """{storage key: [tensor names]} for storages that more than one tensor uses."""
        users = collections.defaultdict(list)
        for t in self.tensors:
            if t.storage is not None:
                users[t.storage].append(t.name)
        return {key: names for key, names in users.items() if len(names) > 1}

    @property
    def total_bytes(self):
        return sum(self.storages.values())


# ----------------------------------------------------------------------------------------------
# reading data.pkl without running it

# element sizes of torch dtypes ember lacks, so their tensors can still be listed
_FOREIGN_SIZES = {"complex64": 8, "complex128": 16, "ComplexFloat": 8, "ComplexDouble": 16,
                  "uint16": 2, "uint32": 4, "uint64": 8, "QInt8": 1, "QUInt8": 1, "QInt32": 4}


def _dtype_name(d):
    return d.name if isinstance(d, (dt.dtype, ser._ForeignDtype)) else repr(d)


def _itemsize(d):
    if isinstance(d, dt.dtype):
        return d.itemsize
    return _FOREIGN_SIZES.get(getattr(d, "name", None), 1)


class _StorageRef:
    def __init__(self, key, dtype):
        self.key, self.dtype = key, dtype


class _TensorInfo:
    def __init__(self, storage, offset, size, dtype=None, requires_grad=False):
        self.storage = storage
        self.offset = offset
        self.shape = tuple(size)
        self.dtype = storage.dtype if dtype is None else dtype
        self.requires_grad = bool(requires_grad)
        self.kind = "tensor"


def _tensor_v1(storage, offset, size, stride):
    return _TensorInfo(storage, offset, size)


def _tensor_v2(storage, offset, size, stride, requires_grad, hooks, metadata=None):
    return _TensorInfo(storage, offset, size, requires_grad=requires_grad)


def _tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype, metadata=None):
    return _TensorInfo(storage, offset, size, dtype, requires_grad)


def _parameter(data, requires_grad, hooks, state=None):
    if isinstance(data, _TensorInfo):
        data.kind, data.requires_grad = "Parameter", bool(requires_grad)
    return data


def _from_type(func, new_type, args, state):
    return func(*args)


_RECORDERS = {"_rebuild_tensor": _tensor_v1, "_rebuild_tensor_v2": _tensor_v2,
              "_rebuild_tensor_v3": _tensor_v3, "_rebuild_parameter": _parameter,
              "_rebuild_parameter_with_state": _parameter}


class _Opaque:
    """Stands in for any other global: calling, constructing or setting state only records."""

    args, kwargs, state = (), {}, None  # for instances made by cls.__new__ (NEWOBJ)

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs, self.state = args, kwargs, None

    def __setstate__(self, state):
        self.state = state

    def __call__(self, *args, **kwargs):
        return type(self)(*args, **kwargs)


def _stand_in(module, name):
    return type(name, (_Opaque,), {"__module__": "ember.checkpoint._opaque." + module})


class _InfoUnpickler(pickle.Unpickler):
    def __init__(self, file):
        super().__init__(file)
        self.storages = {}  # key -> (_StorageRef, element count), as the pickle gives them

    def find_class(self, module, name):
        module, name = ser._python3_name(module, name)
        if module == "torch._utils" and name in _RECORDERS:
            return _RECORDERS[name]
        if (module, name) == ("torch._tensor", "_rebuild_from_type_v2"):
            return _from_type
        storage_type = ser._storage_type(module, name)
        if storage_type is not None:
            return storage_type
        if module == "torch" and name in ser._DTYPES_BY_TORCH_NAME:
            return ser._DTYPES_BY_TORCH_NAME[name]
        if module == "torch" and name in ser._FOREIGN_DTYPES:
            return ser._ForeignDtype(name)
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        return _stand_in(module, name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or ser._text(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")
        dtype = getattr(pid[1], "dtype", None) or dt.uint8
        ref = _StorageRef(ser._text(pid[2]), dtype)
        self.storages[ref.key] = (ref, pid[4])
        return ref


# ----------------------------------------------------------------------------------------------
# walking the unpickled object for tensors

# nn.Module's own dicts: left out of the names, so a pickled model lists `fc.weight`
_MODULE_FIELDS = {"_parameters", "_buffers", "_modules"}


def _walk(obj, path, found, seen):
    if isinstance(obj, _TensorInfo):
        found.append((".".join(path) or "<root>", obj))
        return
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return
    seen.add(id(obj))
    if isinstance(obj, dict):
        for key, value in obj.items():
            _walk(value, path if key in _MODULE_FIELDS else path + [str(key)], found, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, value in enumerate(obj):
            _walk(value, path + [str(i)], found, seen)
    elif isinstance(obj, _Opaque):
        for i, value in enumerate(obj.args):
            _walk(value, path + [str(i)], found, seen)
        _walk(obj.state, path, found, seen)


def _entries(obj):
    found = []
    _walk(obj, [], found, set())
    entries = []
    for name, info in found:
        numel = 1
        for n in info.shape:
            numel *= n
        entries.append(TensorEntry(name, _dtype_name(info.dtype), info.shape,
                                   numel * _itemsize(info.dtype), info.storage.key,
                                   info.offset, info.requires_grad, info.kind))
    return entries


# ----------------------------------------------------------------------------------------------
# the three formats


def _describe_zip(path, f):
    archive = ser._ZipArchive(f)
    obj = _InfoUnpickler(io.BytesIO(archive.read("data.pkl"))).load()
    storages = {}
    for name in archive.zip.namelist():
        if name.startswith(archive.prefix + "data/"):
            storages[name[len(archive.prefix + "data/"):]] = archive.zip.getinfo(name).file_size
    return Summary(path, "PyTorch zip checkpoint", _entries(obj), storages)


def _describe_legacy(path, f):
    if ser._unpickle_plain(f) != ser.MAGIC_NUMBER:
        raise RuntimeError("it is a pickle but not a torch checkpoint (invalid magic number)")
    ser._unpickle_plain(f)  # protocol version
    ser._unpickle_plain(f)  # system info
    unpickler = _InfoUnpickler(f)
    obj = unpickler.load()
    storages = {key: numel * _itemsize(ref.dtype)
                for key, (ref, numel) in unpickler.storages.items()}
    return Summary(path, "PyTorch legacy checkpoint", _entries(obj), storages)


def _describe_safetensors(path, f, size):
    entries, metadata, _ = st.read_header(f, size, path)
    tensors = [TensorEntry(key, _SAFETENSORS_NAMES.get(code, code), shape, end - begin, None,
                           None, False, "tensor") for key, code, shape, begin, end in entries]
    sizes = {t.name: t.nbytes for t in tensors}  # each tensor is its own block of data
    return Summary(path, "safetensors", tensors, sizes, metadata)


_SAFETENSORS_NAMES = {code: d.name for code, d in st._DTYPES.items()}


def _looks_like_safetensors(head, size):
    if len(head) < 9:
        return False
    length = struct.unpack("<Q", head[:8])[0]
    return head[8:9] == b"{" and length <= size - 8


def describe(path):
    """A `Summary` of the checkpoint or safetensors file at `path` (no tensor data read)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        head = f.read(512)
        f.seek(0)
        if _looks_like_safetensors(head, size):
            return _describe_safetensors(path, f, size)
        kind = ser._file_kind(f)
        try:
            if kind == "zip":
                return _describe_zip(path, f)
            if kind == "legacy":
                return _describe_legacy(path, f)
        except (EOFError, pickle.UnpicklingError, zipfile.BadZipFile, ValueError, KeyError,
                IndexError, TypeError, AttributeError, struct.error, OSError) as e:
            raise RuntimeError(f"{path}: not a readable checkpoint ({e or type(e).__name__})"
                               ) from e
    if kind == "empty":
        raise RuntimeError(f"{path} is empty (0 bytes)")
    raise RuntimeError(f"{path} is neither a PyTorch checkpoint nor a safetensors file")


# ----------------------------------------------------------------------------------------------
# the command line


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def format_summary(summary):
    """The report `info` prints."""
    torch_file = summary.format != "safetensors"
    count = len(summary.tensors)
    lines = [f"{summary.path}: {summary.format}, {count} tensor{'s' * (count != 1)}"
             + (f" in {len(summary.storages)} storages" if torch_file else "")]
    rows = [("name", "dtype", "shape", "bytes") + (("storage", "offset") if torch_file else ())]
    for t in summary.tensors:
        flag = " (grad)" if t.requires_grad else ""
        kind = " [Parameter]" if t.kind == "Parameter" else ""
        row = (t.name + kind + flag, t.dtype, str(list(t.shape)), str(t.nbytes))
        rows.append(row + ((t.storage, str(t.offset)) if torch_file else ()))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    shared = summary.shared()
    if shared:
        lines.append("shared storages:")
        for key, names in shared.items():
            lines.append(f"  storage {key} ({summary.storages.get(key, 0)} bytes): "
                         + ", ".join(names))
    for key, value in summary.metadata.items():
        lines.append(f"metadata {key}: {value}")
    lines.append(f"total: {summary.total_bytes} bytes ({_size(summary.total_bytes)}) of "
                 "tensor data")
    return "\n".join(lines)


def main(argv=None):
    """`python -m ember.checkpoint info FILE`: list the tensors of a checkpoint or safetensors file
    (names, dtypes, shapes, sizes, shared storages) without loading it. Returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ember.checkpoint",
                                     description="Inspect checkpoints without loading them.")
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="list the tensors of a checkpoint or safetensors "
                                            "file")
    info.add_argument("file")
    args = parser.parse_args(argv)
    try:
        summary = describe(args.file)
    except (OSError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_summary(summary))
    return 0

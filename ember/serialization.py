"""`ember.save` / `ember.load`: checkpoints in PyTorch's own file formats, without torch.

A file written by `ember.save` is read by real `torch.load` (also with `weights_only=True` and
`mmap=True`), and `ember.load` reads what `torch.save` writes. The format (torch >= 1.6):

    archive/data.pkl       the object, pickled (protocol 2); every tensor appears as a call
                           torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
                           requires_grad, OrderedDict()) and every storage as a *persistent
                           id* ('storage', torch.FloatStorage, key, location, numel)
    archive/byteorder      'little'
    archive/data/<key>     one uncompressed record per storage, its bytes starting on a
                           64-byte boundary of the file (so a reader can mmap it)
    archive/version        '3'

Before 1.6 torch wrote the "legacy" format: pickles back to back in one file (magic number,
protocol version, system info, the object, the list of storage keys), then each storage as an
int64 element count and its raw bytes. Both are read here; `_use_new_zipfile_serialization=False`
writes the legacy one.

The pieces, in the order this file has them:
  names       torch's names for dtypes and storages, and `_TorchName`, which pickles as a bare
              reference to a torch global without importing torch
  saving      `_StorageTable` (which storage each tensor lands in: one per allocation, so
              tensors sharing memory are saved once), `_Pickler` (reduces tensors to torch's
              rebuild calls), `_ZipWriter` (the aligned archive), the legacy writer, `save`
  loading     `_Loader` (storages, the rebuild functions, map_location), `_Unpickler` (a
              restricted unpickler: with `weights_only=True` only an allow-list of globals is
              ever looked up, so a pickle cannot call os.system), the two readers, `load`
  pickling    `reduce_tensor` / `set_tensor_state`: plain `pickle.dumps(tensor)` in ember

Storages are `_storage.py`'s. Read next: `utils/safetensors.py`, then `checkpoint/`.
"""
import _compat_pickle
import collections
import contextlib
import errno
import io
import os
import pickle
import secrets
import struct
import sys
import zipfile
import zlib

import numpy as np

from . import _backend
from . import _dtype as dt
from ._device import CPU, device
from ._storage import TypedStorage, UntypedStorage, _address, allocation_of, span_of
from ._tensor import Size, Tensor

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals"]

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the first pickle of a legacy file
PROTOCOL_VERSION = 1001                # the second one
DEFAULT_PROTOCOL = 2
STORAGE_ALIGNMENT = 64


# ----------------------------------------------------------------------------------------------
# names: how torch calls ember's dtypes and storages inside a pickle

_STORAGE_NAMES = {
    dt.float32: "FloatStorage", dt.float64: "DoubleStorage", dt.float16: "HalfStorage",
    dt.bfloat16: "BFloat16Storage", dt.int64: "LongStorage", dt.int32: "IntStorage",
    dt.int16: "ShortStorage", dt.int8: "CharStorage", dt.uint8: "ByteStorage",
    dt.bool: "BoolStorage", dt.complex64: "ComplexFloatStorage",
    dt.complex128: "ComplexDoubleStorage",
}
_STORAGE_DTYPES = {name: d for d, name in _STORAGE_NAMES.items()}

# torch.<name> for every ember dtype, aliases included (torch.float, torch.long, ...)
_DTYPES_BY_TORCH_NAME = {d.name: d for d in dt.ALL_DTYPES}
_DTYPES_BY_TORCH_NAME.update(half=dt.float16, float=dt.float32, double=dt.float64,
                             short=dt.int16, int=dt.int32, long=dt.int64, cfloat=dt.complex64,
                             cdouble=dt.complex128)

# torch dtypes ember has no equivalent for: a checkpoint may name them; using one is an error
_FOREIGN_DTYPES = {"complex32", "chalf", "float4_e2m1fn_x2", "qint8", "quint8", "qint32",
                   "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"}
_FOREIGN_DTYPES.update(f"uint{n}" for n in range(1, 8))
_FOREIGN_DTYPES.update(f"int{n}" for n in range(1, 8))


class _TorchName:
    """A stand-in for the torch global `module.name`: the pickler writes it as a GLOBAL opcode
    (a reference by name), so ember can emit `torch.FloatStorage` without importing torch.
    Instances are cached, so the pickle memo writes each name once."""

    _cache = {}

    def __new__(cls, module, name):
        key = (module, name)
        found = cls._cache.get(key)
        if found is None:
            found = cls._cache[key] = object.__new__(cls)
            found.module, found.name = module, name
        return found

    def __call__(self, *args):
        # pickle insists that the callable of a reduce tuple be callable; it is never called
        raise TypeError(f"{self.module}.{self.name} is a name written into a pickle")

    def __repr__(self):
        return f"{self.module}.{self.name}"


class _ForeignDtype:
    """A torch dtype that ember lacks (torch.complex32, torch.uint16, ...), as read from a
    pickle. Holding one is fine; building a tensor of it raises."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class _StorageType:
    """torch.FloatStorage and friends as read from a pickle: only their dtype matters.
    `dtype is None` stands for torch.UntypedStorage (bytes)."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"torch.{self.name}"


def _storage_type(module, name):
    """The `_StorageType` for a storage global, or None when `module.name` is not one."""
    if module == "torch.storage" and name in ("UntypedStorage", "TypedStorage"):
        return _StorageType(name, None)
    if module in ("torch", "torch.cuda") and name.endswith("Storage"):
        if name == "UntypedStorage":
            return _StorageType(name, None)
        if name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        return _StorageType(name, _ForeignDtype(name[:-len("Storage")]))
    return None


# ----------------------------------------------------------------------------------------------
# saving: the pickle


class _SavedStorage:
    """One storage being saved: its key, element type and device, and the byte range
    [lo, hi) of the allocation `block` (flat uint8) that its tensors' base tensors span."""

    def __init__(self, key, block, dtype, dev, whole=False):
        self.key = key
        self.block = block
        self.dtype = dtype
        self.location = "cpu" if dev.type == "cpu" else f"cuda:{dev.index or 0}"
        self.lo, self.hi = (0, block.size) if whole else (block.size, 0)

    def cover(self, lo, hi):
        self.lo, self.hi = min(self.lo, lo), max(self.hi, hi)

    @property
    def data(self):
        """The bytes written to the file."""
        return self.block[self.lo:self.hi] if self.lo < self.hi else self.block[:0]

    @property
    def numel(self):
        return self.data.size // self.dtype.itemsize

    @property
    def address(self):
        return _address(self.block) + min(self.lo, self.hi)

    def host_bytes(self):
        """The storage's bytes as a flat host array (no copy for CPU tensors)."""
        return _backend.transfer(self.data, CPU)


class _StorageTable:
    """Which storage each tensor is saved in, and at what offset.

    Tensors whose arrays view one allocation (views, `detach()`ed copies, tied weights) share
    a storage, so they are saved once and reload sharing memory. The storage holds the memory
    their base tensors span (a view brings its whole base, as in torch), not the whole
    allocation: `from_numpy(big[:2])` saves two rows, not `big`. That extent is only known
    once every tensor was seen, so `save` pickles twice: the first pass `note`s each tensor,
    the second asks `locate` for its storage and offset."""

    def __init__(self):
        self.storages = []
        self._by_owner = {}   # id(allocation owner) -> _SavedStorage
        self._placed = {}     # id(tensor) -> _SavedStorage
        self._copies = {}     # id(tensor with negative strides) -> its contiguous copy
        self._alive = []      # what the ids above refer to, kept alive between the passes

    def _new(self, block, dtype, dev, whole=False):
        storage = _SavedStorage(str(len(self.storages)), block, dtype, dev, whole)
        self.storages.append(storage)
        return storage

    def add(self, obj, block, dtype, dev):
        """A storage object being saved as such: all of its bytes, its own record."""
        if id(obj) not in self._placed:
            self._alive.append(obj)
            self._placed[id(obj)] = self._new(block, dtype, dev, whole=True)
        return self._placed[id(obj)]

    def savable(self, t):
        """`t`, or a contiguous copy when it has negative strides (which torch lacks)."""
        if not any(s < 0 for s in t._data.strides):
            return t
        if id(t) not in self._copies:
            self._alive.append(t)
            self._copies[id(t)] = Tensor._make(t._data.copy(), device=t.device)
        return self._copies[id(t)]

    def detached(self, t):
        """`t.detach()`, the same object in both passes."""
        if id(t) not in self._copies:
            self._alive.append(t)
            self._copies[id(t)] = t.detach()
        return self._copies[id(t)]

    def note(self, t, late=False):
        """Put `t` in a storage and widen that storage to cover t's base. `late`: the second
        pass met a tensor the first did not (a hook built it anew); storages can no longer
        grow, so it joins one only if it already lies inside."""
        if id(t) in self._placed:
            return
        self._alive.append(t)
        owner, block = allocation_of(t._data)
        storage = self._by_owner.get(id(owner))
        if storage is None and not late:
            storage = self._by_owner[id(owner)] = self._new(block, t.dtype, t.device)
        base = t if t._base is None else t._base
        if base.dtype is not t.dtype or allocation_of(base._data)[0] is not owner:
            base = t
        span = span_of((t if late else base)._data)
        lo = _address(span) - _address(block)
        if (storage is None or storage.dtype is not t.dtype
                or t.numel() and (t.data_ptr() - _address(storage.block)) % t.itemsize
                or late and t.numel() and not storage.lo <= lo <= lo + span.nbytes <= storage.hi):
            # a new allocation met late, one saved under another dtype, or t's elements do
            # not line up with it: t (with its base) gets a storage of its own
            storage = self._new(span.view(np.uint8), t.dtype, t.device, whole=True)
        elif base.numel() and not late:
            storage.cover(lo, lo + span.nbytes)
        self._placed[id(t)] = storage

    def locate(self, t):
        """Second pass: (storage, offset in elements) for `t`."""
        if id(t) not in self._placed:
            self.note(t, late=True)
        storage = self._placed[id(t)]
        if not t.numel():
            return storage, 0
        return storage, (t.data_ptr() - storage.address) // t.itemsize


class _Discard:
    """The first pass's output: only the storage table matters."""

    def write(self, data):
        return len(data)


class _Pickler(pickle._Pickler):
    """Pickles like `pickle.Pickler`, but writes ember tensors, dtypes, devices and sizes as
    torch's, so that torch.load reads the result.

    The pure-Python pickler is used because only it lets us write a GLOBAL opcode for a name
    that is not importable here (torch); the C pickler checks every global by importing it.
    Tensor data is not in this pickle, so its speed hardly matters."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, storages, legacy=False, first_pass=False):
        super().__init__(file, protocol)
        self.storages = storages
        self.legacy = legacy
        self.first_pass = first_pass
        self.dispatch_table = {
            device: lambda d: (_TorchName("torch", "device"), (str(d),)),
            Size: lambda s: (_TorchName("torch", "Size"), (tuple(s),)),
        }

    # the GLOBAL opcode for names we do not import

    def write_global(self, module, name, obj):
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{module}\n{name}\n".encode("utf-8"))
        self.memoize(obj)

    def _save_torch_name(self, obj):
        self.write_global(obj.module, obj.name, obj)

    def _save_dtype(self, obj):
        self.write_global("torch", obj.name, obj)

    dispatch[_TorchName] = _save_torch_name
    dispatch[dt.dtype] = _save_dtype

    def save_global(self, obj, name=None):
        """Public ember classes and functions are written under torch's name for them
        (`ember.nn.modules.linear.Linear` -> `torch.nn.modules.linear.Linear`), so a
        whole-object checkpoint opens in torch; `ember.load` maps the names back."""
        module = getattr(obj, "__module__", None) or ""
        qualname = name or getattr(obj, "__qualname__", None) or obj.__name__
        parts = module.split(".") + qualname.split(".")
        if parts[0] == "ember" and not any(p.startswith("_") for p in parts):
            self.write_global("torch" + module[len("ember"):], qualname, obj)
        else:
            super().save_global(obj, name)

    # tensors and storages

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        return NotImplemented

    def _reduce_tensor(self, t):
        """torch's reduction of a tensor. Subclasses choose theirs:
        - `_is_param = True` (nn.Parameter): torch._utils._rebuild_parameter(data,
          requires_grad, OrderedDict()), or _rebuild_parameter_with_state with attributes;
        - a method `_ember_torch_reduce(self)` returning ("module.function", args), for
          other subclasses torch rebuilds with a function of its own (args may hold plain
          tensors, which pickle as tensors);
        - anything else: torch._tensor._rebuild_from_type_v2(..., type, ..., attributes)."""
        hook = getattr(t, "_ember_torch_reduce", None)
        if hook is not None:
            qualified, args = hook()
            module, _, name = qualified.rpartition(".")
            return _TorchName(module, name), tuple(args)
        state = _attributes(t)
        if t._is_param:
            args = (self.storages.detached(t), t.requires_grad, collections.OrderedDict())
            if state:
                return (_TorchName("torch._utils", "_rebuild_parameter_with_state"),
                        args + (dict(state),))
            return _TorchName("torch._utils", "_rebuild_parameter"), args
        args = self._rebuild_args(t)
        rebuild = _TorchName("torch._utils", "_rebuild_tensor_v2")
        if t.dtype not in _STORAGE_NAMES:  # dtypes without a typed storage name themselves
            rebuild = _TorchName("torch._utils", "_rebuild_tensor_v3")
            args = args + (_TorchName("torch", t.dtype.name),)
        if type(t) is Tensor and not state:
            return rebuild, args
        # attributes or a subclass: torch wraps the plain rebuild in _rebuild_from_type_v2
        new_type = _TorchName("torch", "Tensor") if type(t) is Tensor else type(t)
        return (_TorchName("torch._tensor", "_rebuild_from_type_v2"),
                (rebuild, new_type, args, state))

    def _rebuild_args(self, t):
        data = self.storages.savable(t)
        if self.first_pass:
            self.storages.note(data)
            storage, offset = None, 0
        else:
            storage, offset = self.storages.locate(data)
        return (storage, offset, tuple(t.shape), data.stride(), t.requires_grad,
                collections.OrderedDict())

    def persistent_id(self, obj):
        if isinstance(obj, UntypedStorage):
            obj = self.storages.add(obj, obj._bytes, dt.uint8, obj.device)
            return self._storage_id(obj, _TorchName("torch.storage", "UntypedStorage"))
        if isinstance(obj, TypedStorage):
            obj = self.storages.add(obj, obj.untyped()._bytes, obj.dtype, obj.device)
        if isinstance(obj, _SavedStorage):
            if obj.dtype not in _STORAGE_NAMES:  # uint16..64, float8: torch saves bytes
                return self._storage_id(obj, _TorchName("torch.storage", "UntypedStorage"),
                                        obj.data.size)
            return self._storage_id(obj, _TorchName("torch", _STORAGE_NAMES[obj.dtype]))
        return None

    def _storage_id(self, storage, storage_type, numel=None):
        numel = storage.numel if numel is None else numel
        pid = ("storage", storage_type, storage.key, storage.location, numel)
        return pid + (None,) if self.legacy else pid  # legacy ids end with view metadata


# ----------------------------------------------------------------------------------------------
# saving: the archive


class _ZipWriter:
    """A minimal ZIP writer for torch archives: every record stored uncompressed, its data
    starting on a 64-byte boundary of the archive. The padding lives in an extra field of the
    record's local header, which ZIP readers skip. ZIP64 fields appear only where a size, an
    offset or the record count passes what 32 (or 16) bits hold."""

    LIMIT = 0xFFFFFFFF   # sizes and offsets from here on go into ZIP64 fields
    COUNT_LIMIT = 0xFFFF  # so does a record count (both lowered by a test to exercise ZIP64)
    MAX32, MAX16 = 0xFFFFFFFF, 0xFFFF  # "see the ZIP64 field" markers in the 32/16-bit fields
    DOS_DATE = (0 << 9) | (1 << 5) | 1  # 1980-01-01, ZIP's epoch: the file is reproducible

    def __init__(self, f):
        self._f = f
        self._pos = 0
        self._entries = []

    def _write(self, data):
        self._f.write(data)
        self._pos += len(data) if isinstance(data, bytes) else memoryview(data).nbytes

    def record(self, name, data):
        data = memoryview(data).cast("B")
        name = name.encode("utf-8")
        size, crc = data.nbytes, zlib.crc32(data)
        big = size >= self.LIMIT
        extra = struct.pack("<HHQQ", 0x0001, 16, size, size) if big else b""
        header_size = 30 + len(name) + len(extra) + 4
        pad = -(self._pos + header_size) % STORAGE_ALIGNMENT
        extra += b"FB" + struct.pack("<H", pad) + b"Z" * pad
        small = self.MAX32 if big else size
        self._entries.append((name, crc, size, self._pos))
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if big else 20, 0, 0, 0,
                                self.DOS_DATE, crc, small, small, len(name), len(extra)))
        self._write(name + extra)
        self._write(data)

    def close(self):
        start = self._pos
        for name, crc, size, offset in self._entries:
            self._write(self._central_entry(name, crc, size, offset))
        length = self._pos - start
        count = len(self._entries)
        if count >= self.COUNT_LIMIT or start >= self.LIMIT or length >= self.LIMIT:
            end64 = self._pos
            self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count,
                                    length, start))
            self._write(struct.pack("<IIQI", 0x07064B50, 0, end64, 1))
            count, length, start = (min(count, self.MAX16), min(length, self.MAX32),
                                    min(start, self.MAX32))
        self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, length, start, 0))

    def _central_entry(self, name, crc, size, offset):
        wide = [v for v in (size, size, offset) if v >= self.LIMIT]
        extra = struct.pack("<HH", 0x0001, 8 * len(wide)) + struct.pack(
            f"<{len(wide)}Q", *wide) if wide else b""
        small_size = self.MAX32 if size >= self.LIMIT else size
        small_offset = self.MAX32 if offset >= self.LIMIT else offset
        version = 45 if wide else 20
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, version, version, 0, 0, 0,
                           self.DOS_DATE, crc, small_size, small_size, len(name), len(extra),
                           0, 0, 0, 0, small_offset) + name + extra


def _write_zip(f, data_pkl, storages, byteorder):
    writer = _ZipWriter(f)
    writer.record("archive/data.pkl", data_pkl)
    writer.record("archive/.format_version", b"1")
    writer.record("archive/.storage_alignment", str(STORAGE_ALIGNMENT).encode())
    if byteorder:
        writer.record("archive/byteorder", sys.byteorder.encode())
    for storage in storages:
        writer.record(f"archive/data/{storage.key}", storage.host_bytes())
    writer.record("archive/version", b"3\n")
    writer.close()


def _write_legacy(f, data_pkl, storages, protocol):
    system = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
              "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, system):
        pickle.dump(header, f, protocol=protocol)
    f.write(data_pkl)
    pickle.dump([s.key for s in storages], f, protocol=protocol)
    for storage in storages:
        f.write(struct.pack("<q", storage.numel))  # counted in elements
        f.write(storage.host_bytes())


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


@contextlib.contextmanager
def _atomic_open(path):
    """Write to a fresh file beside `path`, then rename it over `path`: readers never see a
    half-written checkpoint, and a failed save leaves the old file intact."""
    path = os.fspath(path)
    folder, base = os.path.split(os.path.abspath(path))
    temp = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp")
    # os.open applies the umask, so the result gets the permissions a plain open() gives
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _check_folder(path, legacy):
    """torch's errors for a path whose folder is missing, naming the user's path (not the
    temporary file written first)."""
    path = os.fspath(path)
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        if legacy:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        raise RuntimeError(f"Parent directory {folder} does not exist.")


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save `obj` (tensors, containers of them, state dicts, ...) to a path or a writable
    binary file, in PyTorch's format. Tensors sharing memory are stored once and reload
    sharing it; `requires_grad` is kept, `.grad` is not (as in torch)."""
    if pickle_module is not pickle:
        raise NotImplementedError("ember.save writes with its own pickler; pickle_module "
                                  "other than the standard pickle is not supported")
    storages = _StorageTable()
    legacy = not _use_new_zipfile_serialization
    _Pickler(_Discard(), pickle_protocol, storages, legacy, first_pass=True).dump(obj)
    buffer = io.BytesIO()
    _Pickler(buffer, pickle_protocol, storages, legacy).dump(obj)
    data_pkl = buffer.getbuffer()

    def write(out):
        if _use_new_zipfile_serialization:
            _write_zip(out, data_pkl, storages.storages, not _disable_byteorder_record)
        else:
            _write_legacy(out, data_pkl, storages.storages, pickle_protocol)

    if _is_path(f):
        _check_folder(f, legacy)
        with _atomic_open(f) as out:
            write(out)
    else:
        write(f)
        if hasattr(f, "flush"):
            f.flush()


# ----------------------------------------------------------------------------------------------
# loading: storages, tensors and where they go


class _Record:
    """One storage of the file while it is being loaded."""

    def __init__(self, key, dtype, storage, location):
        self.key = key
        self.dtype = dtype            # the element type the file gives it
        self.storage = storage        # UntypedStorage (CPU until `_Loader.finish`)
        self.location = location      # where it was saved ('cpu', 'cuda:0', ...)
        self.root = None              # the tensor whose memory the others view
        self.tensors = []             # (tensor, offset, shape, strides) built on it


class _Loader:
    """State of one `load`: the storages read so far, and torch's rebuild functions as bound
    methods (the unpickler hands them out in place of torch's)."""

    def __init__(self, read_storage, map_location, byteorder):
        self._read_storage = read_storage   # (key, nbytes) -> host uint8 array
        self._restore = _restorer(map_location)
        self._byteorder = byteorder
        self.records = {}         # key -> _Record
        self._by_storage = {}     # id(UntypedStorage) -> _Record
        self._by_tensor = {}      # id(tensor) -> _Record, for tensors built here

    # storages (persistent ids)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or _text(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r} (expected a "
                                         f"('storage', ...) tuple)")
        if len(pid) not in (5, 6):
            raise pickle.UnpicklingError(f"malformed storage id {pid!r}")
        storage_type, key, location, numel = pid[1], _text(pid[2]), _text(pid[3]), pid[4]
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"storage id names {storage_type!r}, not a storage "
                                         "type")
        if len(pid) == 6 and pid[5] is not None:
            raise NotImplementedError("legacy storage views (files from torch < 0.4) are not "
                                      "supported")
        dtype = dt.uint8 if storage_type.dtype is None else _supported(storage_type.dtype)
        record = self.records.get(key)
        if record is None:
            if not isinstance(numel, int) or numel < 0:
                raise pickle.UnpicklingError(f"storage {key}: bad element count {numel!r}")
            data = self._read_storage(key, numel * dtype.itemsize)
            record = self.records[key] = _Record(key, dtype, UntypedStorage._wrap(data),
                                                 location)
            self._by_storage[id(record.storage)] = record
        if storage_type.dtype is None:
            return record.storage
        return TypedStorage(wrap_storage=record.storage, dtype=dtype)

    # torch._utils rebuild functions

    def rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._build(storage, storage_offset, size, stride, None)

    def rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, metadata=None):
        t = _resolve_bits(self._build(storage, storage_offset, size, stride, None), metadata)
        return t.requires_grad_(bool(requires_grad)) if requires_grad else t

    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, dtype, metadata=None):
        t = self._build(storage, storage_offset, size, stride, _supported(dtype))
        t = _resolve_bits(t, metadata)
        return t.requires_grad_(bool(requires_grad)) if requires_grad else t

    def rebuild_parameter(self, data, requires_grad, backward_hooks):
        return self._parameter(data, requires_grad)

    def rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        param = self._parameter(data, requires_grad)
        _set_attributes(param, state)
        return param

    def rebuild_from_type_v2(self, func, new_type, args, state):
        """A tensor subclass, or a tensor with attributes: rebuild, retype, set attributes."""
        t = func(*args)
        if not isinstance(new_type, type) or not issubclass(new_type, Tensor):
            raise pickle.UnpicklingError(f"cannot rebuild a tensor as {new_type!r}")
        if not isinstance(t, new_type):
            t.__class__ = new_type
        _set_attributes(t, state)
        return t

    def _parameter(self, data, requires_grad):
        """torch._utils._rebuild_parameter: ember.nn.Parameter when ember.nn exists, else the
        tensor itself with its requires_grad flag."""
        cls = _parameter_class()
        if cls is None:
            return data.requires_grad_(bool(requires_grad))
        param = cls(data, bool(requires_grad))
        record = self._by_tensor.get(id(data))
        if param is not data and record is not None and param._data is data._data:
            # the parameter wraps data's array: it joins data's storage group in its place
            if data._base is not None:
                _share_base(param, data._base)
            entry = next(e for e in record.tensors if e[0] is data)
            record.tensors.append((param,) + entry[1:])
            self._by_tensor[id(param)] = record
        return param

    def _build(self, storage, offset, size, stride, dtype):
        """A tensor viewing `storage` at `offset` with `size` and `stride` (in elements)."""
        if isinstance(storage, UntypedStorage):
            storage = TypedStorage(wrap_storage=storage, dtype=dt.uint8)
        if not isinstance(storage, TypedStorage):
            raise pickle.UnpicklingError(f"a tensor needs a storage, got {type(storage)}")
        dtype = storage.dtype if dtype is None else dtype
        record = self._record_of(storage)
        available = record.storage.nbytes() // dtype.itemsize
        shape, strides, offset = _geometry(size, stride, offset, available)
        t = self._view(record, dtype, offset, shape, strides)
        record.tensors.append((t, offset, shape, strides))
        self._by_tensor[id(t)] = record
        return t

    def _record_of(self, storage):
        record = self._by_storage.get(id(storage._untyped_storage))
        if record is None:
            raise pickle.UnpicklingError("a tensor refers to a storage not in this file")
        return record

    def _view(self, record, dtype, offset, shape, strides):
        """The tensor for (offset, shape, strides) of a storage. Tensors of one storage share
        a base tensor, so they share memory, version counter and storage_offset() as in
        torch: the first tensor that covers the whole storage is the base, and the others
        are `as_strided` views of it; when no tensor covers it, a 1-D tensor of the whole
        storage is the base."""
        from .autograd.grad_mode import no_grad
        from .ops.shape import as_strided

        size = dtype.itemsize
        array = _strided(np, record.storage._bytes, offset * size, dtype.np, shape,
                         tuple(s * size for s in strides))
        flat = record.storage._bytes.view(dtype.np)
        if record.root is None:
            if offset == 0 and array.size == flat.size and array.flags.c_contiguous:
                record.root = Tensor._make(array)
                return record.root
            record.root = Tensor._make(flat)
            record.tensors.append((record.root, 0, (flat.size,), (1,)))
        if record.root.dtype is not dtype:  # one storage read as two dtypes
            return Tensor._make(array)
        with no_grad():
            return as_strided(record.root, shape, strides, offset)

    # after the pickle

    def finish(self):
        """Byte-swap files from big-endian machines, then move each storage where
        map_location says (tensors built on it are re-pointed at the moved memory)."""
        for record in self.records.values():
            if self._byteorder != sys.byteorder and record.dtype.itemsize > 1:
                array = record.storage._bytes.view(_supported(record.dtype).np)
                array.byteswap(inplace=True)
            moved = self._restore(record.storage, record.location)
            if isinstance(moved, TypedStorage):
                moved = moved.untyped()
            if not isinstance(moved, UntypedStorage):
                raise TypeError(f"map_location returned {type(moved).__name__}, expected a "
                                "storage")
            if moved is not record.storage:
                self._move(record, moved)

    def _move(self, record, moved):
        old = record.storage
        old._bytes, old._device = moved._bytes, moved.device  # storages held by the result
        xp = _backend.namespace(moved.device)
        for t, offset, shape, strides in record.tensors:
            size = t.dtype.itemsize
            t._data = _strided(xp, moved._bytes, offset * size, t.dtype.np, shape,
                               tuple(s * size for s in strides))
            t._device = moved.device


def _geometry(size, stride, offset, available):
    """Check a rebuilt tensor's size/stride/offset (in elements) against its storage."""
    try:
        shape = tuple(int(n) for n in size)
        strides = tuple(int(s) for s in stride)
        offset = int(offset)
    except (TypeError, ValueError):
        raise pickle.UnpicklingError(f"bad tensor geometry: size={size!r}, stride={stride!r}, "
                                     f"offset={offset!r}") from None
    if len(shape) != len(strides) or any(n < 0 for n in shape) or any(s < 0 for s in strides) \
            or offset < 0:
        raise RuntimeError(f"invalid tensor: size {list(shape)}, stride {list(strides)}, "
                           f"storage offset {offset}")
    if all(shape):
        needed = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        if needed > available:
            raise RuntimeError(f"tensor with size {list(shape)}, stride {list(strides)} and "
                               f"storage offset {offset} needs {needed} elements, but its "
                               f"storage holds {available}")
    return shape, strides, offset


def _strided(xp, block, offset, np_dtype, shape, strides):
    """An array of `np_dtype` viewing the bytes `block` from byte `offset` with `shape` and
    byte `strides`. Overlapping views (stride 0, as expand makes) are read-only, as ember's
    expand results are."""
    if not all(shape):
        return xp.empty(shape, dtype=np_dtype)
    size = np.dtype(np_dtype).itemsize
    # strided over unsigned integers of the same width, then viewed: NumPy's as_strided
    # cannot rebuild some ml_dtypes types (float8_e5m2) from their array interface
    first = block[offset:offset + size].view(f"u{size}")
    overlapping = any(s == 0 and n > 1 for n, s in zip(shape, strides))
    kwargs = {"writeable": not overlapping} if xp is np else {}
    array = xp.lib.stride_tricks.as_strided(first, shape=shape, strides=strides, **kwargs)
    return array.view(np_dtype)


def _attributes(t):
    """The attributes a user set on `t`: its __dict__ less ember's own rarely-set fields
    (grad, hooks, ...), which the Tensor class declares with defaults."""
    extra = getattr(t, "__dict__", None) or {}
    return {k: v for k, v in extra.items() if not hasattr(Tensor, k)}


def _share_base(t, base):
    """Make `t` a non-autograd view of `base` (shared memory and version counter)."""
    t._base, t._vc = base, base._vc
    t._view_fn = None  # not made by a view op, so autograd cannot replay it
    t._view_of_fn = base._grad_fn


def _supported(d):
    if isinstance(d, dt.dtype):
        return d
    raise NotImplementedError(f"the checkpoint holds a tensor of dtype {d!r}, which ember does "
                              "not support")


def _resolve_bits(t, metadata):
    """torch marks its lazy conjugate and negative views in a tensor's metadata ({'conj':
    True}, {'neg': True}) over the unchanged stored values. ember has no such views, so the
    loaded tensor holds the resolved values, in memory of its own."""
    if not metadata:
        return t
    unknown = set(metadata) - {"conj", "neg"}
    if unknown:
        raise NotImplementedError(f"tensor metadata {metadata!r} is not supported")
    data = t._data
    if metadata.get("conj"):
        data = data.conj()
    if metadata.get("neg"):
        data = -data
    return t if data is t._data else Tensor._make(data, device=t.device)


def _set_attributes(obj, state):
    """torch's tensor state: a dict of attributes, or (dict, slots dict)."""
    if not state:
        return
    if isinstance(state, tuple) and len(state) == 2:
        for part in state:
            _set_attributes(obj, part)
        return
    if not isinstance(state, dict):
        raise pickle.UnpicklingError(f"unexpected tensor state {type(state).__name__}")
    for name, value in state.items():
        setattr(obj, name, value)


def _parameter_class():
    """ember.nn.Parameter, or None while ember.nn does not exist."""
    try:
        from .nn.parameter import Parameter
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("ember.nn"):
            return None
        raise
    return Parameter


def _text(value):
    # pickles written by Python 2 may hold bytes where Python 3 writes str
    return value.decode("ascii") if isinstance(value, bytes) else value


def _restorer(map_location):
    """map_location as a function (storage, saved location) -> storage, like torch's."""
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        return lambda s, location: _default_restore(s, str(map_location.get(location,
                                                                            location)))
    if isinstance(map_location, (str, device)):
        return lambda s, location: _default_restore(s, str(map_location))
    if callable(map_location):
        def restore(s, location):
            moved = map_location(s, location)
            return _default_restore(s, location) if moved is None else moved
        return restore
    raise TypeError(f"map_location must be None, a str, a device, a dict or a callable, not "
                    f"{type(map_location).__name__}")


def _default_restore(storage, location):
    if location == "cpu":
        return storage.cpu()
    if location.startswith("cuda"):
        if not _backend.cuda_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "ember.cuda.is_available() is False. If you are running on a "
                               "CPU-only machine, please use ember.load with "
                               "map_location=ember.device('cpu') to map your storages to the "
                               "CPU.")
        return storage.to(device(location))
    raise RuntimeError(f"don't know how to restore data location of a storage tagged with "
                       f"'{location}': ember knows 'cpu' and 'cuda'")


# ----------------------------------------------------------------------------------------------
# loading: the restricted unpickler


def _encode(text, encoding="utf-8", errors="strict"):
    """_codecs.encode, which protocol-2 pickles use for bytes; only text codecs allowed."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "ascii"):
        raise pickle.UnpicklingError(f"_codecs.encode({type(text).__name__}, {encoding!r}) "
                                     "is not allowed")
    return text.encode(encoding, errors)


def _get_layout(name):
    from . import strided

    if name != "torch.strided":
        raise NotImplementedError(f"layout {name} is not supported (only torch.strided)")
    return strided


def _unsupported(name):
    def rebuild(*args, **kwargs):
        raise NotImplementedError(f"the checkpoint holds an object built by torch._utils."
                                  f"{name} (a sparse, quantized, nested, meta or device-only "
                                  "tensor), which ember does not support")
    return rebuild


_SAFE_BUILTINS = {("collections", "OrderedDict"): collections.OrderedDict,
                  ("collections", "Counter"): collections.Counter,
                  ("builtins", "set"): set,
                  ("builtins", "frozenset"): frozenset,
                  ("builtins", "bytearray"): bytearray,
                  ("builtins", "complex"): complex,
                  ("_codecs", "encode"): _encode}

_REBUILDERS = {"_rebuild_tensor": "rebuild_tensor", "_rebuild_tensor_v2": "rebuild_tensor_v2",
               "_rebuild_tensor_v3": "rebuild_tensor_v3",
               "_rebuild_parameter": "rebuild_parameter",
               "_rebuild_parameter_with_state": "rebuild_parameter_with_state"}

_user_safe_globals = {}


def _safe_global(module, name, loader):
    """The ember object standing for an allowed global, or None if it is not allowed."""
    if (module, name) in _SAFE_BUILTINS:
        return _SAFE_BUILTINS[(module, name)]
    storage_type = _storage_type(module, name)
    if storage_type is not None:
        return storage_type
    if module == "torch._utils" and name.startswith("_rebuild_"):
        method = _REBUILDERS.get(name)
        return getattr(loader, method) if method else _unsupported(name)
    if (module, name) == ("torch._tensor", "_rebuild_from_type_v2"):
        return loader.rebuild_from_type_v2
    if module == "torch":
        if name in _DTYPES_BY_TORCH_NAME:
            return _DTYPES_BY_TORCH_NAME[name]
        if name in _FOREIGN_DTYPES:
            return _ForeignDtype(name)
        found = {"Size": Size, "Tensor": Tensor, "device": device}.get(name)
        if found is not None:
            return found
    if (module, name) == ("torch.nn.parameter", "Parameter"):
        return _parameter_class() or Tensor
    if (module, name) == ("torch.serialization", "_get_layout"):
        return _get_layout
    return _user_safe_globals.get(f"{module}.{name}") or _user_safe_globals.get(
        f"{_ember_module(module)}.{name}")


def _python3_name(module, name):
    """Protocol-2 pickles name builtins as Python 2 did (`__builtin__.set`); the default
    find_class translates them, so an overriding one must too."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _ember_module(module):
    """torch.nn.modules.linear -> ember.nn.modules.linear (other modules unchanged)."""
    if module == "torch" or module.startswith("torch."):
        return "ember" + module[len("torch"):]
    return module


class WeightsOnlyUnpicklingError(pickle.UnpicklingError):
    """A `weights_only=True` load met a global outside the allow-list."""


def _weights_only_error(module, name):
    full = f"{module}.{name}"
    return WeightsOnlyUnpicklingError(
        "Weights only load failed. The checkpoint refers to a global that loading with "
        "weights_only=True never imports, since unpickling it could run arbitrary code. If "
        "you trust the file's source, load it with weights_only=False, or allow the global "
        f"with ember.serialization.add_safe_globals([...]).\n\tWeightsUnpickler error: "
        f"Unsupported global: GLOBAL {full} was not an allowed global by default.")


class _Unpickler(pickle.Unpickler):
    """Unpickles a checkpoint's object with torch's globals replaced by ember's. Every global
    a pickle names goes through `find_class`; with `weights_only` it answers from the
    allow-list alone, so nothing else is imported or called."""

    def __init__(self, file, loader, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self._loader = loader
        self._weights_only = weights_only

    def find_class(self, module, name):
        module, name = _python3_name(module, name)
        found = _safe_global(module, name, self._loader)
        if found is not None:
            return found
        if self._weights_only:
            raise _weights_only_error(module, name)
        if module.split(".")[0] == "torch":
            return self._ember_global(module, name)
        return super().find_class(module, name)

    def _ember_global(self, module, name):
        """ember's object for torch's `module.name`: the same path under `ember`, or failing
        that the name in an enclosing package (torch.nn.modules.activation.ReLU may live
        in ember.nn only)."""
        import importlib

        target = _ember_module(module)
        parts = target.split(".")
        while parts:
            try:
                found = importlib.import_module(".".join(parts))
                for attribute in name.split("."):
                    found = getattr(found, attribute)
                return found
            except (ImportError, AttributeError):
                parts.pop()
        raise pickle.UnpicklingError(f"the checkpoint needs {module}.{name}, and ember has "
                                     f"no {target}.{name}")

    def persistent_load(self, pid):
        return self._loader.persistent_load(pid)


class _HeaderUnpickler(pickle.Unpickler):
    """For the small pickles around a legacy checkpoint's object (numbers, a dict, a list of
    keys): no global at all may appear there."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"a checkpoint header names {module}.{name}; this is a "
                                     "pickle, but not a torch checkpoint")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("unexpected persistent id in a checkpoint header")


def _unpickle_plain(f):
    return _HeaderUnpickler(f).load()


# ----------------------------------------------------------------------------------------------
# loading: the two container formats


class _ZipArchive:
    """The records of a torch zip archive, read through `zipfile` (which copes with ZIP64 and
    with the data descriptors miniz writes)."""

    def __init__(self, f):
        self.file = f
        self.zip = zipfile.ZipFile(f)
        names = self.zip.namelist()
        pkl = [n for n in names if n.endswith("data.pkl") and n.count("/") == 1]
        if not pkl:
            raise RuntimeError("it is a zip archive without a data.pkl record, so not a "
                               "torch.save checkpoint (a TorchScript archive or another zip?)")
        self.prefix = pkl[0][:-len("data.pkl")]

    def has(self, name):
        return self.prefix + name in self.zip.NameToInfo

    def read(self, name):
        return self.zip.read(self.prefix + name)

    def info(self, name):
        try:
            return self.zip.getinfo(self.prefix + name)
        except KeyError:
            raise RuntimeError(f"the archive has no record {self.prefix + name}") from None

    def data_offset(self, info):
        """Where a record's bytes start in the file (after its local header)."""
        self.file.seek(info.header_offset)
        header = self.file.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"bad local header for {info.filename}")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_length + extra_length

    def storage_reader(self, mapped):
        """(key, nbytes) -> a writable host uint8 array with the record's bytes: read into
        memory, or with `mapped` a copy-on-write map of the record (tensors may be written
        to, the file never is: torch's MAP_PRIVATE)."""
        def read(key, nbytes):
            info = self.info(f"data/{key}")
            if info.file_size != nbytes:
                raise RuntimeError(f"record data/{key} holds {info.file_size} bytes, but its "
                                   f"tensors need {nbytes}")
            if info.compress_type != zipfile.ZIP_STORED:
                return np.frombuffer(bytearray(self.zip.read(info)), dtype=np.uint8)
            start = self.data_offset(info)
            if mapped and nbytes:
                # one map per record, so each storage is its own allocation (allocation_of)
                return np.memmap(self.file, dtype=np.uint8, mode="c", offset=start,
                                 shape=(nbytes,)).view(np.ndarray)
            return _read_exactly(self.file, start, nbytes, f"record data/{key}")
        return read


def _read_exactly(f, start, nbytes, what):
    buffer = np.empty(nbytes, dtype=np.uint8)
    view = memoryview(buffer)
    f.seek(start)
    got = 0
    while got < nbytes:
        if hasattr(f, "readinto"):
            n = f.readinto(view[got:])
        else:  # a minimal file-like object: read() and copy
            chunk = f.read(nbytes - got)
            n = len(chunk)
            view[got:got + n] = chunk
        if not n:
            raise RuntimeError(f"{what} is cut short: {got} of {nbytes} bytes")
        got += n
    return buffer


def _load_zip(f, name, map_location, weights_only, mmap, pickle_args):
    archive = _ZipArchive(f)
    if mmap:
        try:
            f.fileno()
        except (AttributeError, OSError):  # io.UnsupportedOperation is an OSError
            raise RuntimeError(f"mmap=True needs a file on disk, not {type(f).__name__}") \
                from None
    byteorder = "little"
    if archive.has("byteorder"):
        byteorder = archive.read("byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"unknown byte order {byteorder!r}")
    loader = _Loader(archive.storage_reader(mmap), map_location, byteorder)
    result = _Unpickler(io.BytesIO(archive.read("data.pkl")), loader, weights_only,
                        **pickle_args).load()
    loader.finish()
    return result


def _load_legacy(f, name, map_location, weights_only, mmap, pickle_args):
    if mmap:
        raise RuntimeError("mmap=True only works with zip checkpoints; this is the legacy "
                           "format (torch.save(..., _use_new_zipfile_serialization=False))")
    if _unpickle_plain(f) != MAGIC_NUMBER:
        raise RuntimeError("it is a pickle but not a torch checkpoint (invalid magic number)")
    version = _unpickle_plain(f)
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"unsupported legacy protocol version {version!r}")
    system = _unpickle_plain(f)
    little = not isinstance(system, dict) or system.get("little_endian", True)
    here = f.tell()
    file_size = f.seek(0, io.SEEK_END)
    f.seek(here)
    pending = {}

    def allocate(key, nbytes):  # the bytes follow the pickle: filled in below
        if nbytes > file_size:
            raise RuntimeError(f"storage {key} claims {nbytes} bytes, more than the file holds")
        pending[key] = np.empty(nbytes, dtype=np.uint8)
        return pending[key]

    loader = _Loader(allocate, map_location, "little" if little else "big")
    result = _Unpickler(f, loader, weights_only, **pickle_args).load()
    keys = _unpickle_plain(f)
    if not isinstance(keys, list):
        raise RuntimeError("the list of storage keys is missing")
    position = f.tell()
    for key in map(_text, keys):
        if key not in pending:
            raise RuntimeError(f"storage {key} is listed but no tensor uses it")
        buffer = pending[key]
        count = struct.unpack("<q", _read_exactly(f, position, 8, "a storage size").tobytes())[0]
        if count * loader.records[key].dtype.itemsize != buffer.size:
            raise RuntimeError(f"storage {key}: the file holds {count} elements, the pickle "
                               "expects a different size")
        buffer[:] = _read_exactly(f, position + 8, buffer.size, f"storage {key}")
        position += 8 + buffer.size
    loader.finish()
    return result


def _file_kind(f):
    start = f.tell()
    head = f.read(512)
    f.seek(start)
    if not head:
        return "empty"
    if head[:2] == b"PK":
        return "zip"
    if head[:1] == b"\x80":
        return "legacy"
    if head[257:262] == b"ustar":
        return "tar"
    return "unknown"


_CORRUPTION = (EOFError, zipfile.BadZipFile, zlib.error, struct.error, ValueError, KeyError,
               IndexError, AttributeError, pickle.UnpicklingError, RuntimeError, OSError)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=False,
         **pickle_load_args):
    """Load an object saved by `ember.save` or `torch.save` (zip or legacy format).

    weights_only   True (the default, as in torch): only tensors, containers, numbers,
                   strings and a few safe types are unpickled; any other global raises
                   WeightsOnlyUnpicklingError before it is imported. False loads anything,
                   with torch's classes replaced by ember's (torch.nn.X -> ember.nn.X).
    map_location   None (where they were saved), 'cpu', a device, a dict {saved: target}, or
                   a callable (storage, location) -> storage or None.
    mmap           map zip records into memory instead of reading them (copy-on-write)."""
    if pickle_module not in (None, pickle):
        raise NotImplementedError("ember.load unpickles with its own restricted unpickler; "
                                  "pickle_module is not supported")
    weights_only = True if weights_only is None else weights_only
    if _is_path(f):
        with open(f, "rb") as opened:
            return _load_file(opened, os.fspath(f), map_location, weights_only, mmap,
                              pickle_load_args)
    name = getattr(f, "name", None) or type(f).__name__
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_file(f, str(name), map_location, weights_only, mmap, pickle_load_args)


def _load_file(f, name, map_location, weights_only, mmap, pickle_args):
    kind = _file_kind(f)
    if kind == "empty":
        raise RuntimeError(f"ember.load: '{name}' is empty (0 bytes), not a checkpoint")
    if kind == "tar":
        raise NotImplementedError(f"ember.load: '{name}' is a tar checkpoint (PyTorch < 0.4), "
                                  "which ember cannot read")
    if kind == "unknown":
        raise RuntimeError(f"ember.load: '{name}' is not a checkpoint: it is neither a zip "
                           "archive (torch.save) nor a pickle (legacy torch.save)")
    reader = _load_zip if kind == "zip" else _load_legacy
    try:
        return reader(f, name, map_location, weights_only, mmap, pickle_args)
    except (WeightsOnlyUnpicklingError, NotImplementedError):
        raise
    except _CORRUPTION as e:
        what = "zip" if kind == "zip" else "legacy"
        message = str(e) or type(e).__name__
        if isinstance(e, EOFError):
            message = "the file ends early (truncated?)"
        raise RuntimeError(f"ember.load: '{name}' ({what} checkpoint): {message}") from e


# ----------------------------------------------------------------------------------------------
# user-allowed globals for weights_only loading (torch.serialization's API)


def _qualified(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals):
    """Allow these classes/functions in `load(weights_only=True)`. Items are objects or
    (object, "module.name") pairs for objects pickled under another name."""
    for item in safe_globals:
        if isinstance(item, tuple):
            obj, name = item
        else:
            obj, name = item, _qualified(item)
        _user_safe_globals[name] = obj


def get_safe_globals():
    """The objects `add_safe_globals` allowed for `load(weights_only=True)`."""
    return list(_user_safe_globals.values())


def clear_safe_globals():
    """Forget every object `add_safe_globals` allowed."""
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """`with safe_globals([...]):` allows the globals only inside the block."""
    saved = dict(_user_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe_globals.clear()
        _user_safe_globals.update(saved)


# ----------------------------------------------------------------------------------------------
# plain pickling of tensors (pickle.dumps, multiprocessing, copy.copy)


def reduce_tensor(t):
    """Tensor.__reduce_ex__. The state names the host array owning the tensor's memory (the
    pickle memo writes each such array once) and where in it the tensor lies, plus the
    tensor's `_base`: tensors pickled together that shared memory share it again after
    unpickling (CUDA tensors each bring their own copy). copy.copy shares memory, as torch's
    does."""
    return (_new_tensor, (type(t),), _tensor_state(t))


def _tensor_state(t):
    owner, block = allocation_of(t._data)
    if t.device.type != "cpu" or not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        block = span_of(t._data).view(np.uint8)
        owner = _backend.transfer(block, CPU)
    return {"memory": owner, "offset": t.data_ptr() - _address(block) if t.numel() else 0,
            "shape": tuple(t.shape), "strides": t._data.strides, "dtype": t.dtype.name,
            "device": str(t.device), "base": t._base, "requires_grad": t.requires_grad,
            "grad": t.grad, "attributes": _attributes(t)}


def _new_tensor(cls):
    """An empty tensor of class `cls`; `set_tensor_state` fills it in."""
    return cls._make(np.empty(0, dtype=np.float32))


def set_tensor_state(t, state):
    """Tensor.__setstate__: the inverse of `_tensor_state`."""
    if not isinstance(state, dict) or "memory" not in state:
        raise TypeError("Tensor.__setstate__ expects the state written by Tensor.__reduce_ex__")
    dev = device(state["device"])
    dev = CPU if dev.type == "cpu" else dev
    dtype = getattr(dt, state["dtype"])
    block = span_of(state["memory"]).view(np.uint8)
    if dev.type != "cpu":
        block = _backend.transfer(block, dev)
    t._data = _strided(_backend.namespace(dev), block, state["offset"], dtype.np,
                       tuple(state["shape"]), tuple(state["strides"]))
    t._dtype, t._device = dtype, dev
    if state["base"] is not None:
        _share_base(t, state["base"])
    t._requires_grad = bool(state["requires_grad"])
    if state["grad"] is not None:
        t.grad = state["grad"]
    t.__dict__.update(state["attributes"])


def reduce_parameter(p):
    """nn.Parameter.__reduce_ex__: the same as a tensor's (the class travels in the tuple)."""
    return reduce_tensor(p)

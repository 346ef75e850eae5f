"""torchvision.datasets.utils: downloading (urllib, md5-checked), archive extraction and
small argument checks shared by the datasets.

A download that cannot reach the network raises RuntimeError naming the URL and the file it
would have written, so the user can fetch it elsewhere and put it there.

Read next: `vision.py` (the datasets' base class), then `mnist.py`.
"""
import bz2
import gzip
import hashlib
import lzma
import os
import pathlib
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url",
           "download_and_extract_archive", "extract_archive", "list_dir", "list_files",
           "verify_str_arg", "iterable_to_str"]

USER_AGENT = "pytorch/vision"


def calculate_md5(fpath, chunk_size=1024 * 1024):
    """The MD5 hex digest of a file."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath, md5, **kwargs):
    """Whether the file's MD5 is `md5`."""
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath, md5=None):
    """The file exists and, when md5 is given, has that checksum."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


def _urlretrieve(url, filename, chunk_size=1024 * 32):
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    partial = f"{filename}.partial"
    try:
        with urllib.request.urlopen(request, timeout=60) as response, \
                open(partial, "wb") as out:
            for chunk in iter(lambda: response.read(chunk_size), b""):
                out.write(chunk)
        os.replace(partial, filename)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def download_url(url, root, filename=None, md5=None, max_redirect_hops=3):
    """Download `url` to root/filename unless a file with the right MD5 is already there.
    (urllib follows redirects itself; max_redirect_hops is accepted for torchvision's
    signature.)"""
    root = os.path.expanduser(root)
    fpath = os.fspath(os.path.join(root, filename or os.path.basename(url)))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    try:
        try:
            _urlretrieve(url, fpath)
        except (urllib.error.URLError, OSError):
            if not url.startswith("https"):
                raise
            _urlretrieve(url.replace("https:", "http:", 1), fpath)
    except (urllib.error.URLError, OSError) as e:
        raise RuntimeError(f"could not download {url} ({e}). Without a network, download it "
                           f"elsewhere and put it at {fpath}") from None
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def list_dir(root, prefix=False):
    """The folders directly inside root (as paths when prefix=True)."""
    root = os.path.expanduser(root)
    names = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in names] if prefix else names


def list_files(root, suffix, prefix=False):
    """The files directly inside root whose names end with suffix."""
    root = os.path.expanduser(root)
    names = [p for p in os.listdir(root)
             if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, d) for d in names] if prefix else names


_ARCHIVES = (".tar", ".zip")
_COMPRESSORS = {".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_ALIASES = {".tbz": (".tar", ".bz2"), ".tbz2": (".tar", ".bz2"), ".tgz": (".tar", ".gz")}


def _detect_file_type(file):
    """(suffix, archive type or None, compression or None) from the file name."""
    suffixes = pathlib.Path(file).suffixes
    if not suffixes:
        raise RuntimeError(f"File '{file}' has no suffixes that could be used to detect the "
                           "archive type and compression.")
    suffix = suffixes[-1]
    if suffix in _ALIASES:
        return (suffix, *_ALIASES[suffix])
    if suffix in _ARCHIVES:
        return suffix, suffix, None
    if suffix in _COMPRESSORS:
        if len(suffixes) > 1 and suffixes[-2] in _ARCHIVES:
            return suffixes[-2] + suffix, suffixes[-2], suffix
        return suffix, None, suffix
    known = sorted(set(_ALIASES) | set(_ARCHIVES) | set(_COMPRESSORS))
    raise RuntimeError(f"Unknown compression or archive type: '{suffix}'.\nKnown suffixes are: "
                       f"'{known}'.")


def _extract(from_path, to_path, archive, compression):
    if archive == ".tar":
        with tarfile.open(from_path, f"r:{compression[1:]}" if compression else "r") as tar:
            tar.extractall(to_path, filter="data")
        return
    methods = {".bz2": zipfile.ZIP_BZIP2, ".xz": zipfile.ZIP_LZMA}
    with zipfile.ZipFile(from_path, "r", compression=methods.get(compression,
                                                               zipfile.ZIP_STORED)) as z:
        z.extractall(to_path)


def _decompress(from_path, to_path=None, remove_finished=False):
    suffix, archive, compression = _detect_file_type(from_path)
    if not compression:
        raise RuntimeError(f"Couldn't detect a compression from suffix {suffix}.")
    if to_path is None:
        to_path = str(from_path).replace(suffix, archive if archive is not None else "")
    with _COMPRESSORS[compression](from_path, "rb") as src, open(to_path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    if remove_finished:
        os.remove(from_path)
    return pathlib.Path(to_path)


def extract_archive(from_path, to_path=None, remove_finished=False):
    """Unpack a .tar[.gz|.bz2|.xz], .tgz, .zip, or decompress a lone .gz/.bz2/.xz file,
    into to_path (the archive's folder by default); returns to_path."""
    to_path = os.path.dirname(from_path) if to_path is None else to_path
    suffix, archive, compression = _detect_file_type(from_path)
    if not archive:
        target = os.path.join(to_path, os.path.basename(from_path).replace(suffix, ""))
        return str(_decompress(from_path, target, remove_finished=remove_finished))
    _extract(from_path, to_path, archive, compression)
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url, download_root, extract_root=None, filename=None,
                                 md5=None, remove_finished=False):
    """download_url, then extract_archive into extract_root (download_root by default)."""
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


def iterable_to_str(iterable):
    """'a', 'b', 'c' (for error messages)."""
    return "'" + "', '".join(str(item) for item in iterable) + "'"


def verify_str_arg(value, arg=None, valid_values=None, custom_msg=None):
    """`value` if it is a string among valid_values, else ValueError (torchvision's text)."""
    if not isinstance(value, str):
        msg = "Expected type str" + (f" for argument {arg}" if arg is not None else "") + \
            f", but got type {type(value)}."
        raise ValueError(msg)
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is not None:
        raise ValueError(custom_msg)
    raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are "
                     f"{{{iterable_to_str(valid_values)}}}.")

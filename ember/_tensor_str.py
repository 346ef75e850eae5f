"""Printing tensors exactly as torch does: `tensor([1.5000, 2.0000], requires_grad=True)`.

How a tensor becomes text:

1. **Summary.** A tensor with more than `threshold` elements is *summarised*: along every dim
   longer than `2 * edgeitems` only the first and last `edgeitems` entries are shown, with
   `...` between them. Only those elements are read (and copied from a GPU).
2. **One format for all elements.** `_Format` looks at the values that will be shown (the
   summary) and picks one style and one column width, so columns line up:
     - integers and bools: `str(value)`;
     - floats whose finite nonzero values are all integers: `1.`, `-3.` (torch's "int mode");
     - other floats: fixed point with `precision` digits (`1.5000`), or scientific notation
       (`1.5000e-05`) when the largest magnitude is > 1e8, or more than 1000 times the
       smallest, or (not in int mode) the smallest is < 1e-4. `set_printoptions(sci_mode=)`
       forces the choice. nan, inf and zeros do not take part in the decision.
3. **Layout.** Rows of a 1-d tensor wrap to `linewidth`; each nesting level indents by one
   space, and n-d slices are separated by n-1 newlines (a blank line between matrices).
4. **Suffixes.** `device=`, `dtype=` (unless it is the default float dtype, int64 or bool),
   `size=` for empty tensors, then `grad_fn=<...>` or `requires_grad=True`, wrapped to a new
   line when the last line would pass `linewidth`.

Complex values are `real+imagj`, each part with a format of its own (chosen from all the real
parts, and from all the imaginary parts): `tensor([ 1.0000+2.j, -3.5000-1.j])`.

float16/bfloat16 values are shown through float32 (exact), as torch does. Read next:
`_random.py`.
"""
import contextlib
import dataclasses
import math

import numpy as np

from . import _backend
from . import _dtype as dt
from ._device import CPU
from ._tensor import Tensor

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "PRINT_OPTS", "tensor_repr"]


@dataclasses.dataclass
class PrintOptions:
    """What `set_printoptions` changes (torch keeps the same record in `_tensor_str`)."""

    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None  # None: decide per tensor; True/False: always / never scientific


PRINT_OPTS = PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Change how tensors print (torch.set_printoptions).

    A `profile` ('default', 'short', 'full') sets precision, threshold, edgeitems and linewidth
    first; explicit arguments then override it. `sci_mode` is always set, so leaving it out
    returns to automatic choice (as in torch)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"unknown print profile {profile!r}; expected one of "
                             f"{sorted(_PROFILES)}")
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth)
    for name, value in given.items():
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict (torch._tensor_str.get_printoptions)."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change print options: `with printoptions(precision=2): print(t)`."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# ----------------------------------------------------------------------------------------------
# 1. summary


def _summary(array, edge):
    """The elements a summarised print shows: along every dim longer than 2 * edge, only the
    first and last `edge` entries (taken on the array's own device, before any transfer)."""
    xp = _backend.array_namespace(array)
    for axis, n in enumerate(array.shape):
        if n > 2 * edge:
            before = (slice(None),) * axis
            array = xp.concatenate([array[before + (slice(0, edge),)],
                                    array[before + (slice(n - edge, n),)]], axis=axis)
    return array


def _shown(n, summarize):
    """Rows of the summary array shown for a dim of length n, with None where "..." goes."""
    edge = PRINT_OPTS.edgeitems
    if not summarize or n <= 2 * edge:
        return list(range(n))
    return list(range(edge)) + [None] + list(range(edge, 2 * edge))


# ----------------------------------------------------------------------------------------------
# 2. one format for all elements


class _Format:
    """Style and width for every element of one tensor (see the module docstring)."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not floating:
            texts = [str(v) for v in values.ravel().tolist()]
            self.width = max([1] + [len(s) for s in texts])
            return
        flat = values.ravel()
        shown = flat[np.isfinite(flat) & (flat != 0)]
        if shown.size == 0:
            return  # only zeros, nan and inf: torch keeps int mode and ignores sci_mode
        magnitude = np.abs(shown.astype(np.float64))
        largest, smallest = magnitude.max(), magnitude.min()
        self.int_mode = bool(np.all(shown == np.ceil(shown)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or (
                not self.int_mode and smallest < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        numbers = shown.tolist()
        if self.sci_mode:
            self.width = max(len(self._sci(v)) for v in numbers)
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in numbers)  # +1 for the trailing "."
        else:
            self.width = max(len(self._fixed(v)) for v in numbers)

    @staticmethod
    def _sci(v):
        return f"{v:.{PRINT_OPTS.precision}e}"

    @staticmethod
    def _fixed(v):
        return f"{v:.{PRINT_OPTS.precision}f}"

    def __call__(self, v):
        """One element (a Python number) as text, right-aligned to the common width."""
        if not self.floating:
            text = str(v)
        elif self.sci_mode:
            text = self._sci(v)
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = self._fixed(v)
        return text.rjust(self.width)


class _ComplexFormat:
    """`real+imagj`: the real part in the real parts' format, the imaginary part in the
    imaginary parts' format without its padding, joined by its sign (`+` for +0.0 and -0.0)."""

    def __init__(self, values):
        self.real = _Format(values.real, True)
        self.imag = _Format(values.imag, True)
        self.width = self.real.width + self.imag.width + 1  # + the "j" (torch's measure)

    def __call__(self, v):
        imag = (self.imag(v.imag) + "j").lstrip()
        return self.real(v.real) + (imag if imag[0] in "+-" else "+" + imag)


# ----------------------------------------------------------------------------------------------
# 3. layout (over the summary array; `shape` is the tensor's, which says where "..." goes)


def _row(array, n, indent, summarize, fmt):
    """A 1-d array as `[a, b, c,\n d]`, wrapped so each line fits the line width."""
    per_line = max(1, (PRINT_OPTS.linewidth - indent) // (fmt.width + 2))
    if summarize and PRINT_OPTS.edgeitems == 0:
        items = ["..."]
    else:
        values = array.tolist()
        items = [" ..." if i is None else fmt(values[i]) for i in _shown(n, summarize)]
    lines = [", ".join(items[k:k + per_line]) for k in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(array, shape, indent, summarize, fmt):
    if not shape:
        return fmt(array.item())
    if len(shape) == 1:
        return _row(array, shape[0], indent, summarize, fmt)
    parts = ["..." if i is None else _nested(array[i], shape[1:], indent + 1, summarize, fmt)
             for i in _shown(shape[0], summarize)]
    return "[" + ("," + "\n" * (len(shape) - 1) + " " * (indent + 1)).join(parts) + "]"


def _body(t, indent):
    """The bracketed values of a non-empty tensor."""
    summarize = t.numel() > PRINT_OPTS.threshold
    array = _summary(t._data, PRINT_OPTS.edgeitems) if summarize else t._data
    array = _backend.transfer(array, CPU)
    if t.dtype in (dt.float16, dt.bfloat16):
        array = array.astype(np.float32)  # exact; Python formats float32 values the same way
    if t.dtype.is_complex:
        fmt = _ComplexFormat(array)
    else:
        fmt = _Format(array, t.dtype.is_floating_point)
    return _nested(array, tuple(t.shape), indent, summarize, fmt)


# ----------------------------------------------------------------------------------------------
# 4. the whole repr


def tensor_repr(t, tensor_contents=None):
    """`repr(t)`: `tensor(` + values + suffixes + `)` (a subclass prints its own name)."""
    plain = type(t) is Tensor or (t._is_param and type(t).__mro__[1] is Tensor)  # or Parameter
    prefix = "tensor(" if plain else type(t).__name__ + "("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device.type}:{t.device.index or 0}'")
    if t.numel() == 0:
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not dt.get_default_dtype():  # nothing to infer int64 from when empty
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if PRINT_OPTS.edgeitems == 0:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype not in (dt.get_default_dtype(), _default_complex(), dt.int64, dt.bool):
            suffixes.append(f"dtype={t.dtype}")
        body = _body(t, indent) if tensor_contents is None else None
    if tensor_contents is not None:
        body = tensor_contents
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(prefix + body, suffixes, indent)


def _default_complex():
    """The complex dtype torch leaves unnamed: complex128 under a float64 default, else
    complex64."""
    return dt.complex128 if dt.get_default_dtype() is dt.float64 else dt.complex64


def _with_suffixes(text, suffixes, indent):
    """Append `, suffix` items, starting a new line when one would pass the line width."""
    pieces = [text]
    # torch's measure of the last line (its length plus one, from rfind's -1)
    used = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if used + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            used = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            used += len(suffix) + 2
    return "".join(pieces) + ")"

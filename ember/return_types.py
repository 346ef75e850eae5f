"""Named tuples returned by ops with several results, as `torch.return_types`.

`x.max(dim)` returns `ember.return_types.max(values, indices)`: a tuple (so `v, i = x.max(0)`
and `r[0]` work) whose fields also have names (`r.values`, `r.indices`). Each class is named
after its op, so `type(r).__name__ == "max"`, as in torch, and pickles by that name.

Read next: `ops/reduce.py`, which builds most of them.
"""
from collections import namedtuple

__all__ = ["max", "min", "aminmax", "median", "nanmedian", "mode", "kthvalue", "topk", "sort",
           "cummax", "cummin", "frexp"]


def _repr(self):
    """torch prints one field per line: `torch.return_types.max(\\nvalues=...,\\nindices=...)`."""
    fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
    return f"ember.return_types.{type(self).__name__}(\n{fields})"


def _structseq(name, fields):
    base = namedtuple(name, fields)
    doc = f"What `{name}` returns: a tuple `({', '.join(fields)})` whose fields have those names."
    cls = type(name, (base,), {"__slots__": (), "__repr__": _repr, "__module__": __name__,
                               "__doc__": doc, "n_fields": len(fields),
                               "n_sequence_fields": len(fields), "n_unnamed_fields": 0})
    cls.__qualname__ = name
    return cls


_VI = ("values", "indices")

# These names shadow builtins (max, min) inside this module only; the module uses neither.
max = _structseq("max", _VI)
min = _structseq("min", _VI)
aminmax = _structseq("aminmax", ("min", "max"))
median = _structseq("median", _VI)
nanmedian = _structseq("nanmedian", _VI)
mode = _structseq("mode", _VI)
kthvalue = _structseq("kthvalue", _VI)
topk = _structseq("topk", _VI)
sort = _structseq("sort", _VI)
cummax = _structseq("cummax", _VI)
cummin = _structseq("cummin", _VI)
frexp = _structseq("frexp", ("mantissa", "exponent"))

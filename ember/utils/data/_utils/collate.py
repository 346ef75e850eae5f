"""Collation: how a list of samples becomes a batch (torch.utils.data._utils.collate).

`default_collate` walks the structure of the first sample and batches alike leaves:

    tensors                 -> stacked along a new dim 0 (all must have the same shape)
    NumPy arrays            -> converted to tensors, then stacked
    NumPy scalars           -> one tensor of their dtype
    float / int / bool      -> a float64 / int64 / bool tensor
    str / bytes             -> left as a list
    Mapping                 -> the same kind of mapping, each key collated
    namedtuple              -> the same namedtuple, each field collated
    other sequences         -> transposed: a list (or same-type sequence) of collated columns

`collate(batch, collate_fn_map=...)` is the extensible form: the map sends a type (or a
tuple of types) to a function `fn(batch, *, collate_fn_map)`; containers recurse through it.
`default_convert` is what a loader with `batch_size=None` applies to each single sample:
NumPy arrays become tensors, containers are rebuilt, everything else is left alone.

Read next: fetch.py.
"""
import collections.abc
import copy
import re

import numpy as np

import ember

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

# NumPy dtype strings of text ('S', 'a', 'U') and Python objects ('O'): no tensor holds them
_STRING_OR_OBJECT = re.compile(r"[SaUO]")

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
          "lists; found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _rebuild(template, values):
    """A container like `template` holding `values` (a dict for mappings, else a list).

    A mutable container is shallow-copied and overwritten, so subclasses with extra state
    survive; an immutable one is rebuilt from its type. Types that cannot be rebuilt either
    way fall back to a plain dict or list (as torch does)."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        if isinstance(template, collections.abc.Mapping):
            return type(template)(values)
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(template)(values)
    except TypeError:
        return values


# ----------------------------------------------------------------------------------------------
# default_convert (batch_size=None)


def default_convert(data):
    """Turn NumPy arrays and scalars in one sample into tensors, recursing into containers.
    Tuples become lists (torch's backward-compatible quirk); namedtuples stay namedtuples."""
    if isinstance(data, ember.Tensor):
        return data
    kind = type(data)
    if kind.__module__ == "numpy" and kind.__name__ not in ("str_", "bytes_", "string_"):
        if isinstance(data, np.ndarray) and _STRING_OR_OBJECT.search(data.dtype.str):
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {key: default_convert(data[key]) for key in data})
    if _is_namedtuple(data):
        return kind(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data


# ----------------------------------------------------------------------------------------------
# collate: the leaves


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack along a new first dim (stack raises torch's "stack expects each tensor to be
    equal size" when shapes differ). Workers pickle the result to the main process, so no
    shared-memory output buffer is needed here (torch allocates one)."""
    return ember.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if _STRING_OR_OBJECT.search(batch[0].dtype.str):
        raise TypeError(_ERROR.format(batch[0].dtype))
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return ember.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """ints give int64; bools (an int subclass) give a bool tensor."""
    return ember.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    ember.Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


# ----------------------------------------------------------------------------------------------
# collate: the recursion


def _leaf_fn(elem, collate_fn_map):
    """The map's function for `elem`: an exact type match first, then the first isinstance."""
    if collate_fn_map is None:
        return None
    kind = type(elem)
    if kind in collate_fn_map:
        return collate_fn_map[kind]
    for types, fn in collate_fn_map.items():
        if isinstance(elem, types):
            return fn
    return None


def collate(batch, *, collate_fn_map=None):
    """Batch a list of samples whose structure is that of `batch[0]` (see the module doc).
    Leaves go to `collate_fn_map`; mappings, namedtuples and sequences recurse."""
    elem = batch[0]
    fn = _leaf_fn(elem, collate_fn_map)
    if fn is not None:
        return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild(elem, {key: collate([d[key] for d in batch],
                                            collate_fn_map=collate_fn_map) for key in elem})
    if _is_namedtuple(elem):
        return type(elem)(*(collate(column, collate_fn_map=collate_fn_map)
                            for column in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(column, collate_fn_map=collate_fn_map)
                   for column in zip(*batch)]
        # tuples give lists (torch's backward-compatible behaviour); other sequences keep type
        return columns if isinstance(elem, tuple) else _rebuild(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))


def default_collate(batch):
    """Batch a list of samples with the default rules (see the module doc)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)

"""`assert_close(actual, expected)`: torch.testing's comparison, with its messages.

Inputs are compared pairwise and recursively: tensors with tensors (also NumPy arrays with
NumPy arrays), Python numbers with numbers, bools with bools, sequences item by item, mappings
key by key. Tensors must agree in shape and, unless told otherwise, device, dtype and layout
(strides with `check_stride=True`); then values must satisfy
`|actual - expected| <= atol + rtol * |expected|` elementwise, NaNs only matching with
`equal_nan=True`. Tolerances default per dtype, as torch's:

    float16 (1e-3, 1e-5)  bfloat16 (1.6e-2, 1e-5)  float32 (1.3e-6, 1e-5)  float64 (1e-7, 1e-7)
    anything else (0, 0): an exact comparison, reported as "not equal"

A failure raises AssertionError; `msg` (a string, or a callable given the generated message)
replaces the message. Inputs no comparison handles raise TypeError.
"""
import math
from collections.abc import Mapping, Sequence

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor

__all__ = ["assert_close"]

_TOLERANCES = {dt.float16: (1e-3, 1e-5), dt.bfloat16: (1.6e-2, 1e-5),
               dt.float32: (1.3e-6, 1e-5), dt.float64: (1e-7, 1e-7)}


class _Failure(Exception):
    """A mismatch found somewhere inside the inputs (`where` says where, for nesting)."""

    def __init__(self, message, error=AssertionError):
        super().__init__(message)
        self.message = message
        self.error = error
        self.where = []


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless `actual` and `expected` are close (see the module
    docstring); the checks and defaults are torch.testing.assert_close's."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_stride=check_stride)
    try:
        _compare(actual, expected, options)
    except _Failure as failure:
        message = failure.message
        if failure.error is AssertionError:
            if failure.where:
                message += "\n\nThe failure occurred for item " + "".join(
                    f"[{key!r}]" for key in reversed(failure.where))
            if callable(msg):
                message = msg(message)
            elif msg is not None:
                message = msg
        raise failure.error(message) from None


def _compare(actual, expected, options):
    if isinstance(actual, (Tensor, np.ndarray)) or isinstance(expected, (Tensor, np.ndarray)):
        return _compare_tensors(actual, expected, options)
    if isinstance(actual, (bool, np.bool_)) and isinstance(expected, (bool, np.bool_)):
        if bool(actual) != bool(expected):
            raise _Failure(f"Booleans mismatch: {actual} is not {expected}")
        return None
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, options)
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        return _compare_mappings(actual, expected, options)
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(f"The length of the sequences mismatch: {len(actual)} != "
                           f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _nested(i, _compare, a, e, options)
        return None
    raise _no_pair(actual, expected)


def _no_pair(actual, expected):
    return _Failure(f"No comparison pair was able to handle inputs of type {_type(actual)} and "
                    f"{_type(expected)}.", TypeError)


def _type(x):
    """`<class 'ember.Tensor'>` for tensors (their public name, as torch prints its own)."""
    return "<class 'ember.Tensor'>" if type(x) is Tensor else str(type(x))


def _nested(key, compare, a, e, options):
    try:
        compare(a, e, options)
    except _Failure as failure:
        failure.where.append(key)
        raise


def _is_number(x):
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, bool)


def _is_sequence(x):
    return isinstance(x, Sequence) and not isinstance(x, str)


def _compare_mappings(actual, expected, options):
    if set(actual) != set(expected):
        missing = sorted(set(expected) - set(actual), key=repr)
        extra = sorted(set(actual) - set(expected), key=repr)
        raise _Failure("The keys of the mappings do not match:\n"
                       f"Missing keys in the actual mapping: {missing}\n"
                       f"Additional keys in the actual mapping: {extra}")
    for key in expected:
        _nested(key, _compare, actual[key], expected[key], options)


def _compare_numbers(actual, expected, options):
    kind = complex if isinstance(actual, complex) or isinstance(expected, complex) else (
        float if isinstance(actual, (float, np.floating)) or
        isinstance(expected, (float, np.floating)) else int)
    rtol, atol = _tolerances(options, dt.float64 if kind is not int else None)
    a, e = kind(actual), kind(expected)
    if _number_close(a, e, rtol, atol, options["equal_nan"]):
        return
    abs_diff = abs(a - e)
    rel_diff = _ratio(abs_diff, abs(e))
    raise _Failure(_scalar_message(a, e, abs_diff, rel_diff, rtol, atol))


def _number_close(a, e, rtol, atol, equal_nan):
    if a == e:
        return True
    if isinstance(a, complex) or isinstance(e, complex):
        nan = (math.isnan(abs(a)), math.isnan(abs(e)))
    else:
        nan = (math.isnan(a), math.isnan(e))
    if any(nan):
        return equal_nan and all(nan)
    return abs(a - e) <= atol + rtol * abs(e)


def _ratio(diff, magnitude):
    if magnitude:
        return diff / magnitude
    return math.inf if diff else math.nan


def _tolerances(options, dtype):
    if options["rtol"] is not None:
        return options["rtol"], options["atol"]
    return _TOLERANCES.get(dtype, (0.0, 0.0))


def _scalar_message(a, e, abs_diff, rel_diff, rtol, atol):
    exact = rtol == 0 and atol == 0
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\n"
            f"Expected {e} but got {a}.\n"
            f"Absolute difference: {abs_diff}{_allowed(atol, exact)}\n"
            f"Relative difference: {rel_diff}{_allowed(rtol, exact)}")


def _allowed(tol, exact):
    return "" if exact else f" (up to {tol} allowed)"


def _as_tensor(x):
    if isinstance(x, np.ndarray):
        from .._creation import as_tensor

        return as_tensor(x)
    return x


def _compare_tensors(actual, expected, options):
    pair_ok = (isinstance(actual, Tensor) and isinstance(expected, Tensor)) or (
        isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray))
    if not pair_ok or (not options["allow_subclasses"] and type(actual) is not type(expected)):
        raise _no_pair(actual, expected)
    actual, expected = _as_tensor(actual).detach(), _as_tensor(expected).detach()
    _check_attribute("shape", actual.shape, expected.shape)
    if options["check_device"]:
        _check_attribute("device", actual.device, expected.device)
    if options["check_dtype"]:
        _check_attribute("dtype", actual.dtype, expected.dtype)
    if options["check_stride"]:
        _check_attribute("stride()", actual.stride(), expected.stride())
    if actual.device != expected.device:
        actual = actual.cpu()
        expected = expected.cpu()
    if actual.dtype is not expected.dtype:
        common = dt.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    _compare_values(actual, expected, options)


def _check_attribute(name, a, e):
    if a != e:
        raise _Failure(f"The values for attribute '{name}' do not match: {a} != {e}.")


def _compare_values(actual, expected, options):
    from ..ops.pointwise import isclose

    rtol, atol = _tolerances(options, actual.dtype)
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=options["equal_nan"])
    if bool(matches.all()):
        return
    if actual.dtype is dt.bool:
        actual, expected = actual.long(), expected.long()
    abs_diff = (actual - expected).abs()
    rel_diff = abs_diff / expected.abs()  # integers give float32, as in torch
    if actual.ndim == 0:
        raise _Failure(_scalar_message(actual.item(), expected.item(), abs_diff.item(),
                                       rel_diff.item(), rtol, atol))
    raise _Failure(_tensor_message(matches, abs_diff, rel_diff, rtol, atol))


def _tensor_message(matches, abs_diff, rel_diff, rtol, atol):
    exact = rtol == 0 and atol == 0
    total = matches.numel()
    mismatched = total - int(matches.sum().item())
    lines = [f"Tensor-likes are not {'equal' if exact else 'close'}!", "",
             f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"]
    for kind, diff, tol in (("absolute", abs_diff, atol), ("relative", rel_diff, rtol)):
        diff = diff.masked_fill(matches, 0)  # matched elements (equal infs: nan) do not count
        flat = diff.reshape(-1)
        index = int(flat.argmax().item())
        where = tuple(int(i) for i in np.unravel_index(index, tuple(diff.shape)))
        lines.append(f"Greatest {kind} difference: {flat[index].item()} at index {where}"
                     f"{_allowed(tol, exact)}")
    return "\n".join(lines)

"""`make_tensor(*shape, dtype, device)`: a tensor of random test values (torch.testing).

Values are uniform in [low, high): by default [-9, 9] for floating dtypes, integers from -9
(0 for unsigned) up to 10 (exclusive), and 0/1 for bool; `low`/`high` are clamped to what the
dtype holds. `exclude_zero` replaces zeros (by 1 for integers, the smallest normal number for
floats); `noncontiguous` returns a strided view of a twice-as-wide tensor, with the same values.
"""
import math

from .. import _dtype as dt

__all__ = ["make_tensor"]


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _bounds(dtype, low, high, default_low, default_high):
    for value, name in ((low, "low"), (high, "high")):
        if value is not None and isinstance(value, float) and math.isnan(value):
            raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    low = default_low if low is None else low
    high = default_high if high is None else high
    if low > high or (low == high and not dtype.is_floating_point):
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    info = dt.finfo(dtype) if dtype.is_floating_point else dt.iinfo(dtype)
    return max(low, info.min), min(high, info.max)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of `shape` filled with random values (see the module docstring)."""
    from .. import empty, rand, randint

    shape = _shape(shape)
    if dtype is dt.bool:
        result = randint(0, 2, shape, device=device).to(dt.bool)
    elif dtype.is_floating_point:
        low, high = _bounds(dtype, low, high, -9, 9)
        result = (rand(shape, device=device, dtype=dt.float64) * (high - low) + low).to(dtype)
    else:
        unsigned = dtype is dt.uint8
        low, high = _bounds(dtype, low, high, 0 if unsigned else -9, 10)
        result = randint(int(math.ceil(low)), int(math.ceil(high)), shape, device=device,
                         dtype=dtype)
    if exclude_zero:
        replacement = 1 if not dtype.is_floating_point else dt.finfo(dtype).tiny
        result = result.masked_fill(result == 0, replacement)
    if noncontiguous and result.numel() > 1:
        wide = empty(shape[:-1] + (2 * shape[-1],), dtype=dtype, device=device)
        wide[..., ::2] = result
        result = wide[..., ::2]
    if memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result

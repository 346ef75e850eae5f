"""Complex numbers: a complex tensor's parts (real, imag, angle, conj, view_as_real) and building
one (complex, polar, view_as_complex).

Complex is a dtype category (see `_dtype.py`), not a parallel set of ops: the arithmetic, exp,
matmul, sum ... of complex tensors are the ordinary ops, whose NumPy kernels take complex arrays
as they come. What complex numbers add to autograd is torch's convention for the gradient of
a complex input z = x + iy of a real loss L:

    grad z = dL/dx + i dL/dy

so a real parameter's gradient is the real part of its complex one (the engine takes it, see
`autograd/engine.py: _fit`), and for y = f(z) with f holomorphic the chain rule reads
`grad z = grad y * conj(f'(z))`: the rules of holomorphic ops conjugate their derivative
(`g * b.conj()` for mul, `g * out.conj()` for exp). On a real tensor `conj()` is the tensor
itself, so real graphs pay one attribute check. The rest are here: functions of z and conj(z)
together (abs, angle, real, imag, sgn) whose rules are derived by hand.

ember's `conj()` is eager: it returns a new tensor of conjugated values, where torch returns a
lazy view with a conjugate bit. Values, gradients and dtypes are the same; a conjugated tensor
does not share memory with its input, and `is_conj()` is always False (there is never a pending
conjugation to resolve), so `resolve_conj()` and `resolve_neg()` return their input.

`real` and `imag` are views (NumPy's `a.real` / `a.imag`): writing into them writes the complex
tensor, as in torch. `view_as_real` views the same memory as pairs of floats.

Read next: `reduce.py`.
"""
import numpy as np

from .. import _dtype as dt
from .._functorch import batch_rules
from .._tensor import Tensor
from ._op import LINEAR, defop, export
from .pointwise import _keep

_COMPLEX = dt.COMPLEX


# ----------------------------------------------------------------------------------------------
# conj: eager, so the conjugate and neg "bits" are never set


def _conj_kernel(xp, a):
    return xp.conj(a)


_conj = defop("conj", "none", _conj_kernel, lambda g: (conj(g),))
_conj_physical = defop("conj_physical", "none", _conj_kernel, lambda g: (conj(g),))


@export(method=True)
def conj(input):
    """The complex conjugate; a real tensor is returned as it is. Differs from torch: the result
    is a new tensor (torch's is a lazy view of `input` with its conjugate bit set)."""
    if input._dtype.category != _COMPLEX:
        return input
    return _conj(input)


@export(method=True)
def conj_physical(input):
    """The complex conjugate, computed now (in ember, so is `conj`); real input is returned."""
    if input._dtype.category != _COMPLEX:
        return input
    return _conj_physical(input)


@export(function=False, method=True)
def conj_physical_(self):
    """Conjugate in place (nothing to do for a real tensor)."""
    if self._dtype.category != _COMPLEX:
        return self
    return _conj_physical.inplace(self)


@export(method=True)
def resolve_conj(input):
    """`input` itself: ember never leaves a conjugation pending (see the module docstring)."""
    return input


@export(method=True)
def resolve_neg(input):
    """`input` itself: ember never leaves a negation pending."""
    return input


@export(method=True)
def is_conj(input):
    """False: ember's `conj()` conjugates at once, so no tensor carries torch's conjugate bit."""
    return False


@export(method=True)
def is_neg(input):
    """False: ember has no negative bit (torch sets it on `x.conj().imag`)."""
    return False


# ----------------------------------------------------------------------------------------------
# real and imag: views of one part; their gradients put g back into that part


_real = defop("real", "none", lambda xp, a: a.real, lambda g: (g * (1 + 0j),),
              view=True, node_name="SelectBackward0")
_imag = defop("imag", "none", lambda xp, a: a.imag, lambda g: (g * 1j,),
              view=True, node_name="SelectBackward0")


@export
def real(input):
    """The real part, as a view (writing into it writes `input`); a real tensor is its own real
    part."""
    if input._dtype.category != _COMPLEX:
        return input
    return _real(input)


@export
def imag(input):
    """The imaginary part, as a view; real tensors have none (RuntimeError, as torch)."""
    if input._dtype.category != _COMPLEX:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _imag(input)


def set_real(self, value):
    """`x.real = value`: copy `value` (a tensor or a number) into the real part."""
    real(self).copy_(_as_part(self, value))


def set_imag(self, value):
    """`x.imag = value`: copy `value` into the imaginary part."""
    imag(self).copy_(_as_part(self, value))


def _as_part(self, value):
    if isinstance(value, Tensor):
        return value
    from .._creation import tensor

    return tensor(value, dtype=self._dtype.to_real(), device=self._device)


# ----------------------------------------------------------------------------------------------
# angle


def _angle_kernel(xp, a):
    """arg(z) for complex z; for real x, pi where x < 0, else 0 (nan stays nan), in the default
    float dtype for integers."""
    if a.dtype.kind == "c":
        return xp.angle(a)
    if dt._BY_NUMPY[a.dtype].category < dt.FLOATING:
        a = a.astype(dt.get_default_dtype().np)
    zero = xp.zeros((), a.dtype)
    return xp.where(a < 0, a.dtype.type(np.pi), xp.where(xp.isnan(a), a, zero))


def _angle_rule(g, a):
    """d angle / d(re, im) = (-y, x) / |z|^2: as a complex gradient, g * i z / |z|^2 (0 at 0);
    a real input's angle is piecewise constant."""
    if a._dtype.category != _COMPLEX:
        return (g.new_zeros(g.shape),)
    r2 = a.real * a.real + a.imag * a.imag
    return (_keep(g * a * 1j / r2, r2 != 0),)


_angle = defop("angle", "none", _angle_kernel, _angle_rule)


@export(method=True)
def angle(input):
    """The argument (phase) of each element in radians; for real input pi or 0."""
    return _angle(input)


# ----------------------------------------------------------------------------------------------
# complex tensors as pairs of reals


def _view_as_real_kernel(xp, a):
    """Shape (..., 2) over the same bytes: a.real's strides plus one step of one float."""
    parts = a.real
    return xp.lib.stride_tricks.as_strided(parts, shape=a.shape + (2,),
                                           strides=parts.strides + (parts.itemsize,))


_view_as_real = defop("view_as_real", "none", _view_as_real_kernel,
                      lambda g: (view_as_complex(g.contiguous()),), view=True)


@export
def view_as_real(input):
    """A complex tensor's memory as real pairs: shape (..., 2), [..., 0] the real parts."""
    if input._dtype.category != _COMPLEX:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _view_as_real(input)


def _view_as_complex_kernel(xp, a):
    """The last dim (2 floats, contiguous) read as one complex number."""
    return a.view(dt._BY_NUMPY[a.dtype].to_complex().np)[..., 0]


_view_as_complex = defop("view_as_complex", "none", _view_as_complex_kernel,
                         lambda g: (view_as_real(g.contiguous()),), view=True)


@export
def view_as_complex(input):
    """Real pairs (a last dim of size 2, stride 1) viewed as complex numbers (shape [...])."""
    if input._dtype not in (dt.float32, dt.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {dt.scalar_name(input._dtype)}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view_as_complex(input)


def _check_parts(name, a, b):
    """torch.complex / torch.polar: two tensors of one float dtype."""
    for arg, x in (("real" if name == "complex" else "abs", a),
                   ("imag" if name == "complex" else "angle", b)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not "
                            f"{type(x).__name__}")
    if a._dtype not in (dt.float16, dt.float32, dt.float64) or a._dtype is not b._dtype:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dt.scalar_name(a._dtype)} and {dt.scalar_name(b._dtype)}")


def _complex_kernel(xp, a, b):
    """real + i imag, broadcast, built part by part (1j * inf would make a nan real part)."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = xp.empty(shape, dt._BY_NUMPY[a.dtype].to_complex().np)
    out.real = a
    out.imag = b
    return out


def _polar_kernel(xp, r, theta):
    return _complex_kernel(xp, r * xp.cos(theta), r * xp.sin(theta))


def _polar_rule(g, r, theta, out):
    """z = r e^(i theta): dL/dr = Re(conj(e^(i theta)) g), dL/dtheta = Im(conj(z) g)."""
    return ((g * polar(theta.new_ones(()), -theta)).real, (g * out.conj()).imag)


_complex = defop("complex", "none", _complex_kernel, lambda g: (g.real, g.imag))
_polar = defop("polar", "none", _polar_kernel, _polar_rule)


@export
def complex(real, imag):
    """A complex tensor from its real and imaginary parts (same float dtype, broadcast)."""
    _check_parts("complex", real, imag)
    return _complex(real, imag)


@export
def polar(abs, angle):
    """The complex tensor abs * (cos(angle) + i sin(angle))."""
    _check_parts("polar", abs, angle)
    return _polar(abs, angle)


# ----------------------------------------------------------------------------------------------
# forward mode and vmap (see ops/_op.py): conj, real, imag, the real/complex views and complex()
# are linear (over the reals); angle and polar take their tangent from their backward rules.
# All are elementwise, save the views, which add or drop the last dim.

for _op in (_conj, _conj_physical, _real, _imag, _view_as_real, _view_as_complex, _complex):
    _op.jvp(LINEAR)
for _op in (_conj, _conj_physical, _real, _imag, _angle, _complex, _polar):
    _op.batch(batch_rules.pointwise)
for _op in (_view_as_real, _view_as_complex):
    _op.batch(batch_rules.leading)
del _op

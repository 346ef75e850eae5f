"""Complex tensors beyond the op table (tests/specs/complex.py): dtypes and promotion, factories,
Python conversions, printing, real/imag/view_as_real views and writes through them, eager conj,
in-place ops, torch's refusals, autograd's convention at the edges, save/load with torch."""
import io
import warnings

import numpy as np
import pytest

import ember
from ember.autograd.gradcheck import GradcheckError

from .oracle import check, check_raises


def _torch():
    return pytest.importorskip("torch")


def _z(*shape, dtype=np.complex64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# ----------------------------------------------------------------------------------------------
# dtypes and promotion

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex32", "complex64", "complex128"]


def test_dtype_attributes_match_torch():
    t = _torch()
    for name in ("complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf"):
        e, tt = getattr(ember, name), getattr(t, name)
        assert e.is_complex == tt.is_complex and e.is_floating_point == tt.is_floating_point
        assert e.is_signed == tt.is_signed and e.itemsize == tt.itemsize
        assert str(e.to_real()).split(".")[1] == str(tt.to_real()).split(".")[1]
    for name in ("float16", "bfloat16", "float32", "float64", "complex64"):
        assert str(getattr(ember, name).to_complex()).split(".")[1] == \
            str(getattr(t, name).to_complex()).split(".")[1]
    assert ember.int64.to_real() is ember.int64
    check_raises(lambda m: m.int32.to_complex())


def test_promote_types_matches_torch():
    t = _torch()
    for a in DTYPES:
        for b in DTYPES:
            e = ember.promote_types(getattr(ember, a), getattr(ember, b))
            assert e.name == str(t.promote_types(getattr(t, a), getattr(t, b))).split(".")[1], \
                (a, b)


@pytest.mark.parametrize("fn", [
    lambda m: m.result_type(m.ones(2), 1j),
    lambda m: m.result_type(m.ones(2, dtype=m.float64), 1j),
    lambda m: m.result_type(m.ones(2, dtype=m.int32), 1j),
    lambda m: m.result_type(m.ones(2, dtype=m.bfloat16), 2j),
    lambda m: m.result_type(m.ones(2), m.tensor(1j, dtype=m.complex128)),
    lambda m: m.result_type(m.ones(2, dtype=m.complex64), m.tensor(1.0, dtype=m.float64)),
    lambda m: m.result_type(m.tensor(1, dtype=m.int8), 1.5j),
    lambda m: (m.ones(2) * 1j).dtype, lambda m: (m.ones(2, dtype=m.float64) + 1j).dtype,
    lambda m: (m.arange(3) * 1j).dtype, lambda m: (m.ones(2, dtype=m.complex64) * 2.5).dtype,
    lambda m: (m.ones(2, dtype=m.complex64) + m.ones(2, dtype=m.float64)).dtype,
    lambda m: m.tensor(1j).dtype, lambda m: m.tensor([1, 2.5j]).dtype,
    lambda m: m.tensor([[1, 2], [3j, 4]]).dtype, lambda m: m.full((2,), 1j).dtype,
    lambda m: m.can_cast(m.complex64, m.float64), lambda m: m.can_cast(m.float64, m.complex64),
])
def test_promotion_and_inference(fn):
    _torch()
    check(fn, [], grad=False)


def test_default_complex_follows_the_default_dtype():
    t = _torch()
    for lib in (ember, t):
        lib.set_default_dtype(lib.float64)
    try:
        check(lambda m: (m.tensor(1j).dtype, (m.arange(2) * 1j).dtype, m.tensor([1j]),
                         m.tensor([1j], dtype=m.complex64)), [], grad=False)
        assert repr(ember.tensor([1j])) == "tensor([0.+1.j])"
    finally:
        for lib in (ember, t):
            lib.set_default_dtype(lib.float32)


def test_finfo_of_complex_is_its_real_dtype():
    t = _torch()
    for name in ("complex64", "complex128"):
        e, tt = ember.finfo(getattr(ember, name)), t.finfo(getattr(t, name))
        assert (e.eps, e.max, e.min, e.tiny, e.resolution, e.bits, e.dtype) == \
            (tt.eps, tt.max, tt.min, tt.tiny, tt.resolution, tt.bits, tt.dtype)
    check_raises(lambda m: m.iinfo(m.complex64))


def test_complex32_is_refused_clearly():
    _torch()
    with pytest.raises(NotImplementedError, match="complex32"):
        ember.zeros(2, dtype=ember.chalf)
    with pytest.raises(NotImplementedError, match="complex32"):
        ember.ones(2, dtype=ember.float16) * 1j  # torch's result would be complex32
    assert ember.promote_types(ember.chalf, ember.float32) is ember.complex64


# ----------------------------------------------------------------------------------------------
# factories and conversions


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([1 + 2j, -3j]), lambda m: m.tensor(2 - 1j, dtype=m.complex128),
    lambda m: m.zeros(2, 3, dtype=m.cfloat), lambda m: m.ones(2, dtype=m.cdouble),
    lambda m: m.full((2, 2), 1 - 1j), lambda m: m.eye(2, dtype=m.complex64),
    lambda m: m.linspace(0, 1 + 1j, 5), lambda m: m.logspace(0, 1j, 3),
    lambda m: m.linspace(-1, 1, 4, dtype=m.complex128), lambda m: m.ones(3).cfloat(),
    lambda m: m.ones(3).to(m.complex128).cdouble().type().split(".")[1],
    lambda m: m.tensor([1 + 2j]).item(), lambda m: m.tensor([[1 + 2j, 3]]).tolist(),
    lambda m: complex(m.tensor(1.5 - 2j)), lambda m: float(m.tensor(1.5 + 0j)),
    lambda m: int(m.tensor(3 + 0j)), lambda m: bool(m.tensor(0j)),
    lambda m: m.is_complex(m.ones(2, dtype=m.complex64)), lambda m: m.ones(2).is_complex(),
    lambda m: m.zeros(2, dtype=m.complex64).element_size(),
    lambda m: m.zeros(2, dtype=m.complex64, requires_grad=True).requires_grad,
])
def test_factories_and_conversions(fn):
    _torch()
    check(fn, [], grad=False)


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([1 + 2j], dtype=m.float32),
    lambda m: m.full((2,), 1j, dtype=m.float32),
    lambda m: m.arange(3, dtype=m.complex64),
    lambda m: float(m.tensor(1 + 2j)),
    lambda m: int(m.tensor(1j)),
    lambda m: [0, 1][m.tensor(1 + 0j)],
    lambda m: m.zeros(2).fill_(1 + 2j),
])
def test_factory_errors_match_torch(fn):
    _torch()
    check_raises(fn)


def test_from_numpy_shares_memory():
    a = _z(3)
    z = ember.from_numpy(a)
    assert z.dtype is ember.complex64
    a[0] = 7j
    assert z[0].item() == 7j
    assert np.asarray(ember.tensor(_z(2, dtype=np.complex128))).dtype == np.complex128


# ----------------------------------------------------------------------------------------------
# printing


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([1 + 2j, -3.5 - 1j]), lambda m: m.tensor([1 + 2j, 3 - 1j]),
    lambda m: m.tensor([[1e-5 + 2j, 3e6 - 1j], [0, float("nan") + 1j * float("inf")]]),
    lambda m: m.tensor([1 + 2j], dtype=m.complex128), lambda m: m.tensor(1.5 - 2j),
    lambda m: m.zeros(0, dtype=m.complex64), lambda m: m.zeros(2, 0, dtype=m.complex128),
    lambda m: m.tensor([0.1 + 0j, -0.0 - 0.0j, 1000.123 + 1j]),
    lambda m: m.arange(2000.0).reshape(2, 1000) * (1 + 0.5j),
    lambda m: m.tensor([1 + 2j], requires_grad=True),
    lambda m: m.tensor([1 + 2j], requires_grad=True) * 2,
])
def test_printing_matches_torch(fn):
    t = _torch()
    text = repr(fn(ember)).replace("ember.", "torch.")
    assert text == repr(fn(t)).replace("0x", "0x")


# ----------------------------------------------------------------------------------------------
# views: real, imag, view_as_real, view_as_complex


def test_real_and_imag_are_writable_views():
    z = ember.from_numpy(_z(2, 3))
    before = z._version
    z.real[0, 0] = 5.0
    z.imag.mul_(2)
    assert z[0, 0].real.item() == 5.0 and z._version > before
    z.imag = ember.zeros(2, 3)
    assert ember.equal(z.imag, ember.zeros(2, 3))
    z.real = 1.5
    assert (z.real == 1.5).all()
    r = ember.view_as_real(z)
    r[1, 2, 1] = -4.0
    assert z[1, 2].item() == 1.5 - 4j
    back = ember.view_as_complex(r)
    assert back.data_ptr() == z.data_ptr() and ember.equal(back, z)


def test_views_against_torch():
    _torch()
    check(lambda m, z: (z.real.stride(), z.imag.storage_offset(), z.real.shape,
                        m.view_as_real(z).stride(), m.view_as_real(z[:, 1:]).storage_offset(),
                        z.view(m.float32).shape, z.view(m.float64).shape,
                        m.view_as_real(z).is_contiguous(), z.real.is_contiguous()),
          [_z(2, 3)], grad=False)


def test_in_place_writes_through_real_are_differentiable():
    _torch()

    def fn(m, z, w):
        y = z * 1
        y.real.mul_(w)
        y.imag.add_(w * w)
        return (y * y.conj()).real + y.abs()

    check(fn, [_z(4), np.random.default_rng(1).standard_normal(4).astype(np.float32)])


@pytest.mark.parametrize("fn", [
    lambda m: m.ones(3).imag,
    lambda m: m.view_as_real(m.ones(3)),
    lambda m: m.view_as_complex(m.ones(3)),
    lambda m: m.view_as_complex(m.ones(3, 2).t()),
    lambda m: m.view_as_complex(m.ones(8).as_strided((2, 2), (3, 1))),
    lambda m: m.view_as_complex(m.ones(5)[1:].reshape(2, 2)),
    lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)),
    lambda m: m.complex(m.ones(2), m.ones(2, dtype=m.float64)),
    lambda m: m.complex(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int64)),
    lambda m: m.polar(m.ones(2), m.ones(2, dtype=m.float64)),
])
def test_view_and_constructor_errors_match_torch(fn):
    _torch()
    check_raises(fn)


# ----------------------------------------------------------------------------------------------
# conj: eager (values as torch; the conjugate bit is never set)


def test_conj_is_eager():
    z = ember.from_numpy(_z(3))
    c = z.conj()
    assert not c.is_conj() and not ember.is_conj(c) and not c.imag.is_neg()
    assert c.resolve_conj() is c and c.resolve_neg() is c
    assert ember.equal(c.imag, -z.imag)
    x = ember.ones(2)
    assert x.conj() is x and x.conj_physical() is x and x.real is x
    y = z.clone()
    assert y.conj_physical_() is y and ember.equal(y, c)


def test_conj_values_against_torch():
    _torch()
    check(lambda m, z: (z.conj(), m.conj_physical(z), z.conj().resolve_conj(),
                        z.conj().imag.resolve_neg(), m.adjoint(z.reshape(2, 3)),
                        z.reshape(2, 3).mH, z.reshape(2, 3).H), [_z(6)])


# ----------------------------------------------------------------------------------------------
# in-place arithmetic and refusals


def test_in_place_arithmetic_against_torch():
    _torch()

    def fn(m, z, x):
        y = z * 1
        y.mul_(1j).add_(x).div_(2 - 1j).sub_(z, alpha=0.5j).pow_(2)
        return y

    check(fn, [_z(5), np.arange(5, dtype=np.float32)])


@pytest.mark.parametrize("fn", [
    lambda m, z: z < z, lambda m, z: z >= 0, lambda m, z: m.max(z), lambda m, z: z.max(0),
    lambda m, z: z.amax(), lambda m, z: m.argmax(z), lambda m, z: m.sort(z),
    lambda m, z: m.argsort(z), lambda m, z: m.topk(z, 2), lambda m, z: m.median(z),
    lambda m, z: z.cummax(0), lambda m, z: m.maximum(z, z), lambda m, z: z.clamp(0, 1),
    lambda m, z: z.floor(), lambda m, z: z.round(), lambda m, z: z.sign(),
    lambda m, z: m.relu(z), lambda m, z: z.erf(), lambda m, z: m.atan2(z, z),
    lambda m, z: z % 2, lambda m, z: z // 2, lambda m, z: m.fmod(z, 2),
    lambda m, z: z.abs_(), lambda m, z: m.isposinf(z), lambda m, z: m.signbit(z),
    lambda m, z: m.deg2rad(z), lambda m, z: m.heaviside(z, z), lambda m, z: m.nansum(z),
    lambda m, z: m.ones(5).add_(z), lambda m, z: m.ones(5, dtype=m.int64).mul_(z),
    lambda m, z: z.bitwise_not(), lambda m, z: m.logit(z), lambda m, z: m.unique(z),
    lambda m, z: m.add(m.ones(2), m.ones(2), alpha=1j), lambda m, z: m.hypot(z, z),
    lambda m, z: m.nn.functional.hardtanh(z), lambda m, z: m.nn.functional.relu6(z),
    lambda m, z: m.nn.functional.max_pool1d(z.reshape(1, 1, 5), 2),
    lambda m, z: m.nn.functional.softmax(z, 0), lambda m, z: m.nn.functional.gelu(z),
])
def test_refusals_match_torch(fn):
    _torch()
    check_raises(fn, [_z(5)])


@pytest.mark.parametrize("fn", [lambda m, a: m.linalg.svd(a), lambda m, a: m.linalg.qr(a),
                                lambda m, a: m.linalg.eigh(a), lambda m, a: m.linalg.slogdet(a),
                                lambda m, a: m.linalg.cholesky(a)])
def test_decompositions_of_complex_matrices_are_not_supported_yet(fn):
    with pytest.raises(NotImplementedError, match="complex"):
        fn(ember, ember.from_numpy(_z(3, 3)))


def test_casting_complex_to_real_warns_as_torch():
    z = ember.from_numpy(_z(3))
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        x = z.to(ember.float32)
    assert ember.equal(x, z.real)
    target = ember.zeros(3)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        target.copy_(z)
    assert ember.equal(target, z.real)


# ----------------------------------------------------------------------------------------------
# autograd at the edges


def test_real_leaf_of_a_complex_graph_gets_a_real_gradient():
    _torch()
    check(lambda m, x, z: ((x * z).exp() + x * 1j).abs().sum() + (x.cfloat() * z).real.sum(),
          [np.linspace(-1, 1, 4).astype(np.float32), _z(4)])


@pytest.mark.parametrize("fn", [
    lambda m: m.ones(2, dtype=m.complex64, requires_grad=True).sum().backward(),
    lambda m: (m.ones(2, dtype=m.complex64, requires_grad=True) * 2).backward(m.ones(2)),
])
def test_backward_errors_match_torch(fn):
    _torch()
    check_raises(fn)


def test_gradcheck_and_gradgradcheck_on_complex():
    z = ember.from_numpy(_z(3, dtype=np.complex128)).requires_grad_()
    w = ember.from_numpy(np.array([0.5, -1.0, 2.0])).requires_grad_()
    fn = lambda z, w: (z * w).sin() / (z.conj() + 2)  # noqa: E731
    assert ember.autograd.gradcheck(fn, [z, w])
    assert ember.autograd.gradcheck(fn, [z, w], fast_mode=True)
    assert ember.autograd.gradgradcheck(fn, [z, w])
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        ember.autograd.gradcheck(lambda z: _WrongConj.apply(z), [z])


class _WrongConj(ember.autograd.Function):
    """z * z with the rule torch's convention forbids: g * 2z instead of g * conj(2z)."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        return g * 2 * z


# ----------------------------------------------------------------------------------------------
# save / load


def test_save_and_load_interchange_with_torch(tmp_path):
    t = _torch()
    z = _z(2, 3)
    path = tmp_path / "z.pt"
    ember.save({"z": ember.from_numpy(z), "d": ember.from_numpy(z.astype(np.complex128)),
                "real": ember.from_numpy(z).real}, path)
    loaded = t.load(path)
    assert loaded["z"].dtype is t.complex64 and loaded["d"].dtype is t.complex128
    np.testing.assert_array_equal(loaded["z"].numpy(), z)
    np.testing.assert_array_equal(loaded["real"].numpy(), z.real)
    tz = t.from_numpy(z)
    t.save({"z": tz, "conj": tz.conj()}, path)
    back = ember.load(path)
    np.testing.assert_array_equal(np.asarray(back["z"]), z)
    np.testing.assert_array_equal(np.asarray(back["conj"]), z.conj())
    buffer = io.BytesIO()
    t.save(tz.conj().imag, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(np.asarray(ember.load(buffer)), -z.imag)


def test_warnings_stay_quiet_for_complex_math():
    z = ember.tensor([1e30 + 1e30j, 0j, -1 + 0j])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (z.log(), z.sqrt(), z.reciprocal(), z.exp(), z.sgn(), z / 0)

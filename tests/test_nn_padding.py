"""F.pad and the padding layers vs torch: every mode over 1-3 padded dims, torch's pad order
(last dim first), negative padding, unbatched and empty inputs, dtypes, errors, the layers'
repr, and the Conv layers' padding_mode (which pads with F.pad).
"""
import numpy as np
import pytest

import ember

from .oracle import check, check_raises

torch = pytest.importorskip("torch")

rng = np.random.default_rng(5)


def R(*shape):
    return rng.standard_normal(shape)


def both_precisions(fn, inputs):
    check(fn, [a.astype(np.float32) for a in inputs], grad=False)
    check(fn, [a.astype(np.float64) for a in inputs])


def pad(m):
    return m.nn.functional.pad


CONSTANT = [
    ((1, 2), (2, 3, 4)),
    ((1, 2, 3, 0), (2, 3, 4)),
    ((1, 1, 1, 1, 1, 1, 1, 1), (2, 3, 4, 5)),    # every dim, batch included
    ((-1, 2, 0, -2), (2, 3, 4, 5)),              # negative pads crop
    ((-2, -2), (2, 3, 4)),                       # cropped to nothing
    ((0, 0, 0, 0, 0, 0, -1, 0), (2, 3, 4, 5)),
    ((2, 1), (0, 3, 4)),                         # empty batch
    ((1, 2), (2, 3, 0)),                         # padding an empty dim
    ((1, 2), (5,)),
]


@pytest.mark.parametrize("pads,shape", CONSTANT)
def test_constant(pads, shape):
    both_precisions(lambda m, x: pad(m)(x, pads, value=1.5), [R(*shape)])
    both_precisions(lambda m, x: pad(m)(x, pads), [R(*shape)])


def test_constant_keeps_dtype_and_casts_value():
    x = rng.integers(0, 9, (2, 4)).astype(np.int64)
    check(lambda m, x: pad(m)(x, (1, 1), value=2.7), [x])
    check(lambda m, x: pad(m)(x > 4, (1, 1), value=1), [x])
    check(lambda m, x: m.constant_pad_nd(x, (1, 2), 3), [x])
    check(lambda m, x: pad(m)(x, [1, 1], mode="constant", value=None), [x])


GATHER = [
    ((2, 3), (2, 3, 5)),
    ((2, 3), (3, 5)),                            # unbatched
    ((1, 2, 3, 1), (2, 3, 5, 6)),
    ((1, 2, 3, 1), (3, 5, 6)),
    ((1, 2, 1, 0, 2, 1), (1, 2, 3, 4, 5)),
    ((1, 2, 1, 0, 2, 1), (2, 3, 4, 5)),
    ((4, 4), (1, 2, 5)),                         # pad = size - 1, the most reflect allows
    ((-1, 3), (2, 3, 5)),                        # negative pads
    ((3, -2, -1, 2), (2, 3, 5, 5)),
    ((-2, -1), (2, 3, 5)),
    ((1, 1), (0, 2, 4)),                         # empty batch
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("pads,shape", GATHER)
def test_gather_modes(mode, pads, shape):
    both_precisions(lambda m, x: pad(m)(x, pads, mode=mode), [R(*shape)])


@pytest.mark.parametrize("pads", [(5, 5), (5, 0), (-2, 3), (3, -2), (-4, 1)])
def test_circular_wraps_at_most_once(pads):
    both_precisions(lambda m, x: pad(m)(x, pads, mode="circular"), [R(2, 3, 5)])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_gather_modes_on_integers(mode):
    x = rng.integers(0, 9, (2, 3, 5)).astype(np.int64)
    check(lambda m, x: pad(m)(x, (2, 1), mode=mode), [x])


def test_circular_on_bool():
    x = rng.integers(0, 2, (2, 3, 5)).astype(bool)
    check(lambda m, x: pad(m)(x, (2, 1), mode="circular"), [x])


def test_zero_value_is_accepted_with_other_modes():
    both_precisions(lambda m, x: pad(m)(x, (1, 1), mode="reflect", value=0.0), [R(2, 3, 4)])


def test_gradcheck_and_gradgradcheck():
    x = ember.from_numpy(R(1, 2, 4, 5)).requires_grad_()
    for mode, pads in (("constant", (1, -1, 2, 0)), ("reflect", (2, 1, 3, 1)),
                       ("replicate", (2, 3, 1, 0)), ("circular", (-1, 3, 2, 2))):
        def fn(x):
            return ember.nn.functional.pad(x, pads, mode=mode)
        assert ember.autograd.gradcheck(fn, [x])
        assert ember.autograd.gradgradcheck(fn, [x])


ERRORS = [
    lambda m, x: pad(m)(x, (1, 2, 3)),                            # odd length
    lambda m, x: pad(m)(x, (1,) * 10),                            # more dims than the input
    lambda m, x: pad(m)(x, (-3, -4)),                             # crops below zero
    lambda m, x: pad(m)(x, (1.5, 1)),
    lambda m, x: pad(m)(x, (1, 1), mode="bogus"),
    lambda m, x: pad(m)(x, (1, 1), mode="reflect", value=1),
    lambda m, x: pad(m)(x, (1, 1), mode="reflect"),               # 4-d input, one padded dim
    lambda m, x: pad(m)(x, (1,) * 8, mode="replicate"),
    lambda m, x: pad(m)(x[0, 0, 0], (1, 1), mode="circular"),      # 1-d input
    lambda m, x: pad(m)(x[0], (6, 1), mode="reflect"),            # pad >= size
    lambda m, x: pad(m)(x, (1, 1, 5, 1), mode="reflect"),
    lambda m, x: pad(m)(x[0], (7, 1), mode="circular"),           # wraps twice
    lambda m, x: pad(m)(x[0], (-3, -4), mode="replicate"),
    lambda m, x: pad(m)(x[0], (-3, -3), mode="reflect"),
    lambda m, x: pad(m)(x[0, :, :0], (1, 1), mode="reflect"),     # empty non-batch dim
    lambda m, x: pad(m)(x[0, :1, 0], (4, -3), mode="circular"),    # wraps the cropped twice
    lambda m, x: pad(m)(x[0] > 0, (1, 1), mode="replicate"),      # bool
]


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_like_torch(fn):
    check_raises(fn, [R(1, 2, 5, 6).astype(np.float32)])


def test_reflect_error_names_the_dimension():
    x = ember.randn(2, 5, 6)
    with pytest.raises(RuntimeError, match=r"padding \(5, 1\) at dimension 1 of input "
                                           r"\[2, 5, 6\]"):
        ember.nn.functional.pad(x, (1, 1, 5, 1), mode="reflect")


# ----------------------------------------------------------------------------------------------
# layers

MODULES = [
    ("ZeroPad1d(2)", (2, 3, 4)), ("ZeroPad1d((1, 2))", (3, 4)), ("ZeroPad2d((1, 0, 2, 1))",
                                                                 (2, 3, 4, 5)),
    ("ZeroPad3d(1)", (1, 2, 3, 3, 3)), ("ConstantPad1d(2, 3.5)", (2, 3, 4)),
    ("ConstantPad2d((1, -1, 0, 2), -1.0)", (2, 3, 4, 5)), ("ConstantPad3d(1, 0)", (2, 3, 3, 3)),
    ("ReflectionPad1d(2)", (2, 3, 4)), ("ReflectionPad2d((1, 2, 3, 0))", (2, 3, 4, 5)),
    ("ReflectionPad3d(1)", (1, 2, 3, 3, 3)), ("ReplicationPad1d((0, 3))", (3, 4)),
    ("ReplicationPad2d(2)", (2, 3, 4, 5)), ("ReplicationPad3d((1, 2, 0, 1, 2, 0))", (2, 3, 3, 3)),
    ("CircularPad1d(2)", (2, 3, 4)), ("CircularPad2d((1, 2, 3, 0))", (3, 4, 5)),
    ("CircularPad3d(1)", (1, 2, 3, 3, 3)),
]


@pytest.mark.parametrize("spec,shape", MODULES)
def test_module_matches_torch(spec, shape):
    t = eval("torch.nn." + spec)
    e = eval("ember.nn." + spec)
    assert repr(e) == repr(t)
    public = {k: v for k, v in vars(t).items() if not k.startswith("_") and k != "training"}
    assert {k: getattr(e, k) for k in public} == public
    check(lambda m, x: eval("m.nn." + spec)(x), [R(*shape)])


def test_circular_module_checks_rank():
    check_raises(lambda m, x: m.nn.CircularPad2d(1)(x), [R(2, 3).astype(np.float32)])

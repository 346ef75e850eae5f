"""ember.vision.transforms against torchvision 0.28: every deterministic op on the same PIL
images and tensors (uint8 pixel-exact, float to rounding), the classes' reprs, the random
transforms' reproducibility and their results for given parameters, v2 names, and errors."""
import numpy as np
import pytest

import ember
import ember.vision.transforms as ET
import ember.vision.transforms.functional as EF
import ember.vision.transforms.v2 as EV2

from ._torchvision import import_torchvision

torchvision = import_torchvision()
torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
import torchvision.transforms as TT  # noqa: E402
import torchvision.transforms.functional as TF  # noqa: E402
import torchvision.transforms.v2 as TV2  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

rng = np.random.default_rng(7)
RGB = rng.integers(0, 256, (23, 31, 3), dtype=np.uint8)
GRAY = rng.integers(0, 256, (17, 12), dtype=np.uint8)
FLOAT = rng.random((3, 19, 26)).astype(np.float32)


def pil(array):
    return Image.fromarray(array)


def same_pil(e, t):
    assert e.mode == t.mode and e.size == t.size, (e.mode, e.size, t.mode, t.size)
    np.testing.assert_array_equal(np.asarray(e), np.asarray(t))


def same_tensor(e, t, atol=0.0, rtol=0.0):
    assert isinstance(e, ember.Tensor), type(e)
    assert tuple(e.shape) == tuple(t.shape), (tuple(e.shape), tuple(t.shape))
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(e.numpy().astype(np.float64), t.numpy().astype(np.float64),
                               atol=atol, rtol=rtol)


def same(e, t, atol=0.0):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            same(a, b, atol)
    elif isinstance(t, torch.Tensor):
        same_tensor(e, t, atol=atol)
    else:
        same_pil(e, t)


def inputs(kind):
    """(ember input, torch input) of one kind of image."""
    if kind == "pil_rgb":
        return pil(RGB), pil(RGB)
    if kind == "pil_gray":
        return pil(GRAY), pil(GRAY)
    if kind == "uint8":
        a = np.ascontiguousarray(RGB.transpose(2, 0, 1))
        return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if kind == "uint8_batch":
        a = np.stack([RGB.transpose(2, 0, 1), RGB[::-1].transpose(2, 0, 1)])
        return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())
    return ember.from_numpy(FLOAT.copy()), torch.from_numpy(FLOAT.copy())


ALL = ["pil_rgb", "pil_gray", "uint8", "uint8_batch", "float"]
TENSORS = ["uint8", "uint8_batch", "float"]
COLOUR = ["pil_rgb", "uint8", "float"]
IM = ember.vision.transforms.InterpolationMode
TM = TT.InterpolationMode

DETERMINISTIC = [
    ("resize_int", ALL, lambda F, M, x: F.resize(x, 11)),
    ("resize_hw", ALL, lambda F, M, x: F.resize(x, [13, 40])),
    ("resize_max_size", ALL, lambda F, M, x: F.resize(x, 10, max_size=12)),
    ("resize_nearest", ALL, lambda F, M, x: F.resize(x, [9, 14], M.NEAREST)),
    ("resize_nearest_exact", TENSORS, lambda F, M, x: F.resize(x, [9, 14], M.NEAREST_EXACT)),
    ("resize_bicubic", ALL, lambda F, M, x: F.resize(x, [12, 16], M.BICUBIC)),
    ("resize_bicubic_up", ALL, lambda F, M, x: F.resize(x, [40, 45], M.BICUBIC)),
    ("resize_no_antialias", TENSORS, lambda F, M, x: F.resize(x, [12, 16], antialias=False)),
    ("resize_pil_int", ["pil_rgb"], lambda F, M, x: F.resize(x, [12, 16], 3)),
    ("resize_box", ["pil_rgb"], lambda F, M, x: F.resize(x, [12, 16], M.BOX)),
    ("resize_lanczos", ["pil_rgb"], lambda F, M, x: F.resize(x, [12, 16], M.LANCZOS)),
    ("center_crop", ALL, lambda F, M, x: F.center_crop(x, [10, 7])),
    ("center_crop_pads", ALL, lambda F, M, x: F.center_crop(x, 35)),
    ("crop", ALL, lambda F, M, x: F.crop(x, 3, 4, 9, 11)),
    ("crop_outside", ALL, lambda F, M, x: F.crop(x, -2, 5, 30, 9)),
    ("resized_crop", ALL, lambda F, M, x: F.resized_crop(x, 2, 3, 12, 15, [8, 8])),
    ("pad_constant", ALL, lambda F, M, x: F.pad(x, [1, 2, 3, 4], fill=7)),
    ("pad_edge", ALL, lambda F, M, x: F.pad(x, [2, 3], padding_mode="edge")),
    ("pad_reflect", ALL, lambda F, M, x: F.pad(x, 3, padding_mode="reflect")),
    ("pad_symmetric", ALL, lambda F, M, x: F.pad(x, [2, 1, 4, 3], padding_mode="symmetric")),
    ("pad_negative", ALL, lambda F, M, x: F.pad(x, [-1, 2, 1, -2], padding_mode="edge")),
    ("hflip", ALL, lambda F, M, x: F.hflip(x)),
    ("vflip", ALL, lambda F, M, x: F.vflip(x)),
    ("rotate", ALL, lambda F, M, x: F.rotate(x, 33.0)),
    ("rotate_bilinear", ALL, lambda F, M, x: F.rotate(x, -47.5, M.BILINEAR)),
    ("rotate_expand", ALL, lambda F, M, x: F.rotate(x, 30, expand=True)),
    ("rotate_center_fill", ALL, lambda F, M, x: F.rotate(x, 20, center=[3, 4], fill=[9])),
    ("rotate_90_expand", ALL, lambda F, M, x: F.rotate(x, 90, expand=True)),
    ("affine", ALL, lambda F, M, x: F.affine(x, 15.0, [2, -3], 1.2, [10.0, 5.0])),
    ("affine_bilinear", ALL, lambda F, M, x: F.affine(x, -20.0, [1, 1], 0.8, 7.0,
                                                      M.BILINEAR, fill=3)),
    ("perspective", ALL, lambda F, M, x: F.perspective(
        x, [[0, 0], [30, 0], [30, 22], [0, 22]], [[2, 3], [27, 1], [29, 20], [1, 21]])),
    ("perspective_nearest", ALL, lambda F, M, x: F.perspective(
        x, [[0, 0], [30, 0], [30, 22], [0, 22]], [[3, 2], [25, 3], [28, 18], [2, 20]],
        M.NEAREST, fill=[5])),
    ("grayscale", COLOUR, lambda F, M, x: F.rgb_to_grayscale(x)),
    ("grayscale_3", COLOUR, lambda F, M, x: F.rgb_to_grayscale(x, num_output_channels=3)),
    ("brightness", ALL, lambda F, M, x: F.adjust_brightness(x, 1.3)),
    ("contrast", ALL, lambda F, M, x: F.adjust_contrast(x, 0.6)),
    ("saturation", COLOUR, lambda F, M, x: F.adjust_saturation(x, 1.7)),
    ("hue", COLOUR, lambda F, M, x: F.adjust_hue(x, 0.2)),
    ("hue_negative", COLOUR, lambda F, M, x: F.adjust_hue(x, -0.45)),
    ("gamma", ALL, lambda F, M, x: F.adjust_gamma(x, 0.7, 1.1)),
    ("sharpness", ALL, lambda F, M, x: F.adjust_sharpness(x, 1.8)),
    ("gaussian_blur", ALL, lambda F, M, x: F.gaussian_blur(x, [3, 5], [0.8, 1.3])),
    ("gaussian_blur_default_sigma", ALL, lambda F, M, x: F.gaussian_blur(x, 5)),
    ("invert", ALL, lambda F, M, x: F.invert(x)),
    ("posterize", ["pil_rgb", "pil_gray", "uint8", "uint8_batch"],
     lambda F, M, x: F.posterize(x, 3)),
    ("solarize", ["pil_rgb", "uint8", "uint8_batch"], lambda F, M, x: F.solarize(x, 128)),
    ("solarize_float", ["float"], lambda F, M, x: F.solarize(x, 0.4)),
    ("autocontrast", ALL, lambda F, M, x: F.autocontrast(x)),
    ("equalize", ["pil_rgb", "pil_gray", "uint8", "uint8_batch"],
     lambda F, M, x: F.equalize(x)),
    ("five_crop", ALL, lambda F, M, x: F.five_crop(x, [8, 6])),
    ("ten_crop", ALL, lambda F, M, x: F.ten_crop(x, 7, vertical_flip=True)),
]


@pytest.mark.parametrize("name,kinds,fn", [pytest.param(n, k, f, id=n)
                                           for n, k, f in DETERMINISTIC])
def test_functional_matches_torchvision(name, kinds, fn):
    for kind in kinds:
        e_in, t_in = inputs(kind)
        expected = fn(TF, TM, t_in)
        got = fn(EF, IM, e_in)
        same(got, expected, atol=2e-6 if kind == "float" else 0)


def test_resize_uint8_rounds_like_torchvision_on_a_large_image():
    """Antialiased downscaling of a photo-sized uint8 image: torch and ember compute in
    float32 in a different order, so a value that lands on .5 may round apart; allow 1 in
    rare pixels, never more."""
    a = np.random.default_rng(1).integers(0, 256, (3, 240, 200), dtype=np.uint8)
    expected = TF.resize(torch.from_numpy(a), [100, 87]).numpy().astype(int)
    got = EF.resize(ember.from_numpy(a), [100, 87]).numpy().astype(int)
    assert np.abs(got - expected).max() <= 1
    assert (got != expected).mean() < 1e-3


CONVERSIONS = [
    ("to_tensor_rgb", lambda F, x: F.to_tensor(pil(RGB))),
    ("to_tensor_gray", lambda F, x: F.to_tensor(pil(GRAY))),
    ("to_tensor_ndarray", lambda F, x: F.to_tensor(RGB)),
    ("to_tensor_ndarray_2d", lambda F, x: F.to_tensor(GRAY.astype(np.float32))),
    ("to_tensor_mode_1", lambda F, x: F.to_tensor(pil(GRAY).convert("1"))),
    ("to_tensor_mode_I", lambda F, x: F.to_tensor(pil(GRAY).convert("I"))),
    ("to_tensor_mode_F", lambda F, x: F.to_tensor(pil(GRAY).convert("F"))),
    ("pil_to_tensor", lambda F, x: F.pil_to_tensor(pil(RGB))),
    ("pil_to_tensor_rgba", lambda F, x: F.pil_to_tensor(pil(RGB).convert("RGBA"))),
    ("convert_to_float", lambda F, x: F.convert_image_dtype(x(RGB.transpose(2, 0, 1)))),
    ("convert_to_uint8", lambda F, x: F.convert_image_dtype(x(FLOAT), x.uint8)),
    ("convert_to_int16", lambda F, x: F.convert_image_dtype(x(FLOAT).double(), x.int16)),
    ("convert_uint8_to_int32", lambda F, x: F.convert_image_dtype(x(GRAY), x.int32)),
    ("convert_int32_to_uint8", lambda F, x: F.convert_image_dtype(
        x(GRAY.astype(np.int32) * 1000000), x.uint8)),
    ("normalize", lambda F, x: F.normalize(x(FLOAT), [0.4, 0.5, 0.6], [0.2, 0.25, 0.3])),
    ("erase", lambda F, x: F.erase(x(FLOAT), 2, 3, 4, 5, x(np.float32(0.25)))),
]


@pytest.mark.parametrize("name,fn", [pytest.param(n, f, id=n) for n, f in CONVERSIONS])
def test_conversions_match_torchvision(name, fn):
    def lib(module):
        class Lib:
            uint8, int16, int32 = module.uint8, module.int16, module.int32

            def __call__(self, a):
                return module.from_numpy(np.array(a, copy=True))
        return Lib()
    same(fn(EF, lib(ember)), fn(TF, lib(torch)), atol=1e-7)


@pytest.mark.parametrize("array,mode", [
    (FLOAT, None), (RGB.transpose(2, 0, 1), None), (GRAY[None], None),
    (GRAY[None].astype(np.int16), None), (GRAY[None].astype(np.int32), None),
    (FLOAT[:1], "F"), (np.concatenate([RGB.transpose(2, 0, 1)] * 2)[:4], None),
    (np.concatenate([RGB.transpose(2, 0, 1)] * 2)[:4], "RGBX"),
    (RGB.transpose(2, 0, 1)[:2], None), (RGB.transpose(2, 0, 1), "HSV")])
def test_to_pil_image_matches_torchvision(array, mode):
    array = np.ascontiguousarray(array)
    same_pil(EF.to_pil_image(ember.from_numpy(array.copy()), mode),
             TF.to_pil_image(torch.from_numpy(array.copy()), mode))
    hwc = np.ascontiguousarray(np.moveaxis(array, 0, -1))
    same_pil(EF.to_pil_image(hwc, mode), TF.to_pil_image(hwc, mode))


def test_float_ops_keep_gradients():
    x = ember.from_numpy(FLOAT.copy()).requires_grad_()
    y = EF.rotate(EF.resize(x, [10, 12]), 30, IM.BILINEAR)
    EF.normalize(EF.gaussian_blur(y, 3), [0.5] * 3, [0.2] * 3).sum().backward()
    t = torch.from_numpy(FLOAT.copy()).requires_grad_()
    u = TF.rotate(TF.resize(t, [10, 12]), 30, TM.BILINEAR)
    TF.normalize(TF.gaussian_blur(u, 3), [0.5] * 3, [0.2] * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


CLASSES = [
    lambda T, m: T.Compose([T.Resize(10), T.CenterCrop(8), T.ToTensor()]),
    lambda T, m: T.Resize((10, 12), interpolation=T.InterpolationMode.BICUBIC),
    lambda T, m: T.Normalize((0.5, 0.4, 0.3), (0.2, 0.2, 0.2)),
    lambda T, m: T.Pad([1, 2], fill=3, padding_mode="constant"),
    lambda T, m: T.RandomCrop(16, padding=4),
    lambda T, m: T.RandomResizedCrop(32, scale=(0.5, 1.0)),
    lambda T, m: T.RandomHorizontalFlip(0.3),
    lambda T, m: T.RandomVerticalFlip(),
    lambda T, m: T.RandomRotation(15, fill=2),
    lambda T, m: T.RandomAffine(10, translate=(0.1, 0.2), scale=(0.9, 1.1), shear=5),
    lambda T, m: T.ColorJitter(0.4, 0.4, 0.4, 0.1),
    lambda T, m: T.ColorJitter(brightness=(0.5, 1.5)),
    lambda T, m: T.Grayscale(3),
    lambda T, m: T.RandomGrayscale(),
    lambda T, m: T.RandomErasing(),
    lambda T, m: T.GaussianBlur(5, sigma=(0.1, 2.0)),
    lambda T, m: T.FiveCrop(4),
    lambda T, m: T.TenCrop((4, 5), vertical_flip=True),
    lambda T, m: T.RandomApply([T.RandomInvert(), T.RandomEqualize()], p=0.3),
    lambda T, m: T.RandomChoice([T.RandomPosterize(4), T.RandomSolarize(100)]),
    lambda T, m: T.RandomOrder([T.RandomAutocontrast(), T.RandomAdjustSharpness(2)]),
    lambda T, m: T.RandomPerspective(0.4),
    lambda T, m: T.ToPILImage(),
    lambda T, m: T.ToPILImage(mode="RGB"),
    lambda T, m: T.PILToTensor(),
    lambda T, m: T.Lambda(lambda x: x),
    lambda T, m: T.ConvertImageDtype(m.float32),
    lambda T, m: T.LinearTransformation(m.eye(3), m.zeros(3)),
]


@pytest.mark.parametrize("make", CLASSES)
def test_repr_matches_torchvision(make):
    assert repr(make(ET, ember)) == repr(make(TT, torch)).replace("torch.", "ember.")


def _replay(transform, img, seed):
    """The transform's result for a seed, twice: it must not depend on anything else."""
    ember.manual_seed(seed)
    first = transform(img)
    ember.manual_seed(seed)
    return first, transform(img)


RANDOM = [
    lambda T: T.RandomCrop(12, padding=2, pad_if_needed=True),
    lambda T: T.RandomResizedCrop(10),
    lambda T: T.RandomHorizontalFlip(),
    lambda T: T.RandomRotation(40),
    lambda T: T.RandomAffine(20, translate=(0.1, 0.1), scale=(0.8, 1.2), shear=(1, 5, 2, 8)),
    lambda T: T.ColorJitter(0.4, 0.4, 0.4, 0.1),
    lambda T: T.RandomErasing(p=1, value="random"),
    lambda T: T.GaussianBlur(3),
    lambda T: T.RandomPerspective(p=1),
    lambda T: T.RandomGrayscale(p=0.5),
]


@pytest.mark.parametrize("make", RANDOM)
@pytest.mark.parametrize("kind", ["pil_rgb", "uint8", "float"])
def test_random_transforms_are_reproducible_from_the_seed(make, kind):
    e_in, _ = inputs(kind)
    if kind.startswith("pil") and "Erasing" in repr(make(ET)):
        e_in = EF.to_tensor(e_in)
    first, again = _replay(make(ET), e_in, 3)
    for a, b in zip(*(x if isinstance(x, tuple) else (x,) for x in (first, again))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_random_resized_crop_equals_the_functional_form_of_its_parameters():
    e_in, t_in = inputs("uint8")
    transform = ET.RandomResizedCrop(12, scale=(0.3, 0.9))
    ember.manual_seed(5)
    i, j, h, w = transform.get_params(e_in, transform.scale, transform.ratio)
    ember.manual_seed(5)
    got = transform(e_in)
    same(got, TF.resized_crop(t_in, i, j, h, w, [12, 12]))
    assert 0 <= i and i + h <= 23 and 0 <= j and j + w <= 31
    assert 0.3 * 23 * 31 - 1 <= h * w * 1.0 and h * w <= 0.9 * 23 * 31 * 1.2


def test_color_jitter_applies_the_drawn_factors_in_the_drawn_order():
    e_in, t_in = inputs("uint8")
    jitter = ET.ColorJitter(0.5, 0.5, 0.5, 0.2)
    ember.manual_seed(11)
    order, b, c, s, h = jitter.get_params(jitter.brightness, jitter.contrast,
                                          jitter.saturation, jitter.hue)
    ember.manual_seed(11)
    got = jitter(e_in)
    expected = t_in
    adjust = [(TF.adjust_brightness, b), (TF.adjust_contrast, c), (TF.adjust_saturation, s),
              (TF.adjust_hue, h)]
    for k in order.tolist():
        expected = adjust[k][0](expected, adjust[k][1])
    same(got, expected)
    assert 0.5 <= b <= 1.5 and -0.2 <= h <= 0.2 and sorted(order.tolist()) == [0, 1, 2, 3]


def _generators_agree():
    ember.manual_seed(1234)
    torch.manual_seed(1234)
    e = [ember.rand(1).item(), ember.randint(0, 1000, size=(1,)).item(),
         ember.empty(1).uniform_(0.2, 0.8).item(), ember.randperm(4).tolist()]
    t = [torch.rand(1).item(), torch.randint(0, 1000, size=(1,)).item(),
         torch.empty(1).uniform_(0.2, 0.8).item(), torch.randperm(4).tolist()]
    return e == t


_ROUNDS_APART = pytest.mark.xfail(
    strict=False, reason="the drawn parameters equal torchvision's (the streams agree); the "
    "integer image path then rounds one pixel in ~2000 one level apart (blur / perspective "
    "arithmetic, not the random draws)")
CHOOSING = RANDOM[:6] + [pytest.param(RANDOM[7], marks=_ROUNDS_APART),
                         pytest.param(RANDOM[8], marks=_ROUNDS_APART)] + RANDOM[9:]


@pytest.mark.parametrize("make", CHOOSING)
def test_random_transforms_choose_like_torchvision_for_the_same_seed(make):
    """Holds once ember's generator produces torch's streams (the transforms already draw
    torchvision's calls in torchvision's order); until then it is an expected failure."""
    if not _generators_agree():
        pytest.xfail("ember's generator does not yet reproduce torch's random streams")
    for kind in ("pil_rgb", "uint8", "float"):
        e_in, t_in = inputs(kind)
        ember.manual_seed(21)
        torch.manual_seed(21)
        same(make(ET)(e_in), make(TT)(t_in), atol=1e-6)


def test_v2_names_match_torchvision_on_single_images_and_samples():
    e_img, t_img = inputs("pil_rgb")
    pipeline = [lambda T, m: T.ToImage(), lambda T, m: T.ToDtype(m.float32, scale=True),
                lambda T, m: T.Resize(12), lambda T, m: T.CenterCrop(10),
                lambda T, m: T.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.25])]
    e = EV2.Compose([p(EV2, ember) for p in pipeline])
    t = TV2.Compose([p(TV2, torch) for p in pipeline])
    same(e(e_img), t(t_img), atol=1e-6)
    e_out, e_label = e(e_img, 3)
    t_out, t_label = t(t_img, 3)
    same(e_out, t_out, atol=1e-6)
    assert e_label == t_label == 3
    got = e({"image": e_img, "label": 5})
    assert got["label"] == 5 and tuple(got["image"].shape) == (3, 10, 10)
    same(EV2.functional.to_dtype(ember.from_numpy(GRAY.copy()), ember.float32, scale=True),
         TV2.functional.to_dtype(torch.from_numpy(GRAY.copy()), torch.float32, scale=True))
    same(EV2.ToImage()(RGB), TV2.ToImage()(RGB).as_subclass(torch.Tensor))
    same(EV2.RGB()(pil(GRAY)), TV2.RGB()(pil(GRAY)))
    with pytest.raises(NotImplementedError, match="tv_tensors"):
        EV2.RandomHorizontalFlip()(pil(RGB), pil(RGB))


ERRORS = [
    lambda F, M, x: F.resize(x, [1, 2, 3]),
    lambda F, M, x: F.resize(x, [10, 12], max_size=20),
    lambda F, M, x: F.resize(x, 10, max_size=5),
    lambda F, M, x: F.resize(x, 10, interpolation="bilinear"),
    lambda F, M, x: F.pad(x, [1, 2, 3]),
    lambda F, M, x: F.pad(x, 1, padding_mode="wrap"),
    lambda F, M, x: F.adjust_hue(x, 0.7),
    lambda F, M, x: F.adjust_brightness(x, -1),
    lambda F, M, x: F.gaussian_blur(x, 4),
    lambda F, M, x: F.gaussian_blur(x, 3, -1.0),
    lambda F, M, x: F.rotate(x, "30"),
    lambda F, M, x: F.rotate(x, 30, M.BICUBIC),
    lambda F, M, x: F.affine(x, 0.0, [1], 1.0, 0.0),
    lambda F, M, x: F.affine(x, 0.0, [1, 1], -1.0, 0.0),
    lambda F, M, x: F.five_crop(x, 40),
    lambda F, M, x: F.normalize(x.to(x.dtype) if False else x, [0.5], [0.0]),
    lambda F, M, x: F.rgb_to_grayscale(x[:2]),
    lambda F, M, x: F.posterize(x, 3),
    lambda F, M, x: F.equalize(x),
    lambda F, M, x: F.convert_image_dtype(x, x.dtype if False else _int64(x)),
]


def _int64(x):
    return ember.int64 if isinstance(x, ember.Tensor) else torch.int64


@pytest.mark.parametrize("fn", ERRORS)
def test_errors_match_torchvision(fn):
    e_in, t_in = inputs("float")
    with pytest.raises(Exception) as t_info:
        fn(TF, TM, t_in)
    with pytest.raises(Exception) as e_info:
        fn(EF, IM, e_in)
    assert type(e_info.value) is type(t_info.value), (e_info.value, t_info.value)


def test_errors_on_non_images():
    for fn in (lambda F: F.to_tensor([1, 2]), lambda F: F.pil_to_tensor(RGB),
               lambda F: F.to_pil_image([1]), lambda F: F.normalize(RGB, [0], [1]),
               lambda F: F.to_grayscale(FLOAT), lambda F: F.hflip([1])):
        with pytest.raises(TypeError):
            fn(TF)
        with pytest.raises(TypeError):
            fn(EF)


@pytest.fixture
def torch_stream(monkeypatch):
    """ember's random calls answered from torch's generator (monkeypatch undoes it): with
    it, a transform that makes torchvision's calls in torchvision's order must make
    torchvision's choices, whatever ember's own generator produces."""
    def from_torch(t):
        return ember.from_numpy(t.numpy().copy())

    class Fill:
        """What `ember.empty(shape)` is used for in the transforms: one in-place draw."""

        def __init__(self, shape, dtype):
            self.shape, self.dtype = shape, dtype

        def uniform_(self, low, high):
            return from_torch(torch.empty(*self.shape).uniform_(low, high))

        def normal_(self):
            return from_torch(torch.empty(*self.shape, dtype=torch.float32).normal_())

    monkeypatch.setattr(ember, "rand", lambda *shape, **kw: from_torch(torch.rand(*shape)))
    monkeypatch.setattr(ember, "randint", lambda *args, dtype=None, **kw: from_torch(
        torch.randint(*args, **kw)))
    monkeypatch.setattr(ember, "randperm", lambda n, **kw: from_torch(torch.randperm(n)))
    monkeypatch.setattr(ember, "empty", lambda *shape, dtype=None, **kw: Fill(shape, dtype))
    monkeypatch.setattr(ember, "multinomial", lambda p, n, **kw: from_torch(
        torch.multinomial(torch.from_numpy(p.numpy()), n)))


STREAM_CASES = RANDOM + [
    lambda T: T.RandomResizedCrop(9, scale=(0.9, 1.0), ratio=(3.0, 4.0)),  # fallback path
    lambda T: T.RandomApply([T.ColorJitter(0.3), T.RandomVerticalFlip()], p=0.6),
    lambda T: T.Compose([T.RandomInvert(), T.RandomPosterize(3), T.RandomSolarize(100),
                         T.RandomAdjustSharpness(2), T.RandomAutocontrast(),
                         T.RandomEqualize()]),
    lambda T: T.RandomErasing(p=1, value=(0.1, 0.2, 0.3), scale=(0.1, 0.3)),
]


@pytest.mark.parametrize("make", STREAM_CASES)
@pytest.mark.parametrize("kind", ["pil_rgb", "uint8"])
def test_random_transforms_draw_torchvisions_calls_in_its_order(torch_stream, make, kind):
    e_in, t_in = inputs(kind)
    transform = repr(make(TT))
    if kind.startswith("pil") and "Erasing" in transform:
        e_in, t_in = EF.to_tensor(e_in), TF.to_tensor(t_in)
    for seed in range(6):
        torch.manual_seed(seed)
        expected = make(TT)(t_in)
        after_torchvision = torch.rand(1).item()
        torch.manual_seed(seed)
        got = make(ET)(e_in)
        same(got, expected, atol=1e-6)
        assert torch.rand(1).item() == after_torchvision  # the same number of draws


@pytest.mark.parametrize("make", [lambda T: T.RandomChoice([T.RandomHorizontalFlip(1.0),
                                                            T.RandomVerticalFlip(1.0),
                                                            T.Grayscale(3)], p=[1, 2, 3]),
                                  lambda T: T.RandomOrder([T.RandomRotation(20),
                                                           T.RandomHorizontalFlip(0.7),
                                                           T.CenterCrop(10)])])
def test_v2_containers_draw_like_torchvision(torch_stream, make):
    e_in, t_in = inputs("uint8")
    for seed in range(6):
        torch.manual_seed(seed)
        expected = make(TV2)(t_in)
        torch.manual_seed(seed)
        same(make(EV2)(e_in), expected)


AUTO_AUGMENT = [
    lambda T: T.AutoAugment(),
    lambda T: T.AutoAugment(T.AutoAugmentPolicy.CIFAR10, fill=[3, 4, 5]),
    lambda T: T.AutoAugment(T.AutoAugmentPolicy.SVHN, T.InterpolationMode.BILINEAR),
    lambda T: T.RandAugment(),
    lambda T: T.RandAugment(num_ops=3, magnitude=20, fill=7),
    lambda T: T.TrivialAugmentWide(),
    lambda T: T.TrivialAugmentWide(num_magnitude_bins=11),
]


@pytest.mark.parametrize("make", AUTO_AUGMENT)
@pytest.mark.parametrize("kind", ["pil_rgb", "uint8"])
def test_augmentation_policies_match_torchvision(torch_stream, make, kind):
    e_in, t_in = inputs(kind)
    assert repr(make(ET)) == repr(make(TT))
    bilinear = make(TT).interpolation == TT.InterpolationMode.BILINEAR and kind == "uint8"
    for seed in range(12):
        torch.manual_seed(seed)
        expected = make(TT)(t_in)
        torch.manual_seed(seed)
        got = make(ET)(e_in)
        if bilinear:  # torch's grid_sample sums its four taps with fused multiply-adds
            assert_rounds_alike(got, expected)
        else:
            same(got, expected)


def assert_rounds_alike(got, expected):
    """Equal but for a value landing on .5 in float32 and rounding the other way: at most 1
    apart, in under 1% of the pixels."""
    diff = np.abs(got.numpy().astype(int) - expected.numpy().astype(int))
    assert diff.max() <= 1 and (diff > 0).mean() < 0.01, (diff.max(), (diff > 0).mean())

"""ember.vision.utils against torchvision (make_grid, save_image, draw_bounding_boxes are
pure Python there) and ember.vision.io against Pillow's own reading and writing
(torchvision's image codecs are compiled and do not load beside the CPU torch)."""
import numpy as np
import pytest

import ember
from ember.vision import io as eio
from ember.vision import utils as eu

from ._torchvision import import_torchvision

torchvision = import_torchvision()
torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
tu = torchvision.utils

rng = np.random.default_rng(13)
BATCH = rng.random((5, 3, 6, 7)).astype(np.float32) * 1.4 - 0.2

GRIDS = [{}, {"nrow": 2, "padding": 1, "pad_value": 0.5}, {"normalize": True},
         {"normalize": True, "value_range": (0.0, 0.5)}, {"normalize": True, "scale_each": True},
         {"nrow": 10, "padding": 0}]


@pytest.mark.parametrize("kwargs", GRIDS)
def test_make_grid_matches_torchvision(kwargs):
    got = eu.make_grid(ember.from_numpy(BATCH.copy()), **kwargs)
    expected = tu.make_grid(torch.from_numpy(BATCH.copy()), **kwargs)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)


def test_make_grid_input_forms():
    gray = BATCH[:, :1]
    for e_in, t_in in [(ember.from_numpy(gray.copy()), torch.from_numpy(gray.copy())),
                       ([ember.from_numpy(b) for b in BATCH], [torch.from_numpy(b)
                                                              for b in BATCH]),
                       (ember.from_numpy(BATCH[0].copy()), torch.from_numpy(BATCH[0].copy())),
                       (ember.from_numpy(BATCH[0, 0].copy()),
                        torch.from_numpy(BATCH[0, 0].copy()))]:
        np.testing.assert_allclose(eu.make_grid(e_in).numpy(), tu.make_grid(t_in).numpy())
    with pytest.raises(TypeError):
        eu.make_grid([BATCH])
    with pytest.raises(TypeError):
        eu.make_grid(ember.from_numpy(BATCH), normalize=True, value_range=[0, 1])


@pytest.mark.parametrize("ext", ["png", "bmp"])
def test_save_image_writes_what_torchvision_writes(tmp_path, ext):
    eu.save_image(ember.from_numpy(BATCH.copy()), tmp_path / f"e.{ext}", nrow=3)
    tu.save_image(torch.from_numpy(BATCH.copy()), tmp_path / f"t.{ext}", nrow=3)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / f"e.{ext}")),
                                  np.asarray(Image.open(tmp_path / f"t.{ext}")))
    import io

    buffer = io.BytesIO()
    eu.save_image(ember.from_numpy(BATCH[0].copy()), buffer, format="PNG")
    assert buffer.getvalue()[:4] == b"\x89PNG"


BOXES = np.array([[1, 2, 20, 15], [5, 5, 9, 30], [0, 0, 31, 23]], dtype=np.float32)


@pytest.mark.parametrize("kwargs", [
    {}, {"labels": ["cat", "dog", "x"], "width": 2},
    {"colors": "red", "fill": True},
    {"colors": ["blue", (0, 255, 0), "#ff00ff"], "labels": ["a", "b", "c"],
     "fill_labels": True, "label_colors": "white"},
])
@pytest.mark.parametrize("kind", ["uint8", "float", "gray"])
def test_draw_bounding_boxes_matches_torchvision(kwargs, kind):
    image = rng.integers(0, 256, (3, 24, 32), dtype=np.uint8)
    if kind == "float":
        image = image.astype(np.float32) / 255
    elif kind == "gray":
        image = image[:1].copy()
    got = eu.draw_bounding_boxes(ember.from_numpy(image.copy()), ember.from_numpy(BOXES),
                                 **kwargs)
    expected = tu.draw_bounding_boxes(torch.from_numpy(image.copy()), torch.from_numpy(BOXES),
                                      **kwargs)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-6)


def test_draw_bounding_boxes_errors():
    image = ember.zeros((3, 10, 10), dtype=ember.uint8)
    bad = [(image, ember.tensor([[5.0, 5, 1, 1]]), {}),
           (image.float().long(), ember.tensor([[1.0, 1, 5, 5]]), {}),
           (image[None], ember.tensor([[1.0, 1, 5, 5]]), {}),
           (image, ember.tensor([[1.0, 1, 5, 5]]), {"labels": ["a", "b"]}),
           (image, ember.tensor([[1.0, 1, 5, 5]] * 2), {"colors": ["red"]})]
    for img, boxes, kwargs in bad:
        with pytest.raises(ValueError):
            eu.draw_bounding_boxes(img, boxes, **kwargs)
    with pytest.warns(UserWarning, match="No box"):
        assert eu.draw_bounding_boxes(image, ember.zeros((0, 4))) is image


def test_png_round_trip_and_read_modes(tmp_path):
    rgb = rng.integers(0, 256, (3, 9, 11), dtype=np.uint8)
    eio.write_png(ember.from_numpy(rgb), str(tmp_path / "a.png"))
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "a.png")),
                                  rgb.transpose(1, 2, 0))
    back = eio.read_image(str(tmp_path / "a.png"))
    assert back.dtype == ember.uint8 and tuple(back.shape) == (3, 9, 11)
    np.testing.assert_array_equal(back.numpy(), rgb)
    gray = eio.read_image(str(tmp_path / "a.png"), mode=eio.ImageReadMode.GRAY)
    np.testing.assert_array_equal(gray.numpy()[0],
                                  np.asarray(Image.open(tmp_path / "a.png").convert("L")))
    rgba = eio.read_image(str(tmp_path / "a.png"), mode="RGBA")
    assert tuple(rgba.shape) == (4, 9, 11) and (rgba.numpy()[3] == 255).all()
    assert eio.ImageReadMode.RGBA is eio.ImageReadMode.RGB_ALPHA
    assert [m.name for m in eio.ImageReadMode] == \
        [m.name for m in torchvision.io.ImageReadMode]
    one = ember.from_numpy(rgb[:1].copy())
    eio.write_png(one, str(tmp_path / "g.png"), compression_level=9)
    assert Image.open(tmp_path / "g.png").mode == "L"
    np.testing.assert_array_equal(eio.read_image(str(tmp_path / "g.png")).numpy(), rgb[:1])


def test_jpeg_encoding_equals_pillows_and_bytes_round_trip(tmp_path):
    rgb = rng.integers(0, 256, (3, 16, 16), dtype=np.uint8)
    eio.write_jpeg(ember.from_numpy(rgb), str(tmp_path / "a.jpg"), quality=90)
    Image.fromarray(rgb.transpose(1, 2, 0)).save(tmp_path / "b.jpg", quality=90)
    assert (tmp_path / "a.jpg").read_bytes() == (tmp_path / "b.jpg").read_bytes()
    data = eio.read_file(str(tmp_path / "a.jpg"))
    assert data.dtype == ember.uint8 and data.ndim == 1
    decoded = eio.decode_jpeg(data)
    np.testing.assert_array_equal(decoded.numpy().transpose(1, 2, 0),
                                  np.asarray(Image.open(tmp_path / "b.jpg")))
    np.testing.assert_array_equal(eio.decode_image(data).numpy(), decoded.numpy())
    assert [d.shape for d in eio.decode_jpeg([data, data])] == [decoded.shape] * 2
    encoded = eio.encode_png(decoded)
    np.testing.assert_array_equal(eio.decode_png(encoded).numpy(), decoded.numpy())
    eio.write_file(str(tmp_path / "c.png"), encoded)
    assert (tmp_path / "c.png").read_bytes() == encoded.numpy().tobytes()
    with pytest.raises(RuntimeError, match="PNG"):
        eio.decode_png(data)
    with pytest.raises(ValueError):
        eio.encode_jpeg(decoded, quality=0)
    with pytest.raises(RuntimeError):
        eio.encode_png(decoded.float())

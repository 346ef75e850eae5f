"""ember.vision.models against torchvision 0.28: the same state_dict keys and shapes, a
torchvision model's random weights loaded with strict=True giving the same eval-mode outputs
(1e-4), train-mode gradients of a small ResNet, the Weights enums' URLs / meta /
transforms, loading from the hub cache, the offline error, and the registry."""
import os

import numpy as np
import pytest

import ember
from ember.vision import models as em

from ._torchvision import import_torchvision

torchvision = import_torchvision()
torch = pytest.importorskip("torch")
tm = torchvision.models

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def to_ember_state(state):
    return {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in state.items()}


def assert_same_structure(e_model, t_model):
    e_state, t_state = e_model.state_dict(), t_model.state_dict()
    assert list(e_state) == list(t_state)
    for k in t_state:
        assert tuple(e_state[k].shape) == tuple(t_state[k].shape), k
        assert str(e_state[k].dtype).split(".")[-1] == str(t_state[k].dtype).split(".")[-1], k


def compare_outputs(name, kwargs, shape, seed=0):
    torch.manual_seed(seed)
    t_model = getattr(tm, name)(**kwargs).eval()
    e_model = getattr(em, name)(**kwargs).eval()
    assert_same_structure(e_model, t_model)
    e_model.load_state_dict(to_ember_state(t_model.state_dict()), strict=True)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = t_model(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = e_model(ember.from_numpy(x)).numpy()
    assert got.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * scale)


MODELS = [
    ("resnet18", {}, (2, 3, 64, 64)),
    ("resnet34", {"num_classes": 7}, (1, 3, 48, 40)),
    ("resnet50", {}, (1, 3, 64, 64)),
    ("resnet101", {"num_classes": 10}, (1, 3, 32, 32)),
    ("resnext50_32x4d", {"num_classes": 5}, (1, 3, 32, 32)),
    ("alexnet", {}, (1, 3, 63, 63)),
    ("squeezenet1_0", {}, (2, 3, 64, 64)),
    ("squeezenet1_1", {"num_classes": 3}, (1, 3, 48, 48)),
    ("mobilenet_v2", {}, (2, 3, 64, 64)),
    ("mobilenet_v2", {"width_mult": 0.5, "num_classes": 4}, (1, 3, 40, 40)),
    ("vit_b_16", {"image_size": 32}, (2, 3, 32, 32)),
]


@pytest.mark.parametrize("name,kwargs,shape", [pytest.param(*m, id=f"{m[0]}-{i}")
                                               for i, m in enumerate(MODELS)])
def test_torchvision_weights_give_the_same_outputs(name, kwargs, shape):
    compare_outputs(name, kwargs, shape)


@pytest.mark.slow
@pytest.mark.parametrize("name,kwargs", [("vgg11_bn", {}), ("vgg16", {"num_classes": 10})])
def test_vgg_loads_and_matches(name, kwargs):
    """VGG's 25088 x 4096 classifier takes ember's generator some seconds to initialise."""
    compare_outputs(name, kwargs, (2, 3, 32, 32))


@pytest.mark.parametrize("name", ["vit_b_16", "resnet152", "wide_resnet50_2"])
def test_default_configurations_have_torchvision_state_dict_layout(name):
    torch.manual_seed(0)
    with torch.device("meta"):  # torch allocates nothing; ember builds the real model
        t_model = getattr(tm, name)()
    e_model = getattr(em, name)()
    assert_same_structure(e_model, t_model)
    assert sum(p.numel() for p in e_model.parameters()) == \
        sum(p.numel() for p in t_model.parameters())


def test_train_mode_forward_and_gradients_match():
    torch.manual_seed(1)
    t_model = tm.resnet18(num_classes=4).train()
    e_model = em.resnet18(num_classes=4).train()
    e_model.load_state_dict(to_ember_state(t_model.state_dict()))
    # 64 x 64 leaves layer4 2 x 2 pixels: batch norm over 12 values per channel (with 1 x 1
    # it normalises 3 values, and float32 rounding dominates the gradients)
    x = np.random.default_rng(2).standard_normal((3, 3, 64, 64)).astype(np.float32)
    labels = np.array([0, 3, 1])
    t_loss = torch.nn.functional.cross_entropy(t_model(torch.from_numpy(x)),
                                               torch.from_numpy(labels))
    e_loss = ember.nn.functional.cross_entropy(e_model(ember.from_numpy(x)),
                                               ember.from_numpy(labels))
    t_loss.backward()
    e_loss.backward()
    np.testing.assert_allclose(e_loss.item(), t_loss.item(), rtol=1e-5)
    t_params = dict(t_model.named_parameters())
    for k, p in e_model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[k].grad.numpy(), rtol=1e-3,
                                   atol=1e-4, err_msg=k)
    t_buffers = dict(t_model.named_buffers())
    for k, b in e_model.named_buffers():
        np.testing.assert_allclose(b.numpy(), t_buffers[k].numpy(), rtol=1e-5, atol=1e-6,
                                   err_msg=k)


def test_initialisation_follows_torchvision():
    """Init schemes by their statistics (the generators differ, the distributions not)."""
    ember.manual_seed(0)
    model = em.resnet18()
    conv = model.layer3[0].conv2.weight  # kaiming normal, fan_out, relu gain
    fan_out = conv.shape[0] * conv.shape[2] * conv.shape[3]
    assert abs(float(conv.std()) / np.sqrt(2.0 / fan_out) - 1) < 0.02
    assert float(model.layer3[0].bn2.weight.min()) == 1.0
    assert float(em.resnet18(zero_init_residual=True).layer1[0].bn2.weight.abs().max()) == 0
    vit = em.VisionTransformer(image_size=64, patch_size=16, num_layers=1, num_heads=2,
                               hidden_dim=256, mlp_dim=64)
    assert float(vit.heads.head.weight.abs().max()) == 0.0
    assert abs(float(vit.encoder.pos_embedding.std()) - 0.02) < 0.002
    linear = em.mobilenet_v2().classifier[1].weight
    assert abs(float(linear.std()) - 0.01) < 0.0002


WEIGHTS = ["ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights",
           "ResNet152_Weights", "ResNeXt50_32X4D_Weights", "Wide_ResNet50_2_Weights",
           "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
           "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights",
           "AlexNet_Weights", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights",
           "MobileNet_V2_Weights", "ViT_B_16_Weights"]


def _same_meta(e, t):
    assert set(e) == set(t)
    for k in t:
        if k == "_metrics":
            for data, values in t[k].items():
                for metric, value in values.items():
                    assert e[k][data][metric] == value or (np.isnan(value) and np.isnan(
                        e[k][data][metric])), (k, metric)
        else:
            assert e[k] == t[k], k


@pytest.mark.parametrize("name", WEIGHTS)
def test_weights_enums_match_torchvision(name):
    e_enum, t_enum = getattr(em, name), getattr(tm, name)
    assert [m.name for m in e_enum] == [m.name for m in t_enum]
    assert e_enum.DEFAULT.name == t_enum.DEFAULT.name
    for e, t in zip(e_enum, t_enum):
        assert e.url == t.url
        assert repr(e) == repr(t)
        _same_meta(e.meta, t.meta)
        assert e.transforms.func.__name__ == t.transforms.func.__name__
        assert e.transforms.args == t.transforms.args
        keywords = {k: (v.value if hasattr(v, "value") else v)
                    for k, v in t.transforms.keywords.items()}
        assert {k: (v.value if hasattr(v, "value") else v)
                for k, v in e.transforms.keywords.items()} == keywords
    assert e_enum.verify("IMAGENET1K_V1") is e_enum.IMAGENET1K_V1
    assert e_enum.verify(f"{name}.DEFAULT") is e_enum.DEFAULT


def test_weights_transforms_preprocess_like_torchvision():
    from PIL import Image

    image = Image.fromarray(np.random.default_rng(0).integers(0, 256, (300, 260, 3),
                                                               dtype=np.uint8))
    for weights in ("ResNet50_Weights", "ViT_B_16_Weights"):
        for member in getattr(tm, weights):
            t_out = member.transforms()(image)
            e_out = getattr(em, weights)[member.name].transforms()(image)
            np.testing.assert_allclose(e_out.numpy(), t_out.numpy(), atol=1e-6)
            assert repr(getattr(em, weights)[member.name].transforms()) == \
                repr(member.transforms())


@pytest.fixture
def torch_home(tmp_path, monkeypatch):
    """A temporary TORCH_HOME (monkeypatch restores the environment)."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    return tmp_path


def test_weights_load_from_the_hub_cache(torch_home):
    torch.manual_seed(3)
    t_model = tm.squeezenet1_1().eval()
    checkpoints = torch_home / "hub" / "checkpoints"
    checkpoints.mkdir(parents=True)
    torch.save(t_model.state_dict(), checkpoints / "squeezenet1_1-b8a52dc0.pth")
    e_model = em.squeezenet1_1(weights=em.SqueezeNet1_1_Weights.DEFAULT).eval()
    x = np.random.default_rng(0).standard_normal((1, 3, 40, 40)).astype(np.float32)
    with torch.no_grad(), ember.no_grad():
        np.testing.assert_allclose(e_model(ember.from_numpy(x)).numpy(),
                                   t_model(torch.from_numpy(x)).numpy(), rtol=1e-4, atol=1e-5)
    with pytest.warns(UserWarning, match="deprecated"):
        legacy = em.squeezenet1_1(pretrained=True)
    assert list(legacy.state_dict()) == list(e_model.state_dict())
    by_name = em.get_model("squeezenet1_1", weights="DEFAULT")
    np.testing.assert_array_equal(by_name.features[0].weight.detach().numpy(),
                                  t_model.features[0].weight.detach().numpy())


def test_offline_error_names_the_url_and_the_cache_path(torch_home):
    with pytest.raises(RuntimeError) as info:
        em.resnet18(weights="IMAGENET1K_V1")
    message = str(info.value)
    assert "https://download.pytorch.org/models/resnet18-f37072fd.pth" in message
    assert os.path.join(str(torch_home), "hub", "checkpoints", "resnet18-f37072fd.pth") in message
    assert not list((torch_home / "hub" / "checkpoints").iterdir())  # no partial file left


def test_registry_and_legacy_interface():
    assert {"resnet18", "resnet50", "vgg16_bn", "alexnet", "squeezenet1_0", "mobilenet_v2",
            "vit_b_16"} <= set(em.list_models())
    assert em.list_models(include="resnet*", exclude="*101") == \
        [n for n in tm.list_models(include="resnet*", exclude="*101")
         if n in em.list_models()]
    assert em.get_model_weights("vgg16") is em.VGG16_Weights
    assert em.get_model_weights(em.resnet18) is em.ResNet18_Weights
    assert em.get_weight("MobileNet_V2_Weights.IMAGENET1K_V2") is \
        em.MobileNet_V2_Weights.IMAGENET1K_V2
    model = em.get_model("resnet18", num_classes=3)
    assert model.fc.out_features == 3
    with pytest.warns(UserWarning):
        assert em.resnet18(pretrained=False, num_classes=3).fc.out_features == 3
    for bad in (lambda: em.get_model("resnet9000"), lambda: em.get_weight("nonsense"),
                lambda: em.resnet18(weights=em.ResNet50_Weights.DEFAULT),
                lambda: em.resnet18(weights="DEFAULT", num_classes=10)):
        with pytest.raises((ValueError, TypeError)) as e_info:
            bad()
        assert "resnet9000" in str(e_info.value) or e_info.type in (ValueError, TypeError)
    with pytest.raises(ValueError, match="num_classes"):
        tm.resnet18(weights="DEFAULT", num_classes=10)

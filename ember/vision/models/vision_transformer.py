"""Vision Transformer (Dosovitskiy et al., 2020) in torchvision's layout.

    image (N, 3, S, S) -> conv_proj (patch_size x patch_size, stride patch_size) -> tokens
    (N, (S/p)^2, D) -> prepend class_token -> + pos_embedding -> encoder layers
    (pre-norm: x + attention(ln_1(x)); x + mlp(ln_2(x))) -> ln -> heads(token 0)

Read next: `ember/vision/datasets/` (what these models are trained on).
"""
import math
from collections import OrderedDict
from functools import partial

import ember
from ember import nn

from ..ops.misc import MLP
from ..transforms._presets import ImageClassification, InterpolationMode
from ._api import Weights, WeightsEnum, _ovewrite_named_param, builder
from ._meta import _IMAGENET_CATEGORIES

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "vit_b_16", "interpolate_embeddings"]


class MLPBlock(MLP):
    """The encoder's feed-forward part: Linear -> GELU -> Dropout -> Linear -> Dropout."""
    _version = 2

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # checkpoints older than version 2 named the two linear layers linear_1 and linear_2
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            for i in range(2):
                for kind in ("weight", "bias"):
                    old_key = f"{prefix}linear_{i + 1}.{kind}"
                    if old_key in state_dict:
                        state_dict[f"{prefix}{3 * i}.{kind}"] = state_dict.pop(old_key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _check_tokens(x):
    if x.ndim != 3:
        raise AssertionError(f"Expected (batch_size, seq_length, hidden_dim) got {x.shape}")


class EncoderBlock(nn.Module):
    """One pre-norm transformer layer: self-attention and MLP, each with a residual."""

    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input):
        """(N, L, D) -> (N, L, D)."""
        _check_tokens(input)
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Learned position embeddings, dropout, the encoder layers and a final LayerNorm."""

    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                 attention_dropout, norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(ember.empty(1, seq_length, hidden_dim).normal_(
            std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers = OrderedDict((f"encoder_layer_{i}", EncoderBlock(
            num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer))
            for i in range(num_layers))
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input):
        """(N, L, D) tokens -> encoded tokens."""
        _check_tokens(input)
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """ViT for square images of `image_size` cut into patches of `patch_size`. A
    conv-stem (`conv_stem_configs`) is not supported."""

    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
                 dropout=0.0, attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise AssertionError("Input shape indivisible by patch size!")
        if conv_stem_configs is not None:
            raise NotImplementedError("VisionTransformer(conv_stem_configs=...) is not "
                                      "supported by ember.vision")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1  # the patches and the class token
        self.class_token = nn.Parameter(ember.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        self._init_weights()

    def _init_weights(self):
        fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * \
            self.conv_proj.kernel_size[1]
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        if hasattr(self.heads, "pre_logits"):
            nn.init.trunc_normal_(self.heads.pre_logits.weight,
                                  std=math.sqrt(1 / self.heads.pre_logits.in_features))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, _, h, w = x.shape
        if h != self.image_size:
            raise AssertionError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise AssertionError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        patches = (h // self.patch_size) * (w // self.patch_size)
        return self.conv_proj(x).reshape(n, self.hidden_dim, patches).permute(0, 2, 1)

    def forward(self, x):
        """Class logits of an (N, 3, image_size, image_size) batch."""
        x = self._process_input(x)
        x = ember.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.heads(self.encoder(x)[:, 0])


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights,
                        progress, **kwargs):
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        _ovewrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                              num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
                              mlp_dim=mlp_dim, **kwargs)
    if weights:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


_SWAG = {"categories": _IMAGENET_CATEGORIES, "recipe": "https://github.com/facebookresearch/SWAG",
         "license": "https://github.com/facebookresearch/SWAG/blob/main/LICENSE"}


class ViT_B_16_Weights(WeightsEnum):
    """vit_b_16's checkpoints."""
    IMAGENET1K_V1 = Weights(
        url="https://download.pytorch.org/models/vit_b_16-c867db91.pth",
        transforms=partial(ImageClassification, crop_size=224),
        meta={"categories": _IMAGENET_CATEGORIES, "num_params": 86567656,
              "min_size": (224, 224),
              "recipe": "https://github.com/pytorch/vision/tree/main/references/"
                        "classification#vit_b_16",
              "_metrics": {"ImageNet-1K": {"acc@1": 81.072, "acc@5": 95.318}},
              "_ops": 17.564, "_file_size": 330.285,
              "_docs": """
                These weights were trained from scratch by using a modified version of `DeIT
                <https://arxiv.org/abs/2012.12877>`_'s training recipe.
            """})
    IMAGENET1K_SWAG_E2E_V1 = Weights(
        url="https://download.pytorch.org/models/vit_b_16_swag-9ac1b537.pth",
        transforms=partial(ImageClassification, crop_size=384, resize_size=384,
                           interpolation=InterpolationMode.BICUBIC),
        meta={**_SWAG, "num_params": 86859496, "min_size": (384, 384),
              "_metrics": {"ImageNet-1K": {"acc@1": 85.304, "acc@5": 97.65}},
              "_ops": 55.484, "_file_size": 331.398,
              "_docs": """
                These weights are learnt via transfer learning by end-to-end fine-tuning the original
                `SWAG <https://arxiv.org/abs/2201.08371>`_ weights on ImageNet-1K data.
            """})  # noqa: E501  (torchvision's text, kept as it is)
    IMAGENET1K_SWAG_LINEAR_V1 = Weights(
        url="https://download.pytorch.org/models/vit_b_16_lc_swag-4e70ced5.pth",
        transforms=partial(ImageClassification, crop_size=224, resize_size=224,
                           interpolation=InterpolationMode.BICUBIC),
        meta={**_SWAG, "recipe": "https://github.com/pytorch/vision/pull/5793",
              "num_params": 86567656, "min_size": (224, 224),
              "_metrics": {"ImageNet-1K": {"acc@1": 81.886, "acc@5": 96.18}},
              "_ops": 17.564, "_file_size": 330.285,
              "_docs": """
                These weights are composed of the original frozen `SWAG <https://arxiv.org/abs/2201.08371>`_ trunk
                weights and a linear classifier learnt on top of them trained on ImageNet-1K data.
            """})  # noqa: E501  (torchvision's text, kept as it is)
    DEFAULT = IMAGENET1K_V1


@builder(ViT_B_16_Weights, ViT_B_16_Weights.IMAGENET1K_V1)
def vit_b_16(*, weights=None, progress=True, **kwargs):
    """ViT-B/16: 12 layers, 12 heads, width 768, MLP 3072, 16x16 patches."""
    weights = ViT_B_16_Weights.verify(weights)
    return _vision_transformer(16, 12, 12, 768, 3072, weights, progress, **kwargs)


def interpolate_embeddings(image_size, patch_size, model_state, interpolation_mode="bicubic",
                           reset_heads=False):
    """Resize a checkpoint's position embeddings for another image size (the class token's
    embedding kept, the patch grid's interpolated with align_corners=True)."""
    pos_embedding = model_state["encoder.pos_embedding"]
    n, seq_length, hidden_dim = pos_embedding.shape
    if n != 1:
        raise ValueError(f"Unexpected position embedding shape: {pos_embedding.shape}")
    new_seq_length = (image_size // patch_size) ** 2
    if new_seq_length + 1 == seq_length:
        return model_state
    side = int(math.sqrt(seq_length - 1))
    if side * side != seq_length - 1:
        raise ValueError(f"seq_length is not a perfect square! Instead got seq_length_1d * "
                         f"seq_length_1d = {side * side} and seq_length = {seq_length - 1}")
    grid = pos_embedding[:, 1:, :].permute(0, 2, 1).reshape(1, hidden_dim, side, side)
    grid = nn.functional.interpolate(grid, size=image_size // patch_size,
                                     mode=interpolation_mode, align_corners=True)
    grid = grid.reshape(1, hidden_dim, new_seq_length).permute(0, 2, 1)
    model_state["encoder.pos_embedding"] = ember.cat([pos_embedding[:, :1, :], grid], dim=1)
    if reset_heads:
        model_state = OrderedDict((k, v) for k, v in model_state.items()
                                  if not k.startswith("heads"))
    return model_state

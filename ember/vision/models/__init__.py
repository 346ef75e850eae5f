"""torchvision.models: classification networks with torchvision's module trees and
parameter names (so its checkpoints load with strict=True), their Weights enums, and the
registry (`get_model("resnet50", weights="DEFAULT")`, `list_models()`).

Read `_api.py` first, then `resnet.py`.
"""
# ruff: noqa: F401, F403
from ._api import (
    Weights,
    WeightsEnum,
    get_model,
    get_model_builder,
    get_model_weights,
    get_weight,
    list_models,
)
from .alexnet import *
from .mobilenetv2 import *
from .resnet import *
from .squeezenet import *
from .vgg import *
from .vision_transformer import *

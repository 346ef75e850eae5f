"""ember.onnx (torch.onnx): `import torch.onnx` works, but exporting does not.

An ONNX export needs the model as a graph (torch captures it with torch.export or
TorchScript); ember runs Python eagerly and captures no graph, so `export` raises
NotImplementedError saying so. `is_in_onnx_export()` is False, so models that check it take
their ordinary path."""
__all__ = ["export", "dynamo_export", "is_in_onnx_export"]


def export(model, args=(), f=None, **kwargs):
    """Not supported: raises NotImplementedError (ember captures no graph to export)."""
    raise NotImplementedError("ember.onnx.export: exporting to ONNX needs a captured graph of "
                              "the model (torch.export / TorchScript), which ember does not "
                              "have; export with PyTorch from a state_dict saved by ember.save")


def dynamo_export(model, *model_args, **model_kwargs):
    """Not supported: raises NotImplementedError, as `export`."""
    export(model, model_args)


def is_in_onnx_export():
    """False: ember never exports."""
    return False

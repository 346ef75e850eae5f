"""DataParallel: torch's single-process wrapper that splits a batch over the local GPUs.

    model = nn.DataParallel(model)      # on a CPU-only machine: the module, called as is
    model.module                        # the wrapped module; state_dict keys "module.*"

Without a GPU, torch's DataParallel keeps no devices and its forward calls the module
directly; so does this one. With one GPU it moves the module and the inputs there. Splitting
a batch over several GPUs (replicate / scatter / gather) is not implemented: with more than
one GPU, forward raises NotImplementedError (DistributedDataParallel, one process per GPU,
is the way torch recommends too).

Read next: `distributed.py`.
"""
from ... import cuda
from ..._device import device as make_device
from ..modules.module import Module
from .distributed import _to_device

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Runs `module` on the batch; on a machine with GPUs, on `device_ids[0]` (see the
    module doc for what ember does not do)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        if not cuda.is_available():
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        self.dim = dim
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(device_ids[0] if output_device is None else output_device)
        self.src_device_obj = make_device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        """The module's forward (on device_ids[0] when there are GPUs)."""
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        if len(self.device_ids) > 1:
            raise NotImplementedError("DataParallel over several GPUs (replicate, scatter, "
                                      "gather) is not implemented in ember; use one GPU, or "
                                      "DistributedDataParallel with one process per GPU")
        inputs, kwargs = _to_device((inputs, kwargs), self.src_device_obj)
        return self.module(*inputs, **kwargs)


def _index(device):
    """A GPU index from an int, 'cuda:1' or an ember device."""
    if isinstance(device, int):
        return device
    return make_device(device).index or 0

"""ember.utils.tensorboard (torch.utils.tensorboard): `SummaryWriter`, writing TensorBoard
event files through the `tensorboard` package (pip extra `tensorboard`). Without the package,
importing this module raises torch's ImportError. Read writer.py."""
try:
    from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: F401
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above") from None

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]

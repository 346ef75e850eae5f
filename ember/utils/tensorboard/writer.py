"""`SummaryWriter`: scalars, histograms, images and text for TensorBoard.

Events are the `tensorboard` package's protocol buffers, written by its EventFileWriter to
`log_dir/events.out.tfevents.*` (default `runs/<date>_<host><comment>`), so TensorBoard shows
them as it shows torch's. Supported: add_scalar, add_scalars (one sub-writer per series, as in
torch), add_histogram, add_image, add_images, add_text, flush, close, `with`. What needs a
traced graph or torch-specific plugins -- add_graph, add_hparams, add_embedding, add_audio,
add_video, add_mesh, add_pr_curve, add_figure -- raises NotImplementedError.
"""
import io
import os
import socket
import time
from datetime import datetime

import numpy as np
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["SummaryWriter"]


def _numpy(value):
    """A tensor, array or number as a NumPy array (on the host, detached)."""
    from ..._tensor import Tensor

    if isinstance(value, Tensor):
        value = value.detach().cpu()
        if value.dtype.itemsize == 2 and value.is_floating_point():
            value = value.float()
        return np.asarray(value)
    return np.asarray(value)


def _histogram(values, bins, max_bins=None):
    values = _numpy(values).astype(np.float64).ravel()
    counts, edges = np.histogram(values, bins=bins)
    nonzero = np.flatnonzero(counts)
    start, end = (nonzero[0], nonzero[-1] + 1) if nonzero.size else (0, 0)
    return HistogramProto(min=float(values.min()), max=float(values.max()), num=values.size,
                          sum=float(values.sum()), sum_squares=float(np.dot(values, values)),
                          bucket_limit=edges[1:][start:end].tolist(),
                          bucket=counts[start:end].tolist())


def _image(tensor, dataformats):
    """A Summary.Image (PNG) from an image in `dataformats` layout (floats in [0, 1])."""
    from PIL import Image

    array = _numpy(tensor)
    layout = dataformats.upper()
    if layout == "HW":
        array, layout = array[None], "CHW"
    array = np.transpose(array, [layout.index(c) for c in "HWC"]) if "C" in layout else array
    if array.shape[-1] == 1:
        array = array[..., 0]
    if array.dtype != np.uint8:
        array = (np.clip(array, 0, 1) * 255).round().astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    height, width = array.shape[:2]
    channels = 1 if array.ndim == 2 else array.shape[2]
    return Summary.Image(height=height, width=width, colorspace=channels,
                         encoded_image_string=buffer.getvalue())


class SummaryWriter:
    """Writes TensorBoard events into `log_dir` (see the module docstring)."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self._writer = EventFileWriter(self.log_dir, max_queue, flush_secs, filename_suffix)
        self._series = {}  # add_scalars' sub-writers, by folder

    def get_logdir(self):
        """The folder the event files go to."""
        return self.log_dir

    def _add(self, summary, global_step, walltime, writer=None):
        event = Event(summary=summary, wall_time=time.time() if walltime is None else walltime)
        if global_step is not None:
            event.step = int(global_step)
        (writer or self._writer).add_event(event)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One point of the series `tag`."""
        value = float(_numpy(scalar_value).reshape(()))
        self._add(Summary(value=[Summary.Value(tag=tag, simple_value=value)]), global_step,
                  walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """One point of several series drawn in one chart: each goes to its own sub-folder
        `log_dir/<main_tag>_<tag>`, as torch does."""
        for tag, value in tag_scalar_dict.items():
            folder = os.path.join(self.log_dir, f"{main_tag.replace('/', '_')}_{tag}")
            writer = self._series.get(folder)
            if writer is None:
                writer = self._series[folder] = EventFileWriter(folder, self.max_queue,
                                                                self.flush_secs,
                                                                self.filename_suffix)
            summary = Summary(value=[Summary.Value(tag=main_tag,
                                                   simple_value=float(_numpy(value)))])
            self._add(summary, global_step, walltime, writer)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """The distribution of `values` ("tensorflow" bins: NumPy's "auto" here)."""
        bins = "auto" if bins == "tensorflow" else bins
        summary = Summary(value=[Summary.Value(tag=tag, histo=_histogram(values, bins))])
        self._add(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """An image (CHW by default; floats in [0, 1] or uint8), stored as PNG."""
        summary = Summary(value=[Summary.Value(tag=tag, image=_image(img_tensor, dataformats))])
        self._add(summary, global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images tiled into one grid image (8 per row, as torch)."""
        array = _numpy(img_tensor)
        layout = dataformats.upper()
        array = np.transpose(array, [layout.index(c) for c in "NCHW"])
        n, c, h, w = array.shape
        cols = min(n, 8)
        rows = -(-n // cols)
        grid = np.zeros((c, rows * h, cols * w), array.dtype)
        for i in range(n):
            r, k = divmod(i, cols)
            grid[:, r * h:(r + 1) * h, k * w:(k + 1) * w] = array[i]
        self.add_image(tag, grid, global_step, walltime, dataformats="CHW")

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A text entry (markdown), under `tag/text_summary` as torch writes it."""
        plugin = SummaryMetadata.PluginData(plugin_name="text",
                                            content=TextPluginData(version=0).SerializeToString())
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        value = Summary.Value(tag=tag + "/text_summary",
                              metadata=SummaryMetadata(plugin_data=plugin), tensor=tensor)
        self._add(Summary(value=[value]), global_step, walltime)

    def _unsupported(self, name, why):
        raise NotImplementedError(f"SummaryWriter.{name}: {why}")

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """Not supported: the graph would come from a TorchScript trace, which ember lacks."""
        self._unsupported("add_graph", "needs a traced TorchScript graph, which ember lacks")

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Not supported yet: the hparams plugin's protocol buffers are not written."""
        self._unsupported("add_hparams", "the hparams plugin is not implemented in ember")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Not supported yet: the projector plugin's files are not written."""
        self._unsupported("add_embedding", "the projector plugin is not implemented in ember")

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Not supported yet: render the figure to an array and use add_image."""
        self._unsupported("add_figure", "render the figure to an array and call add_image")

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Not supported: WAV encoding is not implemented in ember."""
        self._unsupported("add_audio", "WAV encoding is not implemented in ember")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        """Not supported: GIF encoding of videos is not implemented in ember."""
        self._unsupported("add_video", "video encoding is not implemented in ember")

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        """Not supported: the mesh plugin is not implemented in ember."""
        self._unsupported("add_mesh", "the mesh plugin is not implemented in ember")

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        """Not supported: the PR-curve plugin is not implemented in ember."""
        self._unsupported("add_pr_curve", "the PR-curve plugin is not implemented in ember")

    def flush(self):
        """Write pending events to disk."""
        self._writer.flush()
        for writer in self._series.values():
            writer.flush()

    def close(self):
        """Flush and close the event files."""
        self._writer.close()
        for writer in self._series.values():
            writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

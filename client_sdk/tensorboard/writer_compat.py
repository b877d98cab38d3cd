"""The rest of torch's and tensorboardX's SummaryWriter surface: file_writer, all_writers, aliases, rare methods."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any

from . import convert as tc
from .file_writer import FileWriter

log = logging.getLogger("paneboard")


class WriterCompat:
    """Mixed into paneboard.SummaryWriter: what libraries reach for besides the add_* methods.

    `file_writer` / `_get_file_writer()` take Summary and Event protos (stable-baselines3's hparams callback,
    Ultralytics); `all_writers` maps the log_dir to it, as torch's does; tensorboardX's names (`logdir`, `kwargs`,
    `scalar_dict`, `export_scalars_to_json`, `use_metadata`) are here too.
    """

    log_dir: str
    env: str

    def _init_compat(self, kwargs: dict[str, Any]) -> None:
        self.file_writer = FileWriter(self)  # type: ignore[arg-type]  # self is the SummaryWriter this mixes into
        self.all_writers = {self.log_dir: self.file_writer}
        self.default_bins = tc.tensorflow_bins().tolist()
        self.kwargs = kwargs                 # tensorboardX keeps extra constructor keywords here
        self.scalar_dict: dict[str, list[list[float]]] = {}   # tensorboardX: add_scalars' points, for JSON export

    @property
    def logdir(self) -> str:
        """tensorboardX's name for log_dir."""
        return self.log_dir

    def _get_file_writer(self) -> FileWriter:
        return self.file_writer

    def add_tensor(self, tag: str, tensor: Any, global_step: Any = None, walltime: float | None = None) -> None:
        """torch's plugin-less tensor summary: TensorBoard reads a one-element float as a scalar, so do we;
        larger tensors have no dashboard there and are not stored here (logged once)."""
        arr = tc.make_np(tensor, "tensor")
        if arr.size == 1 and arr.dtype.kind in "fiu":
            self.add_scalar(tag, float(arr.reshape(-1)[0]), global_step, walltime)  # type: ignore[attr-defined]
        else:
            self.file_writer._warn(f"tensor:{tag}", "add_tensor(%r) of shape %s has no pane (skipped)",
                                   tag, arr.shape)

    def add_onnx_graph(self, prototxt: Any = None, onnx_model_file: Any = None) -> None:  # torch's, tbx's name
        """Not shown: paneboard draws graphs from torch modules (add_graph), not ONNX files. Logged once."""
        self.file_writer._warn("onnx", "add_onnx_graph is not shown; add_graph(model, input) draws the model graph")

    def add_openvino_graph(self, xmlname: Any) -> None:
        """Not shown (tensorboardX's OpenVINO graphs), as add_onnx_graph. Logged once."""
        self.file_writer._warn("openvino", "add_openvino_graph is not shown; add_graph(model, input) draws the "
                               "model graph")

    def export_scalars_to_json(self, path: str) -> None:
        """tensorboardX: add_scalars' points {"<log_dir>/<main_tag>/<key>": [[wall, step, value], ...]}, then cleared."""
        with open(path, "w") as f:
            json.dump(self.scalar_dict, f)
        self.scalar_dict = {}

    @contextlib.contextmanager
    def use_metadata(self, *, global_step: Any = None, walltime: float | None = None) -> Iterator[Any]:
        """tensorboardX: a default step/walltime for file_writer.add_event/add_summary calls in the block."""
        with self.file_writer.use_metadata(global_step=global_step, walltime=walltime):
            yield self

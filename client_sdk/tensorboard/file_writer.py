"""SummaryWriter.file_writer: torch's/tensorboardX's FileWriter, taking their Summary and Event protos."""

from __future__ import annotations

import base64
import contextlib
import logging
from collections.abc import Callable, Iterator
from time import time as _now
from typing import Any, Protocol

import numpy as np

from . import summaries as ts


class _Target(Protocol):
    """What the file writer writes through: its SummaryWriter (typed here without importing it back)."""

    env: str
    log_dir: str
    _put: Callable[[dict[str, Any]], int]

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = ..., walltime: float | None = ...,
                   new_style: bool = ..., double_precision: bool = ...) -> None: ...
    def add_text(self, tag: str, text_string: str, global_step: Any = ..., walltime: float | None = ...) -> None: ...
    def _record(self, kind: str, tag: Any, record: dict[str, Any], global_step: Any, walltime: Any) -> None: ...
    def _image(self, tag: str, data: str, mime: str, global_step: Any, walltime: Any) -> None: ...
    def add_histogram_raw(self, tag: str, min: float, max: float, num: float, sum: float,  # noqa: A002
                          sum_squares: float, bucket_limits: Any, bucket_counts: Any, global_step: Any = ...,
                          walltime: float | None = ...) -> None: ...
    def add_onnx_graph(self, prototxt: Any = ..., onnx_model_file: Any = ...) -> None: ...
    def add_openvino_graph(self, xmlname: Any) -> None: ...
    def flush(self, timeout: float | None = ...) -> bool: ...
    def close(self, timeout: float | None = ...) -> bool: ...

log = logging.getLogger("paneboard")

# TensorFlow DataType numbers (types.proto) → numpy dtype and the TensorProto field holding unpacked values.
_DTYPES: dict[int, tuple[str, str]] = {1: ("<f4", "float_val"), 2: ("<f8", "double_val"), 3: ("<i4", "int_val"),
                                       9: ("<i8", "int64_val"), 10: ("?", "bool_val"), 19: ("<f2", "half_val")}
_DT_STRING = 7
_TEXT_SUFFIX = "/text_summary"  # torch's add_text writes "<tag>/text_summary"; the writer's pane is <tag>


def tensor_array(t: Any) -> np.ndarray:
    """A TensorProto (tensorboard's or tensorboardX's) as a numpy array, without TensorFlow."""
    shape = [int(d.size) for d in t.tensor_shape.dim]
    if t.dtype == _DT_STRING:
        return np.array(list(t.string_val), dtype=object).reshape(shape)
    if t.dtype not in _DTYPES:
        raise ValueError(f"tensor dtype {t.dtype} is not supported")
    dtype, field = _DTYPES[t.dtype]
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, dtype).reshape(shape)
    vals = list(getattr(t, field))
    arr = np.array(vals, dtype=np.uint16).view(dtype) if t.dtype == 19 else np.array(vals, dtype=dtype)
    n = int(np.prod(shape)) if shape else 1
    if arr.size == 1 and n != 1:  # TensorFlow stores a tensor of one repeated value as that value once
        arr = np.full(n, arr[0], dtype=arr.dtype)
    return arr.reshape(shape)


def _text(arr: np.ndarray) -> str:
    cells = [b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b) for b in arr.reshape(-1)]
    return "\n\n".join(cells)


def _hparams_data(content: bytes) -> Any:
    """The hparams plugin's HParamsPluginData: tensorboard's proto class, else tensorboardX's (same wire)."""
    try:
        from tensorboard.plugins.hparams import plugin_data_pb2 as hp_pb2
    except ImportError:
        from tensorboardX.proto import plugin_hparams_pb2 as hp_pb2  # type: ignore[import-untyped]
    return hp_pb2.HParamsPluginData.FromString(content)


def _pvalue(v: Any) -> Any:
    kind = v.WhichOneof("kind")
    return getattr(v, kind) if kind in ("bool_value", "number_value", "string_value") else None


class FileWriter:
    """What torch's and tensorboardX's FileWriter offer, writing into its SummaryWriter's env.

    Summaries become the panes the writer's own add_* methods make (simple and tensor scalars, images, GIFs,
    histograms, audio, text, PR curves); hparams' experiment / session-start summaries become the env's hparams
    session "." (metrics read from the line panes of the experiment's metric tags). Anything else is skipped with
    one logged warning per tag and reason: a library's logging call never raises for a proto we cannot show.
    """

    def __init__(self, writer: _Target) -> None:
        self._writer = writer
        self.event_writer = self  # torch's EventFileWriter sits here; its add_event/flush/close are ours
        self._plugins: dict[str, tuple[str, bytes]] = {}    # TensorBoard sends plugin metadata with a tag's first value
        self._hparams: dict[str, Any] = {"hparams": None, "domains": {}, "metrics": []}
        self._warned: set[str] = set()
        self._default: dict[str, Any] = {}  # tensorboardX's use_metadata(): step/walltime for calls without them

    def get_logdir(self) -> str:
        return self._writer.log_dir

    def add_event(self, event: Any, step: int | None = None, walltime: float | None = None) -> None:
        """An Event proto: its summary or graph_def; file_version / session_log records carry nothing to show."""
        step = self._default.get("global_step") if step is None else step
        walltime = self._default.get("walltime") if walltime is None else walltime
        wall = float(walltime) if walltime is not None else (event.wall_time or _now())
        step = int(step) if step is not None else int(event.step)
        what = event.WhichOneof("what")
        if what == "summary":
            self.add_summary(event.summary, step, wall)
        elif what == "graph_def":
            self._graph_bytes(event.graph_def)

    def add_summary(self, summary: Any, global_step: int | None = None, walltime: float | None = None) -> None:
        """A Summary proto (bytes accepted too, as TensorFlow's writer takes them): each value becomes a point."""
        if isinstance(summary, bytes):
            summary = self._summary_class().FromString(summary)
        global_step = self._default.get("global_step") if global_step is None else global_step
        walltime = self._default.get("walltime") if walltime is None else walltime
        step = 0 if global_step is None else int(global_step)
        wall = _now() if walltime is None else float(walltime)
        for v in summary.value:
            try:
                self._value(v, step, wall)
            except (ValueError, TypeError, IndexError) as exc:
                self._warn(f"bad:{v.tag}", "skipped a value of tag %r at step %d that cannot be read (%s)",
                           v.tag, step, exc)

    def add_graph(self, graph_profile: Any, walltime: float | None = None) -> None:
        """torch's graph(model, input) result ((GraphDef, RunMetadata)) or a GraphDef: the `graph` pane."""
        graph_def = graph_profile[0] if isinstance(graph_profile, tuple) else graph_profile
        self._graph_bytes(graph_def if isinstance(graph_def, bytes) else graph_def.SerializeToString())

    def add_onnx_graph(self, graph: Any, walltime: float | None = None) -> None:
        self._writer.add_onnx_graph(graph)

    def add_openvino_graph(self, graph: Any, walltime: float | None = None) -> None:
        self._writer.add_openvino_graph(graph)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    @contextlib.contextmanager
    def use_metadata(self, *, global_step: Any = None, walltime: float | None = None) -> Iterator[FileWriter]:
        """tensorboardX: a default step/walltime for the add_event/add_summary calls of the block."""
        if global_step is None and walltime is None:
            raise ValueError("use_metadata needs global_step or walltime")
        self._default = {"global_step": global_step, "walltime": walltime}
        try:
            yield self
        finally:
            self._default = {}

    def reopen(self) -> None:
        """Nothing to reopen: the writer's next add_* after close() restarts its run by itself."""

    # ----------------------------------------------------------------------------------------- values

    def _value(self, v: Any, step: int, wall: float) -> None:
        tag = v.tag
        if v.HasField("metadata") and v.metadata.plugin_data.plugin_name:
            self._plugins[tag] = (v.metadata.plugin_data.plugin_name, v.metadata.plugin_data.content)
        plugin, content = self._plugins.get(tag, ("", b""))
        kind = v.WhichOneof("value")
        w = self._writer
        if kind == "simple_value":
            w.add_scalar(tag, float(v.simple_value), step, wall)
        elif kind == "histo":
            h = v.histo
            w.add_histogram_raw(tag, h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit),
                                list(h.bucket), step, wall)
        elif kind == "image":
            data = v.image.encoded_image_string
            mime = ts.image_mime(data)
            if mime is None:
                self._warn(f"img:{tag}", "skipped images of tag %r in an unknown format", tag)
                return
            w._image(tag, base64.b64encode(data).decode("ascii"), mime, step, wall)
        elif kind == "audio":
            a = v.audio
            w._record("media", tag, {"type": "audio", "data": base64.b64encode(a.encoded_audio_string).decode("ascii"),
                                     "mime": a.content_type or "audio/wav", "sample_rate": int(a.sample_rate)},
                      step, wall)
        elif plugin == "hparams":
            self._hparams_summary(content)
        elif kind == "tensor":
            self._tensor(tag, plugin, v.tensor, step, wall)
        else:
            self._warn(f"empty:{tag}", "skipped values of tag %r without data", tag)

    def _tensor(self, tag: str, plugin: str, t: Any, step: int, wall: float) -> None:
        arr = tensor_array(t)
        if plugin == "scalars" or (not plugin and arr.size == 1 and arr.dtype.kind == "f"):
            self._writer.add_scalar(tag, float(arr.reshape(-1)[0]), step, wall)
        elif plugin == "text":
            win = tag[: -len(_TEXT_SUFFIX)] if tag.endswith(_TEXT_SUFFIX) and len(tag) > len(_TEXT_SUFFIX) else tag
            self._writer.add_text(win, _text(arr), step, wall)
        elif plugin == "pr_curves":
            if arr.ndim != 2 or arr.shape[0] != 6:
                raise ValueError(f"a PR curve tensor has shape {arr.shape}, not [6, T]")
            self._writer._record("pr_curve", tag, ts.pr_record(arr.astype(np.float64)), step, wall)
        else:
            self._warn(f"plugin:{plugin}:{tag}", "tag %r of TensorBoard plugin %r is not shown by paneboard (skipped)",
                       tag, plugin or "(none)")

    def _hparams_summary(self, content: bytes) -> None:
        """exp (hparam types, discrete domains, metric tags) and ssi (values) → one hparams op, sent once both
        are known and again when either changes; sei (the session's end status) has nothing to show."""
        data = _hparams_data(content)
        which = data.WhichOneof("data")
        hp = self._hparams
        if which == "experiment":
            exp = data.experiment
            hp["domains"] = {i.name: [_pvalue(x) for x in i.domain_discrete.values]
                             for i in exp.hparam_infos if i.HasField("domain_discrete")}
            hp["metrics"] = [m.name.tag for m in exp.metric_infos]
        elif which == "session_start_info":
            hp["hparams"] = {k: _pvalue(v) for k, v in data.session_start_info.hparams.items()}
        if which not in ("experiment", "session_start_info") or hp["hparams"] is None:
            return
        values = {k: v for k, v in hp["hparams"].items() if v is not None}
        # Domains only where every value has the hparam's own type (the op refuses mixed types).
        domains = {k: d for k, d in hp["domains"].items() if k in values and d
                   and all(type(x) is type(values[k]) for x in d)}
        self._writer._put({"t": _now(), "op": "hparams", "env": self._writer.env, "win": None, "session": ".",
                           "hparams": values, "metrics": dict.fromkeys(hp["metrics"]), "domains": domains or None})

    def _graph_bytes(self, data: bytes) -> None:
        from .graphdef import graph_from_graphdef

        try:
            graph = graph_from_graphdef(data)
        except (ValueError, IndexError) as exc:  # GraphDefError is a ValueError
            self._warn("graph", "skipped a model graph that cannot be read (%s)", exc)
            return
        self._writer._put({"t": _now(), "op": "set", "env": self._writer.env, "win": "graph", "kind": "model_graph",
                           "opts": {"title": "graph"}, "graph": graph})

    @staticmethod
    def _summary_class() -> Any:
        try:
            from tensorboard.compat.proto.summary_pb2 import Summary
        except ImportError:
            from tensorboardX.proto.summary_pb2 import Summary  # type: ignore[import-untyped]
        return Summary

    def _warn(self, key: str, msg: str, *args: Any) -> None:
        if key not in self._warned and len(self._warned) < 1000:
            self._warned.add(key)
            log.warning("%s: " + msg, self._writer.env, *args)

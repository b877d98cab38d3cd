"""TensorBoard Event records of one run → paneboard events (docs/WIRE.md shapes), every point and step kept."""

from __future__ import annotations

import base64
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError
from tensorboard.compat.proto import event_pb2, types_pb2
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import api_pb2
from tensorboard.plugins.hparams import plugin_data_pb2 as hparams_pb2
from tensorboard.plugins.mesh import plugin_data_pb2 as mesh_pb2
from tensorboard.util import tensor_util

from paneboard.protocol import PR_FIELDS, TB_XLABEL
from paneboard.tensorboard.summaries import image_mime

from ..panes.gif_screen import fit_to_screen
from .records import Frames, fast_scalars

log = logging.getLogger("paneboard.tb")

MAX_RECORDS = 10_000        # stepped records per event (the wire's limit)
MAX_MEDIA_RECORDS = 64      # images/audio per event: keeps one event's JSON-free payload in the tens of MB
TEXT_SUFFIX = "/text_summary"
MAX_SKIPS_KEPT = 1000       # skipped records named per run (the count goes on)
_MESH_KEYS = {mesh_pb2.MeshPluginData.VERTEX: "vertex", mesh_pb2.MeshPluginData.FACE: "face",
              mesh_pb2.MeshPluginData.COLOR: "color"}


@dataclass(frozen=True)
class Skip:
    """One record the import could not keep, named for the import's output and the env's alerts pane."""

    tag: str
    step: int | None
    reason: str

    def describe(self) -> str:
        at = "" if self.step is None else f" step {self.step}"
        return f"tag {self.tag!r}{at}: {self.reason}"


@dataclass
class RunState:
    """What one run's later records need from its earlier ones (TF writes plugin metadata only on a tag's
    first value; hparams metrics are the last value of a scalar tag)."""

    env: str
    plugins: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # tag -> (plugin name, content)
    last_scalar: dict[str, float] = field(default_factory=dict)
    hparams: dict | None = None           # the run's session: {"hparams", "domains", "metric_tags"}
    restored: bool = False                # earlier bytes of this run were replayed into this state
    warned: set[str] = field(default_factory=set)
    skipped: list[Skip] = field(default_factory=list)   # named skips, oldest first (at most MAX_SKIPS_KEPT)
    skip_count: int = 0

    def skip(self, tag: str, step: int | None, reason: str) -> None:
        """A record not imported: logged (once per tag and reason), named and counted."""
        self.skip_count += 1
        if len(self.skipped) < MAX_SKIPS_KEPT:
            self.skipped.append(Skip(tag, step, reason))
        self.warn_once(f"skip:{tag}:{reason}", "skipped %s", Skip(tag, step, reason).describe())

    def warn_once(self, key: str, msg: str, *args: Any) -> None:
        if key not in self.warned and len(self.warned) < 1000:
            self.warned.add(key)
            log.warning("%s: " + msg, self.env, *args)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _scalar_of(tensor) -> float | None:
    """A rank-0 DT_FLOAT/DT_DOUBLE tensor's value without make_ndarray (10× cheaper per point)."""
    if tensor.dtype == types_pb2.DT_FLOAT:
        if tensor.float_val:
            return float(tensor.float_val[0])
        raw = np.frombuffer(tensor.tensor_content, "<f4")
    elif tensor.dtype == types_pb2.DT_DOUBLE:
        if tensor.double_val:
            return float(tensor.double_val[0])
        raw = np.frombuffer(tensor.tensor_content, "<f8")
    else:
        arr = tensor_util.make_ndarray(tensor)
        raw = arr.reshape(-1) if arr.dtype.kind in "fiub" else np.empty(0)
    return float(raw[0]) if raw.size == 1 else None


def _text_of(arr: np.ndarray) -> str:
    """Strings as TensorBoard's text plugin shows them: one string as is, a vector as lines, a matrix as a table."""
    cells = np.vectorize(lambda b: b.decode("utf-8", "replace") if isinstance(b, bytes) else str(b),
                         otypes=[object])(arr) if arr.size else arr
    if arr.ndim <= 1:
        return "\n\n".join(cells.reshape(-1).tolist())
    rows = cells.reshape(cells.shape[0], -1).tolist()
    head = "| " + " | ".join(" " for _ in rows[0]) + " |\n|" + "---|" * len(rows[0]) + "\n"
    return head + "\n".join("| " + " | ".join(r) + " |" for r in rows)


def _pvalue(v) -> Any:
    kind = v.WhichOneof("kind")
    if kind == "bool_value":
        return v.bool_value
    if kind == "number_value":
        return v.number_value
    if kind == "string_value":
        return v.string_value
    if kind == "list_value":
        return [_pvalue(x) for x in v.list_value.values]
    return None


def _layout(layout: layout_pb2.Layout) -> dict:
    """custom_scalars' Layout as torch's add_custom_scalars takes it: {category: {chart: [kind, tags]}}."""
    out: dict[str, dict] = {}
    for cat in layout.category:
        charts = out.setdefault(cat.title, {})
        for chart in cat.chart:
            if chart.WhichOneof("content") == "margin":
                s = chart.margin.series[0] if chart.margin.series else None
                charts[chart.title] = ["Margin", [s.value, s.lower, s.upper] if s else []]
            else:
                charts[chart.title] = ["Multiline", list(chart.multiline.tag)]
    return out


def _mesh_figure(name: str, step: int, parts: dict[str, np.ndarray]) -> dict:
    """add_mesh's [B, N, 3] components as Plotly traces: mesh3d with faces, scatter3d markers without."""
    traces = []
    verts = parts["vertex"]
    for b in range(verts.shape[0]):
        v = verts[b]
        trace: dict[str, Any] = {"x": v[:, 0].tolist(), "y": v[:, 1].tolist(), "z": v[:, 2].tolist(),
                                 "name": f"{name}[{b}]" if verts.shape[0] > 1 else name}
        colors = None
        if "color" in parts and b < parts["color"].shape[0]:
            c = np.clip(parts["color"][b], 0, 255).astype(int)
            colors = [f"rgb({r},{g},{bl})" for r, g, bl in c.tolist()]
        if "face" in parts and b < parts["face"].shape[0]:
            f = parts["face"][b].astype(int)
            trace.update(type="mesh3d", i=f[:, 0].tolist(), j=f[:, 1].tolist(), k=f[:, 2].tolist())
            if colors:
                trace["vertexcolor"] = colors
        else:
            trace.update(type="scatter3d", mode="markers", marker={"size": 2, **({"color": colors} if colors else {})})
        traces.append(trace)
    return {"data": traces, "layout": {"title": {"text": f"{name} (step {step})"}, "scene": {"aspectmode": "data"}}}


@dataclass(frozen=True)
class TensorValue:
    """One tensor summary value with what its plugin handler needs."""

    index: int        # the record's position in its frame batch (keeps scalars in file order)
    tag: str
    content: bytes    # the plugin's metadata content
    step: int
    wall: float
    tensor: Any       # a TensorProto


class Batch:
    """The paneboard events of one run's records, accumulated per pane (few large appends, not one per point)."""

    def __init__(self, state: RunState, emit: bool = True) -> None:
        self.state = state
        self.emit = emit
        self.scalars: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = defaultdict(list)
        self.slow_scalars: dict[str, list[tuple[int, int, float, float]]] = defaultdict(list)
        self.records: dict[tuple[str, str], list[dict]] = {}    # (kind, win) -> stepped records, arrival order
        self.others: list[dict] = []                             # set / env-op events, arrival order
        self.mesh: dict[tuple[str, int], dict] = {}
        self.hparams_changed = False
        self.last_wall = 0.0

    # -- input ----------------------------------------------------------------------------------------------
    def add_frames(self, frames: Frames) -> None:
        fast = fast_scalars(frames)
        if len(fast.index):
            for tid, tag in enumerate(fast.tags):
                sel = fast.tag_id == tid
                self.scalars[tag].append((fast.index[sel], fast.step[sel], fast.value[sel], fast.wall[sel]))
            self.last_wall = max(self.last_wall, float(fast.wall[-1]))
        done = np.zeros(len(frames), dtype=bool)
        done[fast.index] = True
        for i in np.flatnonzero(~done).tolist():
            try:
                ev = event_pb2.Event.FromString(frames.payload(i))
            except DecodeError as exc:
                self.state.warn_once(f"decode@{frames.base}", "skipped an undecodable record near offset %d (%s)",
                                     frames.base + int(frames.starts[i]), exc)
                continue
            self._event(i, ev)

    def _event(self, i: int, ev: event_pb2.Event) -> None:
        what = ev.WhichOneof("what")
        self.last_wall = max(self.last_wall, ev.wall_time)
        if what == "summary":
            for v in ev.summary.value:
                try:
                    self._value(i, ev, v)
                except (ValueError, TypeError, IndexError, DecodeError) as exc:
                    self.state.skip(v.tag, ev.step, f"malformed value ({exc})")
        elif what == "graph_def" and self.emit:
            self._graph(ev)
        # session_log (purge_step's START, STOP, CHECKPOINT), file_version, tagged_run_metadata: not shown.
        # Restart rule: every record is kept in arrival order; START does not purge anything.

    def _value(self, i: int, ev: event_pb2.Event, v) -> None:
        tag = v.tag
        if v.HasField("metadata") and v.metadata.plugin_data.plugin_name:
            self.state.plugins[tag] = (v.metadata.plugin_data.plugin_name, v.metadata.plugin_data.content)
        plugin, content = self.state.plugins.get(tag, ("", b""))
        kind = v.WhichOneof("value")
        step, wall = ev.step, ev.wall_time
        if kind == "simple_value":
            self.slow_scalars[tag].append((i, step, v.simple_value, wall))
        elif kind == "histo":
            h = v.histo
            if len(h.bucket_limit) == 0 or len(h.bucket_limit) != len(h.bucket):
                self.state.skip(tag, step, "a histogram without buckets")
                return
            self._record("histogram", tag, {"step": step, "wall": wall, "min": h.min, "max": h.max, "num": h.num,
                                            "sum": h.sum, "sum_squares": h.sum_squares,
                                            "limits": list(h.bucket_limit), "counts": list(h.bucket)})
        elif kind == "image":
            data = v.image.encoded_image_string
            mime = image_mime(data)
            if mime is None:
                self.state.skip(tag, step, "an image in an unknown format (not PNG, JPEG, GIF or WebP)")
                return
            if mime == "image/gif" and self.emit:
                try:  # torch's add_video GIFs may place frames off their screen: clip them as browsers do
                    data = fit_to_screen(data)
                except ValueError as exc:
                    self.state.skip(tag, step, f"an unreadable GIF ({exc})")
                    return
            if self.emit:
                self._record("media", tag, {"step": step, "wall": wall, "type": "image", "data": _b64(data),
                                            "mime": mime})
        elif kind == "audio":
            a = v.audio
            if self.emit:
                self._record("media", tag, {"step": step, "wall": wall, "type": "audio",
                                            "data": _b64(a.encoded_audio_string),
                                            "mime": a.content_type or "audio/wav", "sample_rate": a.sample_rate})
        elif kind == "tensor":
            self._tensor(i, tag, plugin, content, ev, v.tensor)
        elif kind is None and plugin == "hparams":
            self._hparams(content)
        elif kind is None:
            # add_video with moviepy >= 2 writes a value without payload (torch issue 147317).
            self.state.skip(tag, step, "a value without data (torch's add_video with moviepy >= 2 writes these)")

    def _tensor(self, i: int, tag: str, plugin: str, content: bytes, ev: event_pb2.Event, t) -> None:
        if not plugin:  # records written without plugin metadata (old writers): infer it
            if t.dtype in (types_pb2.DT_FLOAT, types_pb2.DT_DOUBLE) and not t.tensor_shape.dim:
                plugin = "scalars"
            elif tag.endswith(TEXT_SUFFIX):
                plugin = "text"
        handler = TENSOR_PLUGINS.get(plugin)
        if handler is None:
            self.state.warn_once(f"plugin:{plugin}:{tag}", "tag %r of plugin %r is not imported", tag,
                                 plugin or "(none)")
            return
        handler(self, TensorValue(i, tag, content, ev.step, ev.wall_time, t))

    def _scalars(self, v: TensorValue) -> None:
        value = _scalar_of(v.tensor)
        if value is not None:
            self.slow_scalars[v.tag].append((v.index, v.step, value, v.wall))

    def _text(self, v: TensorValue) -> None:
        tag = v.tag
        win = tag[: -len(TEXT_SUFFIX)] if tag.endswith(TEXT_SUFFIX) and len(tag) > len(TEXT_SUFFIX) else tag
        self._record("media", win, {"step": v.step, "wall": v.wall, "type": "text",
                                    "text": _text_of(tensor_util.make_ndarray(v.tensor)), "format": "markdown"})

    def _pr_curves(self, v: TensorValue) -> None:
        a = tensor_util.make_ndarray(v.tensor).astype(np.float64)
        if a.ndim != 2 or a.shape[0] != len(PR_FIELDS):
            raise ValueError(f"a PR curve tensor has shape {a.shape}, not [{len(PR_FIELDS)}, T]")
        self._record("pr_curve", v.tag, {"step": v.step, "wall": v.wall,
                                         **{name: a[k].tolist() for k, name in enumerate(PR_FIELDS)}})

    def _custom_scalars(self, v: TensorValue) -> None:
        layout = layout_pb2.Layout.FromString(tensor_util.make_ndarray(v.tensor).reshape(-1)[0])
        self.others.append({"op": "custom_scalars", "env": self.state.env, "t": v.wall, "layout": _layout(layout)})

    def _mesh(self, v: TensorValue) -> None:
        md = mesh_pb2.MeshPluginData.FromString(v.content)
        key = _MESH_KEYS.get(md.content_type)
        if key is not None and self.emit:
            arr = tensor_util.make_ndarray(v.tensor)
            entry = self.mesh.setdefault((md.name, v.step), {"wall": v.wall, "order": len(self.mesh)})
            entry[key] = arr.reshape(-1, *arr.shape[-2:]) if arr.ndim >= 2 else arr

    def _hparams_tensor(self, v: TensorValue) -> None:
        self._hparams(v.content)

    def _hparams(self, content: bytes) -> None:
        data = hparams_pb2.HParamsPluginData.FromString(content)
        which = data.WhichOneof("data")
        hp = self.state.hparams or {"hparams": {}, "domains": {}, "types": {}, "metric_tags": []}
        if which == "experiment":
            exp = data.experiment
            for info in exp.hparam_infos:
                hp["types"][info.name] = info.type
                if info.HasField("domain_discrete"):  # interval domains have no place in the op: not sent
                    hp["domains"][info.name] = [_pvalue(x) for x in info.domain_discrete.values]
            hp["metric_tags"] = [m.name.tag for m in exp.metric_infos]
        elif which == "session_start_info":
            hp["hparams"] = {k: _pvalue(v) for k, v in data.session_start_info.hparams.items()}
        else:
            return  # session_end_info: the status is not shown
        for name, typ in hp["types"].items():  # the proto says bool: keep bool (numbers 0/1 included)
            if typ == api_pb2.DATA_TYPE_BOOL and isinstance(hp["hparams"].get(name), float):
                hp["hparams"][name] = bool(hp["hparams"][name])
        self.state.hparams = hp
        self.hparams_changed = True

    def _graph(self, ev: event_pb2.Event) -> None:
        try:
            from paneboard.tensorboard.graphdef import graph_from_graphdef  # the SDK reads GraphDefs too
        except ImportError:
            self.state.warn_once("graph", "the run has a model graph, but this server cannot import graphs yet")
            return
        try:
            graph = graph_from_graphdef(ev.graph_def)
        except Exception as exc:  # a GraphDef we cannot read must not stop the run's other data
            self.state.warn_once("graph:bad", "skipped an unreadable model graph (%s)", exc)
            return
        self.others.append({"op": "set", "kind": "model_graph", "env": self.state.env, "win": "graph",
                            "t": ev.wall_time, "graph": graph, "opts": {"title": "graph"}})

    def _record(self, kind: str, win: str, rec: dict) -> None:
        self.records.setdefault((kind, win), []).append(rec)

    # -- output ---------------------------------------------------------------------------------------------
    def events(self) -> list[dict]:
        """The batch's events: scalar appends (one per tag), stepped records, sets and env ops."""
        env, out = self.state.env, []
        for tag in list(self.scalars) + [t for t in self.slow_scalars if t not in self.scalars]:
            parts = self.scalars.get(tag, [])
            slow = self.slow_scalars.get(tag)
            if slow:
                idx, step, value, wall = (np.asarray(c) for c in zip(*slow, strict=True))
                parts = [*parts, (idx, step.astype(np.int64), value.astype(np.float64), wall.astype(np.float64))]
            idx, step, value, wall = (np.concatenate(c) for c in zip(*parts, strict=True))
            if len(parts) > 1:
                order = np.argsort(idx, kind="stable")  # both decoders' points back in record order
                step, value, wall = step[order], value[order], wall[order]
            self.state.last_scalar[tag] = float(value[-1])
            if self.emit:
                out.append({"op": "update", "mode": "append", "kind": "line", "env": env, "win": tag,
                            "t": float(wall[-1]), "opts": {"title": tag, "xlabel": TB_XLABEL},
                            "traces": [{"name": tag, "x": step.astype(np.float64), "y": value, "wall": wall}]})
        if not self.emit:
            return []
        for (kind, win), recs in self.records.items():
            size = MAX_MEDIA_RECORDS if kind == "media" else MAX_RECORDS
            for k in range(0, len(recs), size):
                chunk = recs[k:k + size]
                out.append({"op": "update", "mode": "append", "kind": kind, "env": env, "win": win,
                            "t": chunk[-1]["wall"], "opts": {"title": win}, "records": chunk})
        for (name, step), parts in sorted(self.mesh.items(), key=lambda kv: kv[1]["order"]):
            if "vertex" in parts:
                win = f"mesh/{name}/{step:05d}"
                out.append({"op": "set", "kind": "figure", "env": env, "win": win, "t": parts["wall"],
                            "opts": {"title": win}, "figure": _mesh_figure(name, step, parts)})
        out += self.others
        hp = self.state.hparams
        if hp is not None and (self.hparams_changed or any(t in self.scalars or t in self.slow_scalars
                                                           for t in hp["metric_tags"])):
            metrics = {t: self.state.last_scalar[t] for t in hp["metric_tags"] if t in self.state.last_scalar}
            values = hp["hparams"]
            # Domains only for hparams this session has, with values of the hparam's own type (torch writes a
            # bool hparam as 1.0 but may keep True/False in its domain): the op refuses anything else.
            domains = {k: v for k, v in hp["domains"].items() if k in values and v
                       and all(type(x) is type(values[k]) for x in v)}
            out.append({"op": "hparams", "env": env, "t": self.last_wall, "session": ".", "hparams": values,
                        "metrics": metrics, "domains": domains or None})
        return out


# TensorBoard plugin name -> the handler of its tensor values: importing one more plugin is one more row.
TENSOR_PLUGINS: dict[str, Callable[[Batch, TensorValue], None]] = {
    "scalars": Batch._scalars,
    "text": Batch._text,
    "pr_curves": Batch._pr_curves,
    "custom_scalars": Batch._custom_scalars,
    "mesh": Batch._mesh,
    "hparams": Batch._hparams_tensor,
}

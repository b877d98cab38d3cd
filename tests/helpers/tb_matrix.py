"""The framework matrix's comparison: what EventAccumulator reads from a logdir vs what the server stored, by tag."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2
from tensorboard.util import tensor_util

from helpers.tensorboard import q, records

TEXT_SUFFIX = "/text_summary"
# EventAccumulator's kind → the paneboard pane kind (and, for media, the record type) the same tag must have.
PANE_KIND = {"scalar": ("line", None), "histogram": ("histogram", None), "image": ("media", "image"),
             "audio": ("media", "audio"), "text": ("media", "text")}


@dataclass
class Series:
    kind: str
    steps: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)   # scalars only


@dataclass
class Logged:
    """One side of the comparison: series by tag, and the hparams (merged over runs/sessions)."""

    series: dict[str, Series] = field(default_factory=dict)
    hparams: dict[str, Any] = field(default_factory=dict)
    graph: bool = False


def _add(out: Logged, tag: str, kind: str, step: int, value: float | None = None) -> None:
    s = out.series.setdefault(tag, Series(kind))
    s.steps.append(int(step))
    if value is not None:
        s.values.append(float(value))


def read_logdir(logdir: Path) -> Logged:
    """Every run under `logdir` through TensorBoard's own EventAccumulator (nothing sampled away)."""
    out = Logged()
    runs = sorted({Path(d) for d, _, files in os.walk(logdir) for f in files if "tfevents" in f})
    for run in runs:
        ea = EventAccumulator(str(run), size_guidance={k: 0 for k in ("scalars", "images", "audio", "histograms",
                                                                       "tensors", "compressedHistograms")})
        ea.Reload()
        tags = ea.Tags()
        out.graph = out.graph or bool(tags.get("graph"))
        for tag in tags["scalars"]:
            for e in ea.Scalars(tag):
                _add(out, tag, "scalar", e.step, e.value)
        for tag in tags["histograms"]:
            for e in ea.Histograms(tag):
                _add(out, tag, "histogram", e.step)
        for tag in tags["images"]:
            for e in ea.Images(tag):
                _add(out, tag, "image", e.step)
        for tag in tags["audio"]:
            for e in ea.Audio(tag):
                _add(out, tag, "audio", e.step)
        # hparams summaries carry no value: EventAccumulator keeps only their plugin content.
        for content in _plugin_contents(ea, "hparams"):
            data = plugin_data_pb2.HParamsPluginData.FromString(content)
            if data.WhichOneof("data") == "session_start_info":
                for k, v in data.session_start_info.hparams.items():
                    out.hparams[k] = getattr(v, v.WhichOneof("kind"))
        for tag in tags["tensors"]:
            plugin = ea.SummaryMetadata(tag).plugin_data
            for e in ea.Tensors(tag):
                if plugin.plugin_name == "scalars":
                    _add(out, tag, "scalar", e.step, tensor_util.make_ndarray(e.tensor_proto).item())
                elif plugin.plugin_name == "text":
                    _add(out, tag.removesuffix(TEXT_SUFFIX), "text", e.step)
    return out


def _plugin_contents(ea: EventAccumulator, plugin: str) -> list[bytes]:
    try:
        return list(ea.PluginTagToContent(plugin).values())
    except KeyError:  # no tag of that plugin in this run
        return []


def read_server(server: Any, envs: list[str] | None = None) -> Logged:
    """The same view of what `server` stored, over `envs` (default every env), through the read API."""
    out = Logged()
    names = envs if envs is not None else [e["name"] for e in server.get_json("/api/v1/envs")["envs"]]
    for env in names:
        meta = server.get_json(f"/api/v1/envs/{q(env)}/meta")["meta"]
        for session in (meta.get("hparams") or {}).values():
            out.hparams.update(session.get("hparams") or {})
        for pane in server.get_json(f"/api/v1/envs/{q(env)}")["panes"]:
            win, kind = pane["win"], pane["kind"]
            if kind == "model_graph":
                out.graph = True
            elif kind == "line":
                data = server.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/export?format=json")
                for tr in data["traces"]:
                    tag = win if len(data["traces"]) == 1 else f"{win}/{tr['name']}"
                    for x, y in zip(tr["x"], tr["y"], strict=True):
                        _add(out, tag, "scalar", x, math.nan if y is None else y)
            elif kind in ("histogram", "media"):
                for rec in records(server, env, win):
                    _add(out, win, "histogram" if kind == "histogram" else rec.get("type", "media"), rec["step"])
    return out


def compare(tb: Logged, pb: Logged, volatile: frozenset[str] = frozenset()) -> dict[str, str]:
    """{tag: "equal" | what differs} for every tag TensorBoard shows; `volatile` tags (timings) compare steps only."""
    report: dict[str, str] = {}
    for tag, want in sorted(tb.series.items()):
        got = pb.series.get(tag)
        if got is None:
            report[tag] = "missing"
        elif got.kind != want.kind:
            report[tag] = f"kind {got.kind} != {want.kind}"
        elif got.steps != want.steps:
            report[tag] = f"steps {got.steps[:8]} != {want.steps[:8]}"
        elif tag not in volatile and not all(
                math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
                for a, b in zip(got.values, want.values, strict=True)):
            report[tag] = f"values {got.values[:4]} != {want.values[:4]}"
        else:
            report[tag] = "equal"
    if tb.hparams:
        report["(hparams)"] = "equal" if _same_hparams(tb.hparams, pb.hparams) else f"{pb.hparams} != {tb.hparams}"
    if tb.graph:
        report["(graph)"] = "equal" if pb.graph else "missing"
    return report


def _same_hparams(tb: dict[str, Any], pb: dict[str, Any]) -> bool:
    return tb.keys() <= pb.keys() and all(
        pb[k] == v or (isinstance(v, float) and isinstance(pb[k], (int, float)) and math.isclose(pb[k], v,
                                                                                                  rel_tol=1e-6))
        for k, v in tb.items())

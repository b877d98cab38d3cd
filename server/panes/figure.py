"""Generic Plotly figure panes (heatmap, bar, surface, pie, mesh, raw `_send` figures): {data, layout}, size-limited."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from .. import jsonio
from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import merged_opts, no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep

KINDS = ("figure",)
HEATMAP_MODES = ("appendRow", "appendColumn", "prependRow", "prependColumn")
# "layout" changes only the layout/opts (Visdom's update_window_opts); the rest follow Visdom's /update.
UPDATE_MODES = ("append", "replace", "remove", "layout", *HEATMAP_MODES)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_FIGURE_BYTES = 16 * 1024 * 1024  # a figure is stored and re-sent whole, so it must stay modest
_APPEND_KEYS = ("x", "y", "z", "text")  # per-point arrays a Visdom append concatenates


def _size_check(fig: dict) -> None:
    if len(jsonio.dumps(fig)) > MAX_FIGURE_BYTES:
        raise EventError(f"figure: larger than {MAX_FIGURE_BYTES} bytes as JSON")


def _traces(value: Any, what: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise EventError(f"figure: {what} must be a list of trace objects")
    return value


def validate(cmd: PaneCommand, raw: dict) -> dict:
    """payload = {"data": [traces], "layout": {...}} (for updates: the sent traces and layout keys)."""
    fig = raw.get("figure") if cmd.op == "set" else raw
    if not isinstance(fig, dict):
        raise EventError('figure: expected figure: {"data": [...], "layout": {...}}')
    data = _traces(fig.get("data") if cmd.op == "set" else fig.get("traces"), "data")
    layout = fig.get("layout") or {}
    if not isinstance(layout, dict):
        raise EventError("figure: layout must be an object")
    out = {"data": data, "layout": layout}
    _size_check(out)
    if cmd.op == "update" and cmd.mode in ("append", "replace", *HEATMAP_MODES) and not data:
        raise EventError(f"figure: update mode {cmd.mode} needs traces")
    return out


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    """{"data": [traces], "layout": {...}} as validate returns it for a set."""
    no_steps("figure", steps)
    content = stored_object(content, "figure", ("data", "layout"))
    _traces(content.get("data"), "data")
    if not isinstance(content.get("layout", {}), dict):
        raise EventError("figure: layout must be an object")
    _size_check(content)
    return content


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    creates = cmd.mode in ("append", *HEATMAP_MODES)  # Visdom creates a missing window for these
    if cmd.op == "set" or (pane is None and creates):
        pane = tx.put_pane(cmd.env, cmd.win, "figure", title_of(cmd.opts, cmd.payload["layout"]), cmd.opts,
                           cmd.payload)
        deltas.pane(pane.env, pane.win, pane.version)
        return
    if pane is None:
        raise EventError(f"pane {cmd.win!r} does not exist in env {cmd.env!r}")
    if pane.kind not in KINDS:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not figure")
    # Copy: the stored record may be shared (cached); a failed update must leave it untouched.
    fig = copy.deepcopy(pane.content or {"data": [], "layout": {}})
    fig.setdefault("data", [])
    fig.setdefault("layout", {})
    update_figure(fig, cmd.mode or "replace", cmd.name, cmd.payload["data"])
    fig["layout"].update({k: v for k, v in cmd.payload["layout"].items() if v is not None})
    _size_check(fig)
    opts = merged_opts(pane, cmd)
    pane = tx.update_pane(pane, content=fig, opts=opts, title=title_of(opts, fig["layout"]))
    deltas.pane(pane.env, pane.win, pane.version)


def update_figure(fig: dict, mode: str, name: str | None, sent: list[dict]) -> None:
    """Visdom's /update on a plot window, in place (§2.3 of the reference notes)."""
    traces: list[dict] = fig["data"]
    if mode == "layout":
        return
    idxs = list(range(len(traces))) if name is None else [i for i, t in enumerate(traces) if t.get("name") == name]
    if mode == "remove":
        if not idxs and name is not None:
            raise EventError(f"figure has no trace named {name!r}")
        # name None removes every trace (Visdom's heatmap remove); the window stays, empty
        fig["data"] = [t for i, t in enumerate(traces) if i not in idxs]
        return
    if not idxs:  # a new name (or an empty figure): the trace is added
        new = dict(sent[0])
        if name is not None:
            new["name"] = name
        traces.append(new)
        return
    if len(idxs) == 1 and traces[idxs[0]].get("type") == "heatmap":
        traces[idxs[0]] = _heatmap(traces[idxs[0]], sent[0], mode)
        return
    for n, i in enumerate(idxs[:len(sent)]):
        new, old = sent[n], traces[i]
        xs = new.get("x")
        if isinstance(xs, list) and xs and all(v is None or (isinstance(v, float) and math.isnan(v)) for v in xs):
            continue  # Visdom's masking: a trace whose x values are all missing is left alone
        for key in _APPEND_KEYS:
            if isinstance(new.get(key), list):
                old[key] = _as_list(old.get(key)) + new[key] if mode == "append" else new[key]
        color = (new.get("marker") or {}).get("color") if isinstance(new.get("marker"), dict) else None
        if isinstance(color, list):
            marker = old.setdefault("marker", {})
            marker["color"] = _as_list(marker.get("color")) + color if mode == "append" else color


def _as_list(v: Any) -> list:
    return v if isinstance(v, list) else []


def _heatmap(old: dict, new: dict, mode: str) -> dict:
    """Visdom's heatmap updateDir: rows/columns added to z (and labels), other keys overwritten."""
    if mode not in HEATMAP_MODES:
        # Visdom's replace overwrites every sent key, nulls too: a matrix sent without row/column names drops the
        # old names (else Plotly would draw the new matrix against labels of the old shape).
        return {**old, **{k: v for k, v in new.items() if v is not None or mode == "replace"}}
    z_old, z_new = _matrix(old.get("z")), _matrix(new.get("z"))
    rows = mode.endswith("Row")
    if rows and z_old and z_new and len(z_old[0]) != len(z_new[0]):
        raise EventError(f"heatmap {mode}: {len(z_new[0])} columns, the pane has {len(z_old[0])}")
    if not rows and len(z_old) != len(z_new):
        raise EventError(f"heatmap {mode}: {len(z_new)} rows, the pane has {len(z_old)}")
    front = mode.startswith("prepend")
    label = "y" if rows else "x"
    lo, ln = old.get(label), new.get(label)
    if (lo is None) != (ln is None):
        raise EventError(f"heatmap {mode}: give {label} labels on both sides or neither")
    out = {**old, **{k: v for k, v in new.items() if v is not None and k not in ("x", "y", "z")}}
    if rows:
        out["z"] = z_new + z_old if front else z_old + z_new
    else:
        out["z"] = [(b + a) if front else (a + b) for a, b in zip(z_old, z_new, strict=True)]
    if lo is not None and ln is not None:  # both or neither (checked above)
        if set(map(str, lo)) & set(map(str, ln)):
            raise EventError(f"heatmap {mode}: {label} labels collide with existing ones")
        out[label] = list(ln) + list(lo) if front else list(lo) + list(ln)
    return out


def _matrix(z: Any) -> list[list]:
    if z is None:
        return []
    if not isinstance(z, list) or not all(isinstance(r, list) for r in z):
        raise EventError("heatmap: z must be a list of rows")
    return z


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    content = pane.content or {}
    return {"data": content.get("data", []), "layout": content.get("layout", {})}

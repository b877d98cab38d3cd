"""Env ops (delete, fork, rename, pane layout, saved views, meta): each op's parse and apply (dispatch.table)."""

from __future__ import annotations

import math
import time
from typing import Any

from .. import jsonio
from ..live.deltas import Deltas
from ..store import StoreTx
from .envelope import Command, EnvCommand, EventError, check_name, refusing_store_errors

GRID_COLUMNS = 12       # the browser grid: x in [0, 12), w in [1, 12]; y and h count rows of a fixed height
MAX_ROWS = 100_000
MAX_HEIGHT = 200
MAX_META_BYTES = 256 * 1024
MAX_VIEWS = 200


def _int_in(value: Any, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not (math.isfinite(value) if isinstance(value, float) else abs(value) <= 2**53):
        raise EventError(f"layout: {what} must be a number")
    v = int(round(value))
    if not lo <= v <= hi:
        raise EventError(f"layout: {what} must be between {lo} and {hi}")
    return v


def check_layout(raw: Any) -> dict | None:
    """A pane's grid cell {"x", "y", "w", "h"} (None clears it: automatic placement)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise EventError("layout must be an object {x, y, w, h} or null")
    w = _int_in(raw.get("w"), "w", 1, GRID_COLUMNS)
    x = _int_in(raw.get("x"), "x", 0, GRID_COLUMNS - 1)
    if x + w > GRID_COLUMNS:
        raise EventError(f"layout: x + w must be at most {GRID_COLUMNS}")
    return {"x": x, "y": _int_in(raw.get("y"), "y", 0, MAX_ROWS), "w": w, "h": _int_in(raw.get("h"), "h", 1, MAX_HEIGHT)}


def parse_delete(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    return EnvCommand(op=op, env=env, seq=seq, wall=wall)


def parse_fork(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    source = check_name(raw.get("from"), "from")
    if source == env:
        raise EventError("fork_env: env and from must differ")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=source)


def parse_rename(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    to = check_name(raw.get("to"), "to")
    if to == env:
        raise EventError("rename_env: env and to must differ")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=to)


def parse_layout(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    win = check_name(raw.get("win"), "win")
    if "layout" not in raw:
        raise EventError("layout: missing layout")
    return EnvCommand(op=op, env=env, win=win, seq=seq, wall=wall, payload=check_layout(raw["layout"]))


def parse_view(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=check_name(raw.get("name"), "view name"))


MAX_OVERLAYS = 32  # charts of overlaid tags in one view
MAX_OVERLAY_TAGS = 16
MAX_PINNED = 1_000


def check_scalars_view(raw: Any) -> dict | None:
    """A Scalars view: {"overlays": [{"title", "tags": [...]}], "smoothing"?, "pinned"?: [run...], "baseline"?: run};
    charts of several tags overlaid, and the run selector's pins and baseline."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("overlays", []), list):
        raise EventError('save_view: scalars must be {"overlays": [{"title": ..., "tags": [...]}]}')
    overlays = []
    for o in raw.get("overlays", [])[:MAX_OVERLAYS + 1]:
        tags = o.get("tags") if isinstance(o, dict) else None
        if (not isinstance(tags, list) or not 1 <= len(tags) <= MAX_OVERLAY_TAGS
                or not all(isinstance(t, str) and 0 < len(t) <= 200 for t in tags)):
            raise EventError(f"save_view: each overlay needs 1..{MAX_OVERLAY_TAGS} tags (strings)")
        overlays.append({"title": check_name(o.get("title"), "save_view: overlay title"), "tags": tags})
    if len(overlays) > MAX_OVERLAYS:
        raise EventError(f"save_view: at most {MAX_OVERLAYS} overlays")
    out: dict[str, Any] = {"overlays": overlays}
    sm = raw.get("smoothing")
    if sm is not None:
        if isinstance(sm, bool) or not isinstance(sm, (int, float)) or not 0 <= sm < 1:
            raise EventError("save_view: smoothing must be a number in [0, 1)")
        out["smoothing"] = float(sm)
    pinned = raw.get("pinned")
    if pinned is not None:  # runs pinned in the run selector (listed first, always drawn and in the tooltip)
        if not isinstance(pinned, list) or len(pinned) > MAX_PINNED:
            raise EventError(f"save_view: pinned must be a list of at most {MAX_PINNED} run names")
        out["pinned"] = [check_name(r, "save_view: pinned run") for r in pinned]
    baseline = raw.get("baseline")
    if baseline is not None:  # the run the tooltip's Δ% is taken against
        out["baseline"] = check_name(baseline, "save_view: baseline run")
    return out


def parse_save_view(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    """save_view: the view's name, and for a Scalars view its overlays (payload (name, scalars or None))."""
    name = check_name(raw.get("name"), "view name")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=(name, check_scalars_view(raw.get("scalars"))))


def parse_set_meta(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    meta = raw.get("meta")
    if not isinstance(meta, dict):
        raise EventError("set_meta: meta must be an object")
    if len(jsonio.dumps(meta)) > MAX_META_BYTES:
        raise EventError(f"set_meta: meta must be at most {MAX_META_BYTES} bytes of JSON")
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=meta)


def parse_custom_scalars(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=check_custom_scalars(raw.get("layout")))


def this_env(cmd: Command) -> set[str]:
    """An op that reads or changes every pane of its env."""
    return {cmd.env}


def both_envs(cmd: Command) -> set[str]:
    """fork and rename: the env and the one named in the payload."""
    return {cmd.env, cmd.payload}


def apply_delete(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    if tx.delete_env(cmd.env):
        deltas.env_deleted(cmd.env)


@refusing_store_errors
def apply_fork(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.fork_env(cmd.payload, cmd.env)


@refusing_store_errors
def apply_rename(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.rename_env(cmd.env, cmd.payload)
    # Browsers on the old env's page follow it; the env list drops the old row (the new one comes as `env`).
    deltas.messages.append({"type": "env_renamed", "env": cmd.env, "to": cmd.payload})
    deltas.env_deleted(cmd.env)


@refusing_store_errors
def apply_layout(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    assert cmd.win is not None  # parse_layout names the pane of every layout
    pane = tx.get_pane(cmd.env, cmd.win)
    if pane is None:
        raise EventError(f"layout: pane {cmd.win!r} not found in env {cmd.env!r}")
    tx.set_pane_layout(pane, cmd.payload)
    deltas.messages.append({"type": "layout", "env": cmd.env, "win": cmd.win, "layout": cmd.payload})


@refusing_store_errors
def apply_save_view(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    name, scalars = cmd.payload
    meta = env_meta(tx, cmd.env)
    views = dict(meta.get("views") or {})
    if name not in views and len(views) >= MAX_VIEWS:
        raise EventError(f"save_view: at most {MAX_VIEWS} views per env")
    panes = [tx.get_pane(cmd.env, win) for win in tx.pane_wins(cmd.env)]
    views[name] = {"saved": time.time(), "layout": {p.win: p.layout for p in panes if p is not None}}
    if scalars is not None:
        views[name]["scalars"] = scalars
    meta["views"] = views
    set_meta(tx, cmd.env, meta, deltas)


@refusing_store_errors
def apply_load_view(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    view = (env_meta(tx, cmd.env).get("views") or {}).get(cmd.payload)
    if view is None:
        raise EventError(f"load_view: no view {cmd.payload!r} in env {cmd.env!r}")
    saved = view.get("layout") or {}
    for win in tx.pane_wins(cmd.env):
        pane = tx.get_pane(cmd.env, win)
        if pane is not None and win in saved and saved[win] != pane.layout:
            tx.set_pane_layout(pane, saved[win])
            deltas.messages.append({"type": "layout", "env": cmd.env, "win": win, "layout": saved[win]})


@refusing_store_errors
def apply_set_meta(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.ensure_env(cmd.env)  # a run logs its config first, before any pane exists
    meta = env_meta(tx, cmd.env)
    meta["config"] = cmd.payload
    set_meta(tx, cmd.env, meta, deltas)


@refusing_store_errors
def apply_custom_scalars(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.ensure_env(cmd.env)
    meta = env_meta(tx, cmd.env)
    meta["custom_scalars"] = cmd.payload
    set_meta(tx, cmd.env, meta, deltas)


def check_custom_scalars(layout: Any) -> dict:
    """TensorBoard's custom-scalars layout: {category: {chart: ["Multiline", [tag regex...]] | ["Margin", [v, lo, hi]]}}."""
    if not isinstance(layout, dict) or not layout:
        raise EventError("custom_scalars: layout must be a non-empty object {category: {chart: [kind, tags]}}")
    for category, charts in layout.items():
        if not isinstance(charts, dict):
            raise EventError(f"custom_scalars: category {category!r} must map chart titles to [kind, tags]")
        for chart, spec in charts.items():
            if (not isinstance(spec, list) or len(spec) != 2 or spec[0] not in ("Multiline", "Margin")
                    or not isinstance(spec[1], list) or not all(isinstance(t, str) for t in spec[1])
                    or (spec[0] == "Margin" and len(spec[1]) != 3)):
                raise EventError(f"custom_scalars: chart {chart!r} must be ['Multiline', [tags]] or "
                                 "['Margin', [value, lower, upper]]")
    if len(jsonio.dumps(layout)) > MAX_META_BYTES:
        raise EventError(f"custom_scalars: layout must be at most {MAX_META_BYTES} bytes of JSON")
    return layout


def check_views(views: Any) -> dict:
    """Saved views as apply_save_view stores them ({name: {"saved", "layout": {win: cell | null}}}), checked
    before an archive's are imported."""
    if not isinstance(views, dict) or len(views) > MAX_VIEWS:
        raise EventError(f"views must be an object of at most {MAX_VIEWS} saved views")
    out = {}
    for name, view in views.items():
        where = f"view {str(name)[:80]!r}"
        check_name(name, where)
        if not isinstance(view, dict) or not isinstance(view.get("layout"), dict):
            raise EventError(f"{where} must be an object {{saved, layout: {{win: cell}}}}")
        saved = view.get("saved")
        if isinstance(saved, bool) or not isinstance(saved, (int, float)) or not math.isfinite(saved):
            raise EventError(f"{where}: saved must be a time (a finite number)")
        layout = {}
        for win, cell in view["layout"].items():
            try:
                layout[check_name(win, "win")] = check_layout(cell)
            except EventError as exc:
                raise EventError(f"{where}, pane {str(win)[:80]!r}: {exc}") from None
        out[name] = {"saved": saved, "layout": layout}
    return out


def env_meta(tx: StoreTx, env: str) -> dict:
    meta = tx.env_meta(env)
    if meta is None:
        raise EventError(f"env {env!r} not found")
    return meta


def set_meta(tx: StoreTx, env: str, meta: dict, deltas: Deltas) -> None:
    """Store an env's meta and tell the browsers."""
    tx.set_env_meta(env, meta)
    deltas.messages.append({"type": "meta", "env": env, "meta": meta})


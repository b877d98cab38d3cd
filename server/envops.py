"""Env-level commands (fork, rename, pane layout, saved views, run config): validation and how they apply."""

from __future__ import annotations

import math
import time
from typing import Any

from . import hparams, jsonio
from .deltas import Deltas
from .events import Command, EnvCommand, EventError, check_name
from .runs import ops as run_ops
from .store import StoreError, StoreTx

ENV_OPS = ("fork_env", "rename_env", "layout", "save_view", "load_view", "set_meta", "custom_scalars",
           "hparams") + run_ops.RUN_OPS
APPLIED_OPS = ENV_OPS + run_ops.SERVER_OPS  # what apply() takes: the producers' env ops and the server's own
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


def parse(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    """Validate one env-level event (the envelope's op, env, s and t are already checked)."""
    if op in run_ops.RUN_OPS:
        return run_ops.parse(raw, op, env, seq, wall)
    cmd = EnvCommand(op=op, env=env, win=None, seq=seq, wall=wall)
    if op == "fork_env":
        cmd.payload = check_name(raw.get("from"), "from")
        if cmd.payload == env:
            raise EventError("fork_env: env and from must differ")
    elif op == "rename_env":
        cmd.payload = check_name(raw.get("to"), "to")
        if cmd.payload == env:
            raise EventError("rename_env: env and to must differ")
    elif op == "layout":
        cmd.win = check_name(raw.get("win"), "win")
        if "layout" not in raw:
            raise EventError("layout: missing layout")
        cmd.payload = check_layout(raw["layout"])
    elif op in ("save_view", "load_view"):
        cmd.payload = check_name(raw.get("name"), "view name")
    elif op == "set_meta":
        meta = raw.get("meta")
        if not isinstance(meta, dict):
            raise EventError("set_meta: meta must be an object")
        if len(jsonio.dumps(meta)) > MAX_META_BYTES:
            raise EventError(f"set_meta: meta must be at most {MAX_META_BYTES} bytes of JSON")
        cmd.payload = meta
    elif op == "hparams":
        cmd.payload = hparams.parse(raw)
    elif op == "custom_scalars":
        cmd.payload = check_custom_scalars(raw.get("layout"))
    else:  # pragma: no cover - parse_event only routes ENV_OPS here
        raise EventError(f"unknown env op {op!r}")
    return cmd


def env_wide(cmd: Command) -> set[str]:
    """Envs whose every pane the command reads or changes: runs of merged appends must end there."""
    if cmd.op in ("delete_env", "import_env") or (cmd.op == "close" and cmd.win is None) or cmd.op == "load_view":
        return {cmd.env}
    if cmd.op in ("fork_env", "rename_env"):
        return {cmd.env, cmd.payload}
    return set()


def apply(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    """Checks first, then writes: an EventError never leaves half a command behind."""
    try:
        _apply(tx, cmd, deltas)
    except StoreError as exc:
        raise EventError(str(exc)) from None


def _apply(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    if cmd.op in run_ops.RUN_OPS or cmd.op in run_ops.SERVER_OPS:
        run_ops.apply(tx, cmd, deltas)
    elif cmd.op == "fork_env":
        tx.fork_env(cmd.payload, cmd.env)
    elif cmd.op == "rename_env":
        tx.rename_env(cmd.env, cmd.payload)
        # Browsers on the old env's page follow it; the env list drops the old row (the new one comes as `env`).
        deltas.messages.append({"type": "env_renamed", "env": cmd.env, "to": cmd.payload})
        deltas.env_deleted(cmd.env)
    elif cmd.op == "layout":
        assert cmd.win is not None  # parse() names the pane of every layout
        pane = tx.get_pane(cmd.env, cmd.win)
        if pane is None:
            raise EventError(f"layout: pane {cmd.win!r} not found in env {cmd.env!r}")
        tx.set_pane_layout(pane, cmd.payload)
        deltas.messages.append({"type": "layout", "env": cmd.env, "win": cmd.win, "layout": cmd.payload})
    elif cmd.op == "save_view":
        meta = _meta(tx, cmd.env)
        views = dict(meta.get("views") or {})
        if cmd.payload not in views and len(views) >= MAX_VIEWS:
            raise EventError(f"save_view: at most {MAX_VIEWS} views per env")
        panes = [tx.get_pane(cmd.env, win) for win in tx.pane_wins(cmd.env)]
        views[cmd.payload] = {"saved": time.time(), "layout": {p.win: p.layout for p in panes if p is not None}}
        meta["views"] = views
        tx.set_env_meta(cmd.env, meta)
        deltas.messages.append({"type": "meta", "env": cmd.env, "meta": meta})
    elif cmd.op == "load_view":
        view = (_meta(tx, cmd.env).get("views") or {}).get(cmd.payload)
        if view is None:
            raise EventError(f"load_view: no view {cmd.payload!r} in env {cmd.env!r}")
        saved = view.get("layout") or {}
        for win in tx.pane_wins(cmd.env):
            pane = tx.get_pane(cmd.env, win)
            if pane is not None and win in saved and saved[win] != pane.layout:
                tx.set_pane_layout(pane, saved[win])
                deltas.messages.append({"type": "layout", "env": cmd.env, "win": win, "layout": saved[win]})
    elif cmd.op == "set_meta":
        tx.ensure_env(cmd.env)  # a run logs its config first, before any pane exists
        meta = _meta(tx, cmd.env)
        meta["config"] = cmd.payload
        tx.set_env_meta(cmd.env, meta)
        deltas.messages.append({"type": "meta", "env": cmd.env, "meta": meta})
    elif cmd.op == "custom_scalars":
        tx.ensure_env(cmd.env)
        meta = _meta(tx, cmd.env)
        meta["custom_scalars"] = cmd.payload
        tx.set_env_meta(cmd.env, meta)
        deltas.messages.append({"type": "meta", "env": cmd.env, "meta": meta})
    elif cmd.op == "hparams":
        tx.ensure_env(cmd.env)  # add_hparams may come before (or without) any pane
        meta = hparams.merge(_meta(tx, cmd.env), cmd.payload, cmd.wall)
        # add_hparams and the integrations feed the run's config too (the runs table and its queries read it).
        meta["config"] = {**(meta.get("config") or {}), **cmd.payload["hparams"]}
        tx.set_env_meta(cmd.env, meta)
        deltas.messages.append({"type": "meta", "env": cmd.env, "meta": meta})


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


def _meta(tx: StoreTx, env: str) -> dict:
    meta = tx.env_meta(env)
    if meta is None:
        raise EventError(f"env {env!r} not found")
    return meta


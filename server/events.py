"""Producer events (SDK stream, HTTP, later Visdom and TensorBoard) -> validated store commands."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

MAX_NAME = 256
OPS = ("set", "update", "close", "delete_env")


class EventError(ValueError):
    """An event that cannot be applied; the message is reported to its producer."""


@dataclass
class Command:
    """One validated change, ready for the writer thread."""

    op: str
    env: str
    win: str | None
    kind: str | None = None
    seq: int | None = None           # producer sequence number (idempotent replay)
    wall: float = 0.0                # producer wall time of the call
    mode: str | None = None          # update mode (append / replace / remove ...)
    name: str | None = None          # trace name for updates
    opts: dict = field(default_factory=dict)
    payload: Any = None              # kind-specific, prepared by the kind's validate()


def check_name(value: Any, what: str) -> str:
    """Env and window names: non-empty text without control characters (shown as text everywhere)."""
    if not isinstance(value, str):
        raise EventError(f"{what} must be a string, got {type(value).__name__}")
    if not value or len(value) > MAX_NAME:
        raise EventError(f"{what} must be 1..{MAX_NAME} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise EventError(f"{what} must not contain control characters")
    return value


def parse_event(raw: Any) -> Command:
    """Validate the common envelope, then let the pane kind validate its data."""
    from .panes import kind_module  # the registry imports this module too

    if not isinstance(raw, dict):
        raise EventError("event must be a JSON object")
    op = raw.get("op")
    if op not in OPS:
        raise EventError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    env = check_name(raw.get("env", "main") or "main", "env")
    seq = raw.get("s")
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
        raise EventError("s must be a non-negative integer")
    wall = raw.get("t")
    if not isinstance(wall, (int, float)) or isinstance(wall, bool) or not math.isfinite(wall):
        wall = time.time()
    if op == "delete_env":
        return Command(op=op, env=env, win=None, seq=seq, wall=float(wall))
    win = raw.get("win")
    if op == "close":
        return Command(op=op, env=env, win=None if win is None else check_name(win, "win"), seq=seq,
                       wall=float(wall))
    win = check_name(win, "win")
    opts = raw.get("opts") or {}
    if not isinstance(opts, dict):
        raise EventError("opts must be an object")
    kind = raw.get("kind")
    module = kind_module(kind)
    if module is None:
        raise EventError(f"unknown pane kind {kind!r}")
    mode = raw.get("mode")
    if op == "update" and mode not in module.UPDATE_MODES:
        raise EventError(f"{kind}: update mode must be one of {', '.join(module.UPDATE_MODES)}; got {mode!r}")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        name = str(name)
    cmd = Command(op=op, env=env, win=win, kind=kind, seq=seq, wall=float(wall), mode=mode, name=name, opts=opts)
    cmd.payload = module.validate(cmd, raw)
    return cmd

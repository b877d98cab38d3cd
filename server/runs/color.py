"""A run's colour chosen by a user (op run_color), kept in the env meta so every browser and page draws it alike."""

from __future__ import annotations

import re
from typing import Any

from ..commands.envelope import EnvCommand, EventError, refusing_store_errors
from ..live.deltas import Deltas
from ..store import RUN_COLOR, StoreTx

META_KEY = RUN_COLOR
_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


def check_color(value: Any) -> str | None:
    """"#rrggbb" (stored lower-case) or None (back to the colour its name gives)."""
    if value is None:
        return None
    if not isinstance(value, str) or not _HEX.match(value):
        raise EventError(f'run_color: color must be "#rrggbb" or null, got {str(value)[:40]!r}')
    return value.lower()


def color_of(meta: dict | None) -> str | None:
    """The chosen colour held in an env meta, if it is a valid one (an older or hand-edited meta may hold anything)."""
    value = (meta or {}).get(META_KEY)
    return value.lower() if isinstance(value, str) and _HEX.match(value) else None


def parse_color(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    unknown = set(raw) - {"op", "env", "win", "s", "t", "color"}
    if unknown:  # a typo ("colour") is refused, not lost
        raise EventError(f"{op}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    if "color" not in raw:
        raise EventError('run_color: give color ("#rrggbb", or null to forget it)')
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=check_color(raw["color"]))


@refusing_store_errors
def apply_color(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    tx.ensure_env(cmd.env)
    meta = tx.env_meta(cmd.env) or {}
    if meta.get(META_KEY) == cmd.payload:
        return
    if cmd.payload is None:
        meta.pop(META_KEY, None)
    else:
        meta[META_KEY] = cmd.payload
    tx.set_env_meta(cmd.env, meta)
    deltas.messages.append({"type": "meta", "env": cmd.env, "meta": meta})
    # Every page that draws runs follows the env list, not each run: it hears of the colour there.
    deltas.messages.append({"type": "run_color", "env": cmd.env, "color": cmd.payload})


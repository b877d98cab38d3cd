"""The pane ops (set, update, close): the envelope's pane fields, then the pane's kind validates and applies."""

from __future__ import annotations

from typing import Any

from ..commands.envelope import Command, EnvCommand, EventError, KindName, PaneCommand, check_name
from ..live.deltas import Deltas
from ..store import StoreTx
from . import kind_module, xy


def parse_pane(raw: dict, op: str, env: str, seq: int | None, wall: float) -> PaneCommand:
    win = check_name(raw.get("win"), "win")
    opts = raw.get("opts") or {}
    if not isinstance(opts, dict):
        raise EventError("opts must be an object")
    kind = raw.get("kind")
    module = kind_module(kind)
    if module is None or not isinstance(kind, str):  # (only a str has a module; the test tells mypy so)
        raise EventError(f"unknown pane kind {kind!r}")
    mode = raw.get("mode")
    if op == "update" and mode not in module.UPDATE_MODES:
        raise EventError(f"{kind}: update mode must be one of {', '.join(module.UPDATE_MODES)}; got {mode!r}")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        name = str(name)
    cmd = PaneCommand(op=op, env=env, win=win, kind=KindName(kind), seq=seq, wall=wall, mode=mode, name=name,
                      opts=opts)
    cmd.payload = module.validate(cmd, raw)
    if raw.get("s0") is not None:
        cmd.first_seq = _first_seq(cmd, raw["s0"])
    return cmd


def _first_seq(cmd: PaneCommand, s0: Any) -> int:
    """`s0` of a coalesced append: the event stands for the calls s0..s of one point each (docs/WIRE.md §1)."""
    seq = cmd.seq
    if not isinstance(s0, int) or isinstance(s0, bool) or seq is None or not 0 <= s0 <= seq:
        raise EventError("s0 must be an integer from 0 to the event's s")
    if cmd.kind not in xy.KINDS:
        raise EventError("s0 is only for an append of one line/scatter trace")
    xy.check_range(cmd, seq - s0 + 1)
    return s0


def apply_pane(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    kind_module(cmd.kind).apply(tx, cmd, deltas)


def parse_close(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    win = raw.get("win")
    return EnvCommand(op=op, env=env, win=None if win is None else check_name(win, "win"), seq=seq, wall=wall)


def apply_close(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    wins = tx.pane_wins(cmd.env) if cmd.win is None else [cmd.win]
    for win in wins:
        if tx.delete_pane(cmd.env, win):
            deltas.close(cmd.env, win)


def close_wide(cmd: Command) -> set[str]:
    """Closing every pane of an env (no win) ends the runs of merged appends there."""
    return {cmd.env} if cmd.win is None else set()

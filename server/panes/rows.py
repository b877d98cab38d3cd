"""The `rows` op: several line panes' points of a run of log() rows in one event (docs/WIRE.md §1, Rows).

A W&B-style `log({k1: v1, ..., kK: vK})` is one row of K points, one per pane. The SDK numbers a row's points
with consecutive sequence numbers (pane j of row r: s0 + r*K + j) and sends R rows of the same K panes as one
event covering s0..s. Each pane becomes an ordinary one-trace append; on a replay, only the points whose own
sequence number is above the client's last stored one are kept, so a range straddling what was stored is
stored exactly once.
"""

from __future__ import annotations

import dataclasses

from ..commands.envelope import Command, EnvCommand, EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import StoreTx
from . import xy
from .ops import apply_pane, parse_pane

MAX_PANES = 1000
_PANE_FIELDS = ("win", "kind", "name", "opts", "traces", "x", "y")


@dataclasses.dataclass(slots=True)
class Rows:
    """A parsed rows event: each pane's append (all R points) and where its sequence numbers start."""

    first: int  # s0: the first row's first point
    per_row: int  # K: points (panes) per row
    panes: list[PaneCommand]


def parse_rows(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    s0, panes, walls = raw.get("s0"), raw.get("panes"), raw.get("wall")
    if seq is None or not isinstance(s0, int) or isinstance(s0, bool) or not 0 <= s0 <= seq:
        raise EventError("rows: s and s0 must be integers with 0 <= s0 <= s")
    if not isinstance(panes, list) or not 1 <= len(panes) <= MAX_PANES:
        raise EventError(f"rows: panes must be a list of 1..{MAX_PANES} panes")
    if not isinstance(walls, list) or not walls:
        raise EventError("rows: wall must be a non-empty list (one wall time per row)")
    k, n_rows = len(panes), len(walls)
    if seq - s0 + 1 != n_rows * k:
        raise EventError(f"rows: s0..s covers {seq - s0 + 1} points but {n_rows} rows of {k} panes hold {n_rows * k}")
    cmds: list[PaneCommand] = []
    for j, pane in enumerate(panes):
        if not isinstance(pane, dict) or set(pane) - set(_PANE_FIELDS):
            raise EventError(f"rows: pane {j} must be an object of {', '.join(_PANE_FIELDS)}")
        traces = pane.get("traces")
        if not isinstance(traces, list) or len(traces) != 1 or not isinstance(traces[0], dict):
            raise EventError(f"rows: pane {j} must name exactly one trace")
        x, y = pane.get("x"), pane.get("y")
        if not isinstance(x, list) or not isinstance(y, list) or not len(x) == len(y) == n_rows:
            raise EventError(f"rows: pane {j} must hold one x and one y per row ({n_rows})")
        kind = pane.get("kind", "line")
        if kind not in xy.KINDS:
            raise EventError(f"rows: pane {j} must be a line or scatter pane, got {kind!r}")
        trace = {**traces[0], "x": x, "y": y, "wall": walls}
        pane_raw = {"op": "update", "env": env, "win": pane.get("win"), "kind": kind, "mode": "append",
                    "name": pane.get("name"), "opts": pane.get("opts"), "traces": [trace]}
        cmds.append(parse_pane(pane_raw, "update", env, s0 + (n_rows - 1) * k + j, wall))
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload=Rows(s0, k, cmds))


def unstored(cmd: EnvCommand, last: int) -> list[Command]:
    """Each pane's append without the points whose sequence number is at or below `last` (already stored)."""
    rows: Rows = cmd.payload
    out: list[Command] = []
    for j, pane in enumerate(rows.panes):
        # row r of pane j has seq first + r*K + j: rows up to r_stored are in the store already
        drop = 0 if last < rows.first + j else (last - rows.first - j) // rows.per_row + 1
        n = len(pane.payload[0].x)
        if drop >= n:
            continue
        if drop:
            td = pane.payload[0]
            rest = xy.TraceData(td.name, td.x[drop:], td.y[drop:], td.style,
                                None if td.wall is None else td.wall[drop:])
            pane = dataclasses.replace(pane, payload=[rest])
        out.append(pane)
    return out


def first_seq(cmd: EnvCommand) -> int:
    rows: Rows = cmd.payload
    return rows.first


def apply_rows(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    """A rows command applied whole (producers without a client id, whose events are never deduplicated)."""
    for pane in cmd.payload.panes:
        apply_pane(tx, pane, deltas)


__all__ = ["Rows", "apply_rows", "first_seq", "parse_rows", "unstored"]

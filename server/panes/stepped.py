"""Shared machinery of stepped panes (histogram, media, pr_curve): one stored record per step, every step kept."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StepRow, Store, StoreTx
from .common import merged_opts, stored_object, title_of
from .contract import StoredStep

UPDATE_MODES = ("append",)
MAX_RECORDS_PER_EVENT = 10_000
MAX_STEPS_PER_READ = 100  # records per /steps request: each may carry thousands of numbers
DEFAULT_STEPS = 51        # records a histogram read returns unless ?steps= says otherwise (TensorBoard's 51)
MAX_STEPS = 2_000


@dataclass
class Rec:
    """A validated record: numbers in `data`, image/audio bytes (stored as a blob) in `blob`."""

    step: float
    wall: float
    data: dict | None
    blob: bytes | None = None
    mime: str | None = None
    extra_blobs: list[tuple[bytes, str]] = field(default_factory=list)  # (bytes, mime) the data refers to by sha256


Checker = Callable[[dict, str], tuple[dict | None, bytes | None, str | None]]


def _finite(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EventError(f"{what} must be a finite number")
    return float(value)


def parse_records(cmd: PaneCommand, raw: dict, check: Checker) -> list[Rec]:
    """The event's `records`, each checked by the kind's `check(record, where) -> (data, blob, mime)`."""
    if cmd.op == "update" and cmd.mode not in UPDATE_MODES:
        raise EventError(f"{cmd.kind}: update mode must be append")
    records = raw.get("records")
    if not isinstance(records, list) or not 1 <= len(records) <= MAX_RECORDS_PER_EVENT:
        raise EventError(f"{cmd.kind}: records must be a list of 1..{MAX_RECORDS_PER_EVENT} objects")
    out = []
    for i, rec in enumerate(records):
        where = f"{cmd.kind}: records[{i}]"
        if not isinstance(rec, dict):
            raise EventError(f"{where} must be an object")
        step = _finite(rec.get("step"), f"{where}.step")
        wall = rec.get("wall")
        wall = cmd.wall if wall is None else _finite(wall, f"{where}.wall")
        data, blob, mime = check(rec, where)
        out.append(Rec(step, wall, data, blob, mime))
    return out


StoredCheck = Callable[[dict, str | None, str], None]


def check_stored_records(kind: str, content: dict | None, steps: list[StoredStep], check: StoredCheck,
                         keys: tuple[str, ...] = ()) -> dict:
    """A stepped pane's stored content ({"count"} and the kind's `keys`) and its records, each record's data and
    blob reference checked by the kind's `check(data, blob, where)` as parse_records checks an event's."""
    content = stored_object(content, kind, ("count", *keys))
    count = content.get("count")
    if count != len(steps) or isinstance(count, bool):
        raise EventError(f"{kind}: content count must be the number of step records ({len(steps)}), "
                         f"not {str(count)[:40]!r}")
    for i, (step, wall, data, blob) in enumerate(steps):
        where = f"{kind}: records[{i}]"
        _finite(step, f"{where}.step")
        _finite(wall, f"{where}.wall")
        if not isinstance(data, dict):
            raise EventError(f"{where}: data must be an object")
        check(data, blob, where)
    return content


def mergeable(a: PaneCommand, b: PaneCommand) -> bool:
    return (a.op == b.op == "update" and a.mode == b.mode == "append" and a.kind == b.kind
            and a.env == b.env and a.win == b.win and a.opts == b.opts)


def merge(run: list[PaneCommand]) -> PaneCommand:
    first = run[0]
    merged = PaneCommand(op=first.op, env=first.env, win=first.win, kind=first.kind, seq=run[-1].seq, wall=run[-1].wall,
                     mode=first.mode, name=first.name, opts=first.opts)
    merged.payload = [rec for cmd in run for rec in cmd.payload]
    return merged


def apply_records(tx: StoreTx, cmd: PaneCommand, deltas: Deltas, content: Mapping | None = None) -> PaneRecord:
    """`set` replaces every record of the pane, an append adds them after the stored ones."""
    recs: list[Rec] = cmd.payload
    pane = tx.get_pane(cmd.env, cmd.win)
    if pane is not None and cmd.op == "update" and pane.kind != cmd.kind:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not {cmd.kind}")
    if cmd.op == "set" or pane is None:
        pane = tx.put_pane(cmd.env, cmd.win, cmd.kind, title_of(cmd.opts), cmd.opts,
                           {"count": 0, **(content or {})})
        opts = pane.opts
    else:
        opts = merged_opts(pane, cmd)
    first = int((pane.content or {}).get("count", 0))
    for r in recs:
        for data, mime in r.extra_blobs:
            tx.put_blob(data, mime)
    rows = [(r.step, r.wall, r.data, tx.put_blob(r.blob, r.mime or "application/octet-stream")
             if r.blob is not None else None) for r in recs]
    tx.append_steps(pane, first, rows)
    pane = tx.update_pane(pane, content={**(pane.content or {}), "count": first + len(rows)}, opts=opts,
                          title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)
    return pane


def spread(n: int, budget: int) -> list[int]:
    """At most `budget` indices of 0..n-1 spread evenly, the first and the last always included."""
    if n <= budget:
        return list(range(n))
    if budget <= 1:
        return [n - 1]
    return sorted(set(np.linspace(0, n - 1, budget).round().astype(int).tolist()))


def render_index(store: Store, pane: PaneRecord) -> tuple[dict, int]:
    """The part every stepped pane's data has: count, and the step and wall of every record."""
    steps, walls = store.step_index(pane)
    ints = np.all(steps == np.round(steps)) if len(steps) else True
    step_list = steps.astype(np.int64).tolist() if ints else steps.tolist()
    return {"count": len(steps), "steps": step_list, "walls": walls.tolist()}, len(steps)


def latest(store: Store, pane: PaneRecord, n: int, render_record: Callable[[StepRow], dict]) -> dict | None:
    """The newest of a pane's n records, rendered (None for an empty pane)."""
    rows = store.read_steps(pane, [n - 1]) if n else []
    return render_record(rows[0]) if rows else None


def int_option(options: Mapping[str, str] | None, key: str, default: int, hi: int) -> int:
    raw = (options or {}).get(key)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise EventError(f"{key} must be an integer") from None
    if not 1 <= value <= hi:
        raise EventError(f"{key} must be between 1 and {hi}")
    return value


def record_head(row: StepRow) -> dict:
    """The fields every rendered record starts with: its index, step and wall time."""
    return {"index": row.idx, "step": step_number(row.step), "wall": row.wall}


def step_number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value

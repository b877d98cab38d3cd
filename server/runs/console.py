"""The console op: lines a job printed, per rank; a line sent again (a progress bar's new state) replaces it."""

from __future__ import annotations

import math
from typing import Any

from paneboard.protocol import MAX_CONSOLE_LINE, MAX_CONSOLE_LINES

from ..commands.envelope import EnvCommand, EventError
from ..live.deltas import Deltas
from ..store import CONSOLE_BASE, StoreTx

STREAMS = ("stdout", "stderr")
MAX_RANK = 1 << 20
MAX_LINE_NO = 2**62
MAX_BASE_RANKS = 4096  # ranks in a fork's console base (env meta)


def console_row(raw: Any) -> tuple[int, float, str, str, bool]:
    if not isinstance(raw, list) or len(raw) not in (4, 5):
        raise EventError("console: each line is [n, t, stream, text] or [n, t, stream, text, open]")
    n, t, stream, text = raw[:4]
    is_open = raw[4] if len(raw) == 5 else False
    if not isinstance(n, int) or isinstance(n, bool) or not 0 < n <= MAX_LINE_NO:
        raise EventError("console: a line's n must be a positive integer")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t):
        raise EventError("console: a line's t must be a finite number (seconds since the epoch)")
    if stream not in STREAMS:
        raise EventError(f"console: stream must be stdout or stderr, got {str(stream)[:20]!r}")
    if not isinstance(text, str) or len(text) > MAX_CONSOLE_LINE:
        raise EventError(f"console: a line's text must be a string of at most {MAX_CONSOLE_LINE} characters")
    if not isinstance(is_open, bool):
        raise EventError("console: a line's open flag must be true or false")
    return n, float(t), stream, text.replace("\x00", ""), is_open


def _column(raw: dict, key: str, k: int, default: Any = None) -> list:
    """A column of k values; a single value (a stream, an open flag) stands for all of them."""
    value = raw.get(key, default)
    if isinstance(value, list):
        if len(value) != k:
            raise EventError(f"console: {key} must hold one value per line ({k}), got {len(value)}")
        return value
    return [value] * k


def _rows_of(raw: dict) -> list:
    """Rows [n, t, stream, text, open] from `lines` (rows), or from the columns n, time, stream, text, open
    that the SDK sends (a list per line would cost it a garbage collection per burst)."""
    if "lines" in raw:
        if any(k in raw for k in ("n", "time", "text", "stream", "open")):
            raise EventError("console: give either lines or the columns n, time, stream, text, open")
        return raw["lines"] if isinstance(raw["lines"], list) else [None]
    ns = raw.get("n")
    if not isinstance(ns, list):
        raise EventError("console: give lines ([[n, t, stream, text], ...]) or the columns n, time, stream, text")
    k = len(ns)
    return [list(row) for row in zip(ns, _column(raw, "time", k), _column(raw, "stream", k), _column(raw, "text", k),
                                     _column(raw, "open", k, False), strict=True)]


def parse_console(raw: dict, op: str, env: str, seq: int | None, wall: float) -> EnvCommand:
    unknown = set(raw) - {"op", "env", "win", "s", "t", "rank", "lines", "n", "time", "stream", "text", "open"}
    if unknown:
        raise EventError(f"console: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    rank = raw.get("rank", 0)
    if not isinstance(rank, int) or isinstance(rank, bool) or not 0 <= rank <= MAX_RANK:
        raise EventError(f"console: rank must be an integer from 0 to {MAX_RANK}")
    lines = _rows_of(raw)
    if not 0 < len(lines) <= MAX_CONSOLE_LINES:
        raise EventError(f"console: 1..{MAX_CONSOLE_LINES} lines per event")
    rows: dict[int, tuple[int, float, str, str, bool]] = {}
    for line in lines:
        row = console_row(line)
        rows[row[0]] = row  # the last state of a line sent twice in one event wins
    return EnvCommand(op=op, env=env, seq=seq, wall=wall, payload={"rank": rank, "rows": list(rows.values())})


def check_console_base(value: Any) -> dict[str, int]:
    """The env meta's CONSOLE_BASE as a fork leaves it ({rank: last copied line}), checked before an import."""
    if not isinstance(value, dict) or len(value) > MAX_BASE_RANKS:
        raise EventError(f"{CONSOLE_BASE} must be an object {{rank: line number}} of at most {MAX_BASE_RANKS} ranks")
    for rank, n in value.items():
        if not (isinstance(rank, str) and rank.isdigit() and int(rank) <= MAX_RANK):
            raise EventError(f"{CONSOLE_BASE}: a rank must be an integer from 0 to {MAX_RANK} (as text)")
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= MAX_LINE_NO // 2:
            raise EventError(f"{CONSOLE_BASE}: a line number must be an integer from 0 to {MAX_LINE_NO // 2}")
    return dict(value)


def apply_console(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    rank, rows = cmd.payload["rank"], cmd.payload["rows"]
    base = int(((tx.env_meta(cmd.env) or {}).get(CONSOLE_BASE) or {}).get(str(rank), 0))
    if base:  # a fork: its job's lines go after those copied from its source
        rows = [(n + base, *rest) for n, *rest in rows]
    tx.put_console(cmd.env, rank, rows)
    # A console view refetches from its first open line; nothing else on a page listens for this.
    deltas.messages.append({"type": "console", "env": cmd.env, "rank": rank, "n": min(r[0] for r in rows)})

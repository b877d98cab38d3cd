"""Parsing a producer's event: the common envelope, then its op's own parse from the op table."""

from __future__ import annotations

import math
import time
from typing import Any

from ..commands.envelope import MAX_SEQ, Command, EventError, check_name
from .table import OPS, PRODUCER_OPS


def parse_event(raw: Any) -> Command:
    """Validate the common envelope, then let the op (for panes: the pane's kind) validate its data.

    Raises EventError only: data that trips a validator in any other way (an integer beyond float64, a string
    orjson cannot encode, nesting that exhausts recursion ...) is refused like any other invalid event, so
    every caller (/ingest, POST /api/v1/events, the env API, Visdom's routes) rejects it instead of failing."""
    try:
        return _parse_event(raw)
    except EventError:
        raise
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise EventError(f"invalid event ({type(exc).__name__}: {str(exc)[:300]})") from None


def _parse_event(raw: Any) -> Command:
    if not isinstance(raw, dict):
        raise EventError("event must be a JSON object")
    op = raw.get("op")
    parse = OPS[op].parse if isinstance(op, str) and op in OPS else None
    if parse is None or not isinstance(op, str):  # unknown, or the server's own (no producer may forge one)
        raise EventError(f"op must be one of {', '.join(PRODUCER_OPS)}; got {op!r}")
    env = check_name(raw.get("env", "main") or "main", "env")
    seq = raw.get("s")
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ):
        # (beyond 64 bits it could not even be written back in the ack's "rejected" list)
        raise EventError(f"s must be an integer from 0 to {MAX_SEQ}")
    wall = raw.get("t")
    if not isinstance(wall, (int, float)) or isinstance(wall, bool) or not math.isfinite(wall):
        wall = time.time()
    return parse(raw, op, env, seq, float(wall))


def parse_batch(events: list[tuple[int | None, Any, str | None]]) -> tuple[list[Command], list[dict]]:
    """Each (seq, raw event, decoding error) of a frame parsed alone: the commands, and the rejections
    ({"s", "error"}) of events whose data any failure refused; one bad event never takes the batch down."""
    commands: list[Command] = []
    rejected: list[dict] = []
    for seq, raw, error in events:
        try:
            if error is not None:
                raise EventError(error)
            commands.append(parse_event(raw))
        except Exception as exc:
            reason = str(exc) if isinstance(exc, EventError) else f"invalid event ({type(exc).__name__}: {exc})"
            rejected.append({"s": seq, "error": reason[:1000]})
    return commands, rejected

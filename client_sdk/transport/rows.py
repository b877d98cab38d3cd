"""log() rows kept as one queue item until sent: a run of rows goes out as one `rows` event (docs/WIRE.md §1).

`paneboard.log({k1: v1, ..., kK: vK}, step=x)` queues `(schema, x, values, t)` once, where `schema` names the K
line panes; the row takes K sequence numbers (pane j gets the row's first + j), so the sender thread can split it
into K single-point appends for a server that does not take `rows`, and a server that does keeps exactly the
points above the client's last stored sequence number on a replay. The training thread does no per-key work.
"""

from __future__ import annotations

import math
from typing import Any

from ..convert import fast_dumps


def prefix(envelope: dict[str, Any]) -> bytes:
    """The encoded envelope (its one trace without points) as the fields a point's event starts with
    (points.py; here so that a row's schema can make its panes' prefixes)."""
    raw = fast_dumps(envelope)  # b'{"op":..,"traces":[{"name":..,"style":{..}}]}'; TypeError: not plain JSON
    return raw[1:-3] + b","


class RowSchema:
    """The K line panes of a row, in the order of its values: their envelopes, pre-encoded once."""

    __slots__ = ("env", "keys", "k", "point_prefixes", "heads", "env_json")

    def __init__(self, env: str, keys: tuple[str, ...], panes: list[dict[str, Any]]) -> None:
        self.env = env
        self.keys = keys
        self.k = len(panes)
        # For servers without `rows`: each pane's single-point append (points.py), as before rows existed.
        self.point_prefixes = tuple(prefix({"op": "update", "env": env, "win": p["win"], "kind": p["kind"],
                                            "mode": "append", "name": p["name"], "opts": p["opts"],
                                            "traces": p["traces"]}) for p in panes)
        self.heads = tuple(fast_dumps(p)[:-1] + b"," for p in panes)  # b'{"win":..,"traces":[..],'
        self.env_json = fast_dumps(env)


Row = tuple[RowSchema, float, tuple, float]  # (schema, x, one value per pane, wall time)


def _column(values: Any) -> bytes:
    try:
        return fast_dumps(values)  # orjson writes NaN/Infinity as null: a gap, as for single points
    except TypeError:  # an int beyond 64 bits: as the float it stands for (beyond float64: a gap)
        return fast_dumps([_as_float(v) for v in values])


def _as_float(v: Any) -> float | None:
    try:
        f = float(v)
    except (OverflowError, TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def rows_event(first: int, last: int, rows: list[Row]) -> bytes:
    """One `rows` event with its sequence numbers: R rows of the same K panes, covering first..last."""
    schema = rows[0][0]
    xs = _column([r[1] for r in rows])
    cols = zip(*[r[2] for r in rows], strict=True)
    panes = b",".join(head + b'"x":%s,"y":%s}' % (xs, _column(col)) for head, col in zip(schema.heads, cols,
                                                                                           strict=True))
    return b'{"s":%d,"s0":%d,"t":%s,"op":"rows","env":%s,"wall":%s,"panes":[%s]}' % (
        last, first, fast_dumps(rows[-1][3]), schema.env_json, fast_dumps([r[3] for r in rows]), panes)


def row_without_s(last: int, row: Row) -> bytes:
    """A row as its event without "s" (the spool's lines): `{"s0":..,"op":"rows",...}`."""
    event = rows_event(last - row[0].k + 1, last, [row])
    return b"{" + event[event.index(b",") + 1:]


def as_points(last: int, row: Row) -> list[tuple[int, tuple[bytes, float, float, float]]]:
    """A row as its K single-point appends with their own sequence numbers (servers without `rows`)."""
    schema, x, values, t = row
    first = last - schema.k + 1
    return [(first + j, (pre, x, v, t)) for j, (pre, v) in enumerate(zip(schema.point_prefixes, values,
                                                                          strict=True))]

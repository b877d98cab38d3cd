"""Single-point appends kept unencoded until sent, so that a run of them to one trace goes out as one event.

`line(X=[step], Y=[v], update='append')` queues `(prefix, x, y, t)` instead of a whole JSON event: `prefix` is
the event's encoded envelope up to its trace's points (env, win, opts, trace name and style). When a frame is
built, consecutive points with the same prefix and consecutive sequence numbers become one columnar event
`{"s": last, "s0": first, ..., "traces": [{..., "x": [..], "y": [..], "wall": [..]}]}` (docs/WIRE.md §1): the
server stores it as the calls s0..s (one point each) and, on a replay, skips the points it already has.
log() rows (rows.py) ride the same queue as one item each and go out as `rows` events, or as points.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator

from ..convert import fast_dumps
from ..protocol import PointRun, pack_frame
from .rows import Row, as_points, prefix, row_without_s, rows_event

Point = tuple[bytes, float, float, float]  # (prefix, x, y, wall time)
# What an outbox item holds: an encoded event (without "s"), a point, or a log() row (its s: the row's last seq).
Data = bytes | Point | Row


class Prefixes:
    """The prefix of each single-point append's event; those without opts (the usual case) are cached."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str, str | None, str, str], bytes] = {}

    def get(self, env: str, win: str, name: str | None, tname: str, opts: dict | None, style: dict) -> bytes | None:
        """None: opts hold values that are not plain JSON (numpy ...), for the general encoder."""
        key = (env, win, name, tname, style["mode"]) if not opts else None
        pre = self._cache.get(key) if key is not None else None
        if pre is None:
            try:
                pre = prefix({"op": "update", "env": env, "win": win, "kind": "line", "mode": "append",
                              "name": name, "opts": opts or {}, "traces": [{"name": tname, "style": style}]})
            except TypeError:
                return None
            if key is not None:
                if len(self._cache) >= 4096:
                    self._cache.clear()
                self._cache[key] = pre
        return pre


def encoded(data: Data, s: int = 0) -> bytes:
    """An item's event as JSON without "s" (the spool's lines, pending_events); `s`: the item's seq."""
    if isinstance(data, bytes):
        return data
    if type(data[0]) is not bytes:
        return row_without_s(s, data)  # type: ignore[arg-type]
    pre, x, y, t = data  # type: ignore[misc]
    return b'{"t":%s,%s"x":%s,"y":%s}]}' % (fast_dumps(t), pre, fast_dumps([x]), fast_dumps([y]))


def size(data: Data) -> int:
    """About how many bytes the item takes on the wire (batch size limits)."""
    if isinstance(data, bytes):
        return len(data)
    head = data[0]
    return len(head) + 64 if type(head) is bytes else 64 + 96 * head.k  # type: ignore[arg-type, union-attr]


def expand_rows(items: list[tuple[int, Data]]) -> list[tuple[int, Data]]:
    """Rows as their single-point appends (a server without `rows`); other items as they are."""
    if all(isinstance(d, bytes) or type(d[0]) is bytes for _, d in items):
        return items
    out: list[tuple[int, Data]] = []
    for s, d in items:
        if isinstance(d, bytes) or type(d[0]) is bytes:
            out.append((s, d))
        else:
            out += as_points(s, d)  # type: ignore[arg-type]
    return out


def runs(items: list[tuple[int, Data]]) -> Iterator[tuple[int, int, bytes | list[Point]]]:
    """(first s, last s, what goes out as one event): an encoded event alone, or a run of points to one
    trace with consecutive sequence numbers; a run of rows of one schema is encoded here as one event."""
    i, n = 0, len(items)
    while i < n:
        s, d = items[i]
        if isinstance(d, bytes):
            yield s, s, d
            i += 1
            continue
        if type(d[0]) is not bytes:
            # Rows of one schema with consecutive sequence numbers (k per row): one `rows` event.
            schema = d[0]
            k = schema.k  # type: ignore[union-attr]
            j = i + 1
            while j < n and not isinstance(items[j][1], bytes) and items[j][1][0] is schema \
                    and items[j][0] == items[j - 1][0] + k:
                j += 1
            first, last = s - k + 1, items[j - 1][0]
            yield first, last, rows_event(first, last, [it[1] for it in items[i:j]])  # type: ignore[misc]
            i = j
            continue
        run = [d]
        j = i + 1
        while j < n:
            s_next, d_next = items[j]
            if isinstance(d_next, bytes) or d_next[0] != d[0] or s_next != s + len(run):
                break
            run.append(d_next)
            j += 1
        yield s, items[j - 1][0], run
        i = j


def frame(items: list[tuple[int, Data]], rows: bool = True) -> bytes:
    """`{"batch":[...]}` with each event's `s` spliced in; runs of points to one trace as one event each;
    `rows`: the server takes `rows` events (else rows go out as their points)."""
    out: list[bytes] = []
    for s, last, event in runs(items if rows else expand_rows(items)):
        if isinstance(event, bytes):
            out.append(event if event.startswith(b'{"s":') else b'{"s":%d,%s' % (s, event[1:]))
        elif len(event) == 1:
            out.append(b'{"s":%d,%s' % (s, encoded(event[0])[1:]))
        else:
            out.append(b'{"s":%d,"s0":%d,"t":%s,%s"x":%s,"y":%s,"wall":%s}]}' % (
                last, s, fast_dumps(event[-1][3]), event[0][0], fast_dumps([p[1] for p in event]),
                fast_dumps([p[2] for p in event]), fast_dumps([p[3] for p in event])))
    return b'{"batch":[' + b",".join(out) + b"]}"


# -- binary frames (docs/WIRE.md §1), once the server's welcome agreed to them: paneboard.protocol's codec -------
def binary_frame(items: list[tuple[int, Data]], rows: bool = True) -> bytes:
    """The frame of `items` as binary: runs of points as little-endian float64 columns x, y, wall."""
    events: list[bytes | PointRun] = []
    for s, last, event in runs(items if rows else expand_rows(items)):
        if isinstance(event, bytes):
            events.append(event if event.startswith(b'{"s":') else b'{"s":%d,%s' % (s, event[1:]))
            continue
        envelope = b"{" + event[0][0][:-1] + b"}]}"
        cols = array("d", [p[1] for p in event] + [p[2] for p in event] + [p[3] for p in event])
        if sys.byteorder != "little":
            cols.byteswap()
        events.append(PointRun(s, last, event[-1][3], envelope, cols.tobytes()))
    return pack_frame(events)

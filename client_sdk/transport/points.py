"""Single-point appends kept unencoded until sent, so that a run of them to one trace goes out as one event.

`line(X=[step], Y=[v], update='append')` queues `(prefix, x, y, t)` instead of a whole JSON event: `prefix` is
the event's encoded envelope up to its trace's points (env, win, opts, trace name and style). When a frame is
built, consecutive points with the same prefix and consecutive sequence numbers become one columnar event
`{"s": last, "s0": first, ..., "traces": [{..., "x": [..], "y": [..], "wall": [..]}]}` (docs/WIRE.md §1): the
server stores it as the calls s0..s (one point each) and, on a replay, skips the points it already has.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterator
from typing import Any

from ..convert import fast_dumps
from ..protocol import PointRun, pack_frame

Point = tuple[bytes, float, float, float]  # (prefix, x, y, wall time)
Data = bytes | Point  # what an outbox item holds: an encoded event (without "s"), or a point


def prefix(envelope: dict[str, Any]) -> bytes:
    """The encoded envelope (its one trace without points) as the fields a point's event starts with."""
    raw = fast_dumps(envelope)  # b'{"op":..,"traces":[{"name":..,"style":{..}}]}'; TypeError: not plain JSON
    return raw[1:-3] + b","


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


def encoded(data: Data) -> bytes:
    """An item's event as JSON without "s" (the spool's lines, pending_events)."""
    if isinstance(data, bytes):
        return data
    pre, x, y, t = data
    return b'{"t":%s,%s"x":%s,"y":%s}]}' % (fast_dumps(t), pre, fast_dumps([x]), fast_dumps([y]))


def size(data: Data) -> int:
    """About how many bytes the item takes on the wire (batch size limits)."""
    return len(data) if isinstance(data, bytes) else len(data[0]) + 64


def runs(items: list[tuple[int, Data]]) -> Iterator[tuple[int, int, bytes | list[Point]]]:
    """(first s, last s, what goes out as one event): an encoded event alone, or a run of points to one
    trace with consecutive sequence numbers."""
    i, n = 0, len(items)
    while i < n:
        s, d = items[i]
        if isinstance(d, bytes):
            yield s, s, d
            i += 1
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


def frame(items: list[tuple[int, Data]]) -> bytes:
    """`{"batch":[...]}` with each event's `s` spliced in; runs of points to one trace as one event each."""
    out: list[bytes] = []
    for s, last, event in runs(items):
        if isinstance(event, bytes):
            out.append(b'{"s":%d,%s' % (s, event[1:]))
        elif len(event) == 1:
            out.append(b'{"s":%d,%s' % (s, encoded(event[0])[1:]))
        else:
            out.append(b'{"s":%d,"s0":%d,"t":%s,%s"x":%s,"y":%s,"wall":%s}]}' % (
                last, s, fast_dumps(event[-1][3]), event[0][0], fast_dumps([p[1] for p in event]),
                fast_dumps([p[2] for p in event]), fast_dumps([p[3] for p in event])))
    return b'{"batch":[' + b",".join(out) + b"]}"


# -- binary frames (docs/WIRE.md §1), once the server's welcome agreed to them: paneboard.protocol's codec -------
def binary_frame(items: list[tuple[int, Data]]) -> bytes:
    """The frame of `items` as binary: runs of points as little-endian float64 columns x, y, wall."""
    events: list[bytes | PointRun] = []
    for s, last, event in runs(items):
        if isinstance(event, bytes):
            events.append(b'{"s":%d,%s' % (s, event[1:]))
            continue
        envelope = b"{" + event[0][0][:-1] + b"}]}"
        cols = array("d", [p[1] for p in event] + [p[2] for p in event] + [p[3] for p in event])
        if sys.byteorder != "little":
            cols.byteswap()
        events.append(PointRun(s, last, event[-1][3], envelope, cols.tobytes()))
    return pack_frame(events)

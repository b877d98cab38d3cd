"""Decoding `/ingest` frames so that no single event can take the batch or the connection down with it.

Each event of a batch comes out either decoded and within the limits below, or as a rejection reason: the
rest of the batch goes on, and the producer learns which sequence number can never be stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from paneboard.protocol import (
    BINARY_MAGIC,
    MAX_BATCH_EVENTS,
    MAX_FRAME_CONTAINERS,
    MAX_FRAME_VALUES,
    PointRun,
    unpack_frame,
)

from .. import jsonio
from ..commands.envelope import MAX_SEQ
from ..jsonio import lone_surrogate, may_hold_surrogates
from . import frame_budget

MAX_DEPTH = 64             # nesting levels inside one event; deeper data only breaks recursive code later
# Integers orjson can write back: a NaN literal sends a body through Python's parser, which keeps any integer,
# and one beyond 64 bits stored in opts or content made every later read of the env a 500.
INT_MIN, INT_MAX = jsonio.INT_MIN, jsonio.INT_MAX
_CONTAINERS = frozenset({dict, list})
_SPECIAL = frozenset({dict, list, int})
_INTS = {int}
POINT_RUN_KINDS = ("line", "scatter")  # the kinds whose appends are x/y points


@dataclass(slots=True)
class Decoded:
    """One event of a batch: `raw` when it may be parsed, else the reason it never can be stored."""

    raw: Any
    seq: int | None
    error: str | None = None


@dataclass(slots=True)
class Frame:
    events: list[Decoded] | None = None  # a batch
    msg: Any = None                      # anything else that decoded (a hello ...)
    error: str | None = None             # not JSON, and not a batch we could split


def decode_frame(frame: str | bytes, max_event_bytes: int) -> Frame:
    if isinstance(frame, bytes) and frame[:4] == BINARY_MAGIC:
        return decode_binary(frame, max_event_bytes)
    data = frame.encode() if isinstance(frame, str) else frame
    too_big = frame_budget.judge(data)
    if too_big is not None:  # refused while still bytes: decoding it is what would cost
        return _refused(data, too_big)
    strict = True
    try:
        msg = orjson.loads(data)
    except orjson.JSONDecodeError:
        strict = False  # NaN/Infinity literals, or integers beyond 64 bits: Python's parser takes both
        try:
            msg = json.loads(data)
        except (ValueError, RecursionError) as exc:
            # One bad event (say nested 2,000 deep) spoils the whole frame: split it and decode each event.
            parts = split_batch(data)
            if parts is None:
                return Frame(error=f"frame is not valid JSON: {_reason(exc)}")
            return Frame(events=[_decode_part(part, max_event_bytes) for part in parts])
    if not (isinstance(msg, dict) and "hello" not in msg and isinstance(msg.get("batch"), list)):
        return Frame(msg=msg)
    # orjson yields 64-bit integers at most, and a frame no deeper than the limit (the frame object and its
    # batch list add 2) holds no event deeper than it: then the per-event walk is skipped (hot path).
    walk = not strict or bracket_depth(data) > MAX_DEPTH + 2
    # Only a frame bigger than the limit can hold an event bigger than it: measure events only then.
    limit = max_event_bytes if len(data) > max_event_bytes else 0
    # Lone surrogate escapes ("\ud800"): orjson refuses them, so only Python's parser can have let one through.
    surrogates = not strict and may_hold_surrogates(data)
    return Frame(events=[checked(raw, walk, limit, surrogates) for raw in msg["batch"]])


def _refused(data: bytes, too_big: frame_budget.Refusal) -> Frame:
    """A frame holding one event (the SDK sends an oversized event alone) rejects that event, acked as never
    storable so the SDK moves on; a bigger batch is refused whole (the SDK's batches never get near a limit)."""
    m = _BATCH_OPEN.match(data) if too_big.events == 1 else None
    seq = _SEQ.match(data, m.end()) if m is not None else None
    if seq is None or int(seq.group(1)) > MAX_SEQ:
        return Frame(error=too_big.reason)
    return Frame(events=[Decoded(None, int(seq.group(1)), too_big.reason)])


_BRACKETS_ONLY = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 / -1 as int8


def bracket_depth(data: bytes) -> int:
    """Deepest bracket nesting of the text, in C (~0.1 us per small event, 5% of decoding it).

    Brackets inside strings count too: an opening one only overestimates (the exact walk runs); closing
    ones could hide depth, and such an event still fails alone later, as any event that raises does.
    """
    steps = np.frombuffer(data.translate(None, _BRACKETS_ONLY).translate(_STEPS), np.int8)
    return int(steps.cumsum(dtype=np.int32).max()) if len(steps) else 0


def checked(raw: Any, walk: bool = True, limit: int = 0, surrogates: bool = False) -> Decoded:
    seq = raw.get("s") if isinstance(raw, dict) else None
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ:
        seq = None
    try:
        if walk:
            check_shape(raw)
        if limit and len(orjson.dumps(raw)) > limit:
            raise ValueError(f"event is larger than the server's limit of {limit} bytes (--max-request-mb)")
        if surrogates and lone_surrogate(raw):
            raise ValueError("text holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not valid Unicode")
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        return Decoded(None, seq, _reason(exc))
    return Decoded(raw, seq)


def check_shape(obj: Any) -> None:
    """Nesting depth and integer range, walked iteratively (no recursion for a hostile depth to exhaust).

    Containers holding only strings, floats, bools and nulls (the long x/y arrays) are skipped by a C-level
    look at their element types; only containers and ints are visited one by one.
    """
    if type(obj) not in _CONTAINERS:
        return
    stack = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        values = node.values() if type(node) is dict else node
        kinds = set(map(type, values))
        if kinds.isdisjoint(_SPECIAL):
            continue
        if depth >= MAX_DEPTH and not kinds.isdisjoint(_CONTAINERS):
            raise ValueError(f"event is nested more than {MAX_DEPTH} levels deep")
        if kinds == _INTS:  # x steps 0, 1, 2 ...: min and max in C
            if max(values) > INT_MAX or min(values) < INT_MIN:
                raise ValueError("integer out of range (beyond 64 bits)")
            continue
        for v in values:
            t = type(v)
            if t is dict or t is list:
                stack.append((v, depth + 1))
            elif t is int and not INT_MIN <= v <= INT_MAX:
                raise ValueError("integer out of range (beyond 64 bits)")


_BATCH_OPEN = re.compile(rb'\s*\{\s*"batch"\s*:\s*\[')
# Whole strings (skipped in C, escapes included) or one structural character.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.S)
_SEQ = re.compile(rb'\s*\{\s*"s"\s*:\s*(\d{1,19})\b')


def split_batch(frame: bytes) -> list[bytes] | None:
    """The raw top-level elements of a `{"batch": [...]}` frame, found without decoding them; None if the
    frame is not shaped like one (then nothing in it can be attributed to an event)."""
    m = _BATCH_OPEN.match(frame)
    if m is None:
        return None
    parts: list[bytes] = []
    depth, start = 0, m.end()
    for tok in _TOKEN.finditer(frame, m.end()):
        c = tok.group()
        if c in (b"[", b"{"):
            depth += 1
        elif c in (b"]", b"}"):
            if depth == 0:  # the batch's own closing bracket
                last = frame[start:tok.start()]
                if last.strip() or parts:
                    parts.append(last)
                return parts if re.fullmatch(rb"\s*\}\s*", frame[tok.end():]) else None
            depth -= 1
        elif c == b"," and depth == 0:
            parts.append(frame[start:tok.start()])
            start = tok.end()
    return None


def _decode_part(part: bytes, max_event_bytes: int) -> Decoded:
    m = _SEQ.match(part)
    seq = int(m.group(1)) if m else None
    if seq is not None and seq > MAX_SEQ:
        seq = None
    if len(part) > max_event_bytes:
        return Decoded(None, seq, f"event is larger than the server's limit of {max_event_bytes} bytes "
                                  "(--max-request-mb)")
    surrogates = strict = False
    try:
        raw = orjson.loads(part)
        strict = True
    except orjson.JSONDecodeError:
        try:
            raw = json.loads(part)
        except (ValueError, RecursionError) as exc:
            return Decoded(None, seq, f"event is not valid JSON: {_reason(exc)}")
        surrogates = may_hold_surrogates(part)
    # As for a whole frame (decode_frame): orjson's integers fit, and a shallow text holds no deep event.
    found = checked(raw, walk=not strict or bracket_depth(part) > MAX_DEPTH, surrogates=surrogates)
    if found.seq is None:
        found.seq = seq
    return found


def decode_binary(data: bytes, max_event_bytes: int) -> Frame:
    """A binary frame (paneboard.protocol's codec): each event as JSON or a run of points as float64 columns.

    A frame whose structure does not add up is refused whole (nothing in it can be attributed to an event);
    an event whose content is bad is rejected alone, as in a JSON frame.
    """
    try:
        parts = unpack_frame(data, MAX_BATCH_EVENTS)
    except ValueError as exc:
        return Frame(error=f"binary frame is malformed: {exc}")
    del data  # the parts are copies: a caller that passed the frame alone frees it here
    # The JSON parts together within a JSON frame's container limit (the columns hold none). Each part is
    # decoded alone, so brackets are counted raw: text in strings only overcounts.
    containers = sum(p.count(b"[") + p.count(b"{") for p in (part if isinstance(part, bytes) else part.envelope
                                                             for part in parts))
    if containers > MAX_FRAME_CONTAINERS:
        return Frame(error=f"a frame holds at most {MAX_FRAME_CONTAINERS} JSON objects and arrays "
                           f"(this one {containers}): send smaller batches")
    # Values likewise (a point run's columns are numpy's, not Python objects): an event beyond the limit is
    # rejected alone, undecoded; the rest together must fit it too.
    counts = [frame_budget.values(part if isinstance(part, bytes) else part.envelope) for part in parts]
    kept = sum(n for n in counts if n <= MAX_FRAME_VALUES)
    if kept > MAX_FRAME_VALUES:
        return Frame(error=f"a frame holds at most {MAX_FRAME_VALUES} values (this one about {kept}): "
                           "send smaller batches")
    return Frame(events=[_too_many_values(part, n) if n > MAX_FRAME_VALUES else
                         _decode_part(part, max_event_bytes) if isinstance(part, bytes) else
                         _point_run(part, max_event_bytes) for part, n in zip(parts, counts, strict=True)])


def _too_many_values(part: bytes | PointRun, n: int) -> Decoded:
    if isinstance(part, PointRun):
        seq = part.s if 0 <= part.s <= MAX_SEQ else None
    else:
        m = _SEQ.match(part)
        seq = int(m.group(1)) if m and int(m.group(1)) <= MAX_SEQ else None
    return Decoded(None, seq, f"an event holds at most {MAX_FRAME_VALUES} values (this one about {n}): "
                              "send fewer points per call")


def _point_run(run: PointRun, max_event_bytes: int) -> Decoded:
    """A run of points as the event a JSON frame would carry: the envelope plus x, y, wall and s0..s."""
    s0, s, t = run.s0, run.s, run.t
    cols = np.frombuffer(run.columns, dtype="<f8")
    seq = s if 0 <= s <= MAX_SEQ else None
    found = _decode_part(run.envelope, max_event_bytes)
    raw = found.raw
    if found.error is not None:
        return Decoded(None, seq, found.error)
    traces = raw.get("traces") if isinstance(raw, dict) else None
    if not (isinstance(traces, list) and len(traces) == 1 and isinstance(traces[0], dict)) or seq is None:
        return Decoded(None, seq, "a point run needs an envelope object with one trace and s in range")
    # Points only: an envelope naming another op (delete_env, fork ...) would run it under the points' cover.
    if raw.get("op") != "update" or raw.get("mode") != "append" or raw.get("kind") not in POINT_RUN_KINDS:
        return Decoded(None, seq, "a point run carries points only: its envelope must be op update, mode append "
                                  f"and kind {' or '.join(POINT_RUN_KINDS)}")
    n = len(cols) // 3
    raw.update(s=s, s0=s0, t=t)
    traces[0].update(x=cols[:n], y=cols[n:2 * n], wall=cols[2 * n:])
    return Decoded(raw, seq)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return f"nested too deeply (at most {MAX_DEPTH} levels)"
    text = str(exc)
    if "depth limit" in text or "recursion" in text.lower():
        return f"nested too deeply (at most {MAX_DEPTH} levels)"
    return text[:300]

"""What a JSON frame or body will cost decoded, counted before it is decoded: its events and containers.

A batch of 1,000,000 empty `{}` events is 3 MB on the wire and gigabytes as Python objects, rejections and an
ack: its size alone says nothing. Counting the batch's elements and every object and array with numpy first
lets a frame beyond the limits be refused whole while it is still bytes.
"""

from __future__ import annotations

import numpy as np

from paneboard.protocol import MAX_BATCH_EVENTS, MAX_FRAME_CONTAINERS

_QUOTE = ord('"')
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{},')
_STEP = np.zeros(256, np.int8)  # depth step of each byte outside strings: +1 opens, -1 closes
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1
SCAN_BLOCK = 1 << 18  # bytes per pass (~14 bytes of numpy arrays per quote, bracket or comma in it)


def shape(data: bytes) -> tuple[int, int]:
    """(elements of the lists one level inside the top object, objects and arrays outside strings): the first
    is the events of a `{"batch": [...]}` or `{"events": [...]}` text (at least; another list-valued key adds
    its elements), exact for any text a JSON parser accepts.

    Scanned in blocks, carrying the string state across them: no Python object per string or bracket (a regex
    substitution of 15,000,000 strings took gigabytes)."""
    if b"\\" in data:  # escapes first (left to right, as a parser reads them): \\ and \" never end a string
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    elements = containers = depth = 0
    in_string = False
    for at in range(0, len(data), SCAN_BLOCK):
        chars = np.frombuffer(data[at:at + SCAN_BLOCK].translate(None, _NOT_STRUCTURE), np.uint8)
        if not len(chars):
            continue
        # Odd quotes so far: inside a string (an opening quote counts itself in; a closing one is outside).
        outside = (np.cumsum(chars == _QUOTE, dtype=np.int32) + in_string) % 2 == 0
        steps = _STEP[chars] * outside
        depths = np.cumsum(steps, dtype=np.int32)
        depths += depth
        containers += int(np.count_nonzero(steps == 1))
        # A comma at depth 2 separates two elements of a list in the top object; a list opened there (from
        # depth 1) holds one more element than its commas (one too many for an empty list: an upper bound).
        at_two = (depths == 2) & outside
        elements += int(np.count_nonzero(at_two & ((chars == ord(",")) | (chars == ord("[")))))
        depth, in_string = int(depths[-1]), not bool(outside[-1])
    return elements, containers


def refusal(data: bytes, max_events: int = MAX_BATCH_EVENTS,
            max_containers: int = MAX_FRAME_CONTAINERS) -> str | None:
    """Why the text must not be decoded (too many events or containers), or None. A cheap count in C decides
    whether the exact one is needed: most frames hold fewer commas than the event limit."""
    if data.count(b",") < max_events and data.count(b"[") + data.count(b"{") <= max_containers:
        return None
    events, containers = shape(data)
    if events > max_events:
        return f"a batch holds at most {max_events} events (this one about {events}): send smaller batches"
    if containers > max_containers:
        return (f"a frame holds at most {max_containers} JSON objects and arrays (this one {containers}): "
                "send smaller batches")
    return None

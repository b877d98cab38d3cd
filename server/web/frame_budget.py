"""What a JSON frame or body will cost decoded, counted before it is decoded: its events and containers.

A batch of 1,000,000 empty `{}` events is 3 MB on the wire and gigabytes as Python objects, rejections and an
ack: its size alone says nothing. Counting the batch's elements and every object and array in C first lets a
frame beyond the limits be refused whole while it is still bytes.
"""

from __future__ import annotations

import re

import numpy as np

from paneboard.protocol import MAX_BATCH_EVENTS, MAX_FRAME_CONTAINERS

# Whole strings, escapes included: brackets and commas inside them are text, not structure.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_STRUCTURE_ONLY = bytes(b for b in range(256) if b not in b"[]{},")
_DEPTH_STEPS = bytes.maketrans(b"[{]},", b"\x01\x01\xff\xff\x00")  # +1 / -1 / 0 as int8
SCAN_BLOCK = 1 << 18  # structural characters per numpy pass (~8 bytes of arrays each)


def shape(data: bytes) -> tuple[int, int]:
    """(elements of the lists one level inside the top object, objects and arrays in all): the first is the
    events of a `{"batch": [...]}` or `{"events": [...]}` text (at least; another list-valued key adds its
    elements), exact for any text a JSON parser accepts. Scanned in blocks: a few MB of arrays at a time."""
    structure = _STRING.sub(b"", data).translate(None, _STRUCTURE_ONLY)
    containers = structure.count(b"[") + structure.count(b"{")
    elements, depth = 0, 0
    for at in range(0, len(structure), SCAN_BLOCK):
        block = structure[at:at + SCAN_BLOCK]
        chars = np.frombuffer(block, np.uint8)
        depths = np.frombuffer(block.translate(_DEPTH_STEPS), np.int8).cumsum(dtype=np.int32)
        depths += depth  # no frame is 2**31 bytes deep: int32 holds any depth
        # A comma at depth 2 separates two elements of a list in the top object; a list opened there (from
        # depth 1) holds one more element than its commas (one too many for an empty list: an upper bound).
        at_two = depths == 2
        elements += int(np.count_nonzero(at_two & (chars == ord(",")))) + int(np.count_nonzero(at_two & (chars == ord("["))))
        depth = int(depths[-1])
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

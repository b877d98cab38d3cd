"""What a JSON frame or body will cost decoded, counted before it is decoded: its events, containers and values.

A batch of 1,000,000 empty `{}` events is 3 MB on the wire and gigabytes as Python objects, rejections and an
ack; 33,000,000 bare floats are 132 MB on the wire and a gigabyte decoded: its size alone says nothing.
Counting the batch's elements, every object and array and the commas between values with numpy first lets a
frame beyond the limits be refused while it is still bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paneboard.protocol import MAX_BATCH_EVENTS, MAX_FRAME_CONTAINERS, MAX_FRAME_VALUES

_QUOTE = ord('"')
_COMMA = ord(",")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{},')
_STEP = np.zeros(256, np.int8)  # depth step of each byte outside strings: +1 opens, -1 closes
_STEP[list(b"[{")] = 1
_STEP[list(b"]}")] = -1
SCAN_BLOCK = 1 << 18  # bytes per pass (~14 bytes of numpy arrays per quote, bracket or comma in it)


@dataclass(frozen=True, slots=True)
class Shape:
    """What decoding a text would build: `events` (elements of the lists one level inside the top object: the
    events of a `{"batch": [...]}` or `{"events": [...]}` text, at least), `containers` (objects and arrays)
    and `values` (commas outside strings: one fewer than the values and members of each container)."""

    events: int
    containers: int
    values: int


def shape(data: bytes) -> Shape:
    """The text's Shape, exact for any text a JSON parser accepts.

    Scanned in blocks, carrying the string state across them: no Python object per string or bracket (a regex
    substitution of 15,000,000 strings took gigabytes)."""
    if b"\\" in data:  # escapes first (left to right, as a parser reads them): \\ and \" never end a string
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    elements = containers = values = depth = 0
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
        commas = (chars == _COMMA) & outside
        values += int(np.count_nonzero(commas))
        # A comma at depth 2 separates two elements of a list in the top object; a list opened there (from
        # depth 1) holds one more element than its commas (one too many for an empty list: an upper bound).
        at_two = (depths == 2) & outside
        elements += int(np.count_nonzero(at_two & (commas | (chars == ord("[")))))
        depth, in_string = int(depths[-1]), not bool(outside[-1])
    return Shape(elements, containers, values)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a text must not be decoded, and how many events it holds (one event can be rejected alone)."""

    reason: str
    events: int


def judge(data: bytes, max_events: int = MAX_BATCH_EVENTS, max_containers: int = MAX_FRAME_CONTAINERS,
          max_values: int = MAX_FRAME_VALUES) -> Refusal | None:
    """A Refusal when the text holds too many events, containers or values, else None. A cheap count in C
    decides whether the exact one is needed: most frames hold fewer commas than the event limit."""
    commas = data.count(b",")
    if commas < max_events and commas <= max_values and \
            data.count(b"[") + data.count(b"{") <= max_containers:
        return None
    found = shape(data)
    if found.events > max_events:
        return Refusal(f"a batch holds at most {max_events} events (this one about {found.events}): "
                       "send smaller batches", found.events)
    if found.containers > max_containers:
        return Refusal(f"a frame holds at most {max_containers} JSON objects and arrays "
                       f"(this one {found.containers}): send smaller batches", found.events)
    if found.values > max_values:
        return Refusal(f"a frame holds at most {max_values} values (this one about {found.values}): "
                       "send fewer points per call or smaller batches", found.events)
    return None


def refusal(data: bytes, max_events: int = MAX_BATCH_EVENTS, max_containers: int = MAX_FRAME_CONTAINERS,
            max_values: int = MAX_FRAME_VALUES) -> str | None:
    """Why the text must not be decoded (too many events, containers or values), or None."""
    found = judge(data, max_events, max_containers, max_values)
    return None if found is None else found.reason


def values(part: bytes, max_values: int = MAX_FRAME_VALUES) -> int:
    """The values of one event's JSON (commas outside strings): counted raw while that cannot pass
    `max_values`, exactly (strings skipped) only when it might."""
    commas = part.count(b",")
    return commas if commas <= max_values else shape(part).values

"""JSON encoding for the API and the live channel: numpy arrays inline, NaN/Inf as null."""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

_OPTS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def _default(obj: Any) -> Any:
    # Arrays orjson cannot take natively (non-contiguous, other dtypes) and numpy scalars.
    if hasattr(obj, "tolist"):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps(obj: Any) -> bytes:
    """Strict: what orjson cannot write raises (validators rely on it to refuse such data)."""
    return orjson.dumps(obj, default=_default, option=_OPTS)


def dumps_answer(obj: Any) -> bytes:
    """For HTTP answers: data stored before it was refused at ingest (an integer beyond 64 bits, a lone
    surrogate) is written as a float / with the character replaced, so no read of it is ever a 500."""
    try:
        return dumps(obj)
    except orjson.JSONEncodeError:
        return orjson.dumps(_encodable(obj), default=_default, option=_OPTS)


def _encodable(obj: Any) -> Any:
    if isinstance(obj, bool) or obj is None:
        return obj
    if isinstance(obj, int):
        return obj if INT_MIN <= obj <= INT_MAX else float(obj) if abs(obj) < 1 << 1000 else str(obj)
    if isinstance(obj, str):
        return obj.encode("utf-8", "replace").decode("utf-8")
    if isinstance(obj, dict):
        return {_encodable(k) if isinstance(k, str) else k: _encodable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encodable(v) for v in obj]
    return obj


INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1  # what orjson reads and writes

def loads(data: str | bytes) -> Any:
    """Strict and fast first; Python's parser accepts the NaN/Infinity literals some clients send.

    Anything it must refuse raises ValueError: also nesting deeper than Python's parser recurses, and a lone
    UTF-16 surrogate escape ("\\ud800"), which orjson refuses and Python's parser lets through as a str that no
    UTF-8 encoder (the database's, orjson's) can write later.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            obj = json.loads(data)
        except RecursionError:
            raise ValueError("nested too deeply") from None
    if may_hold_surrogates(data) and lone_surrogate(obj):
        raise ValueError("text holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not valid Unicode")
    return obj


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_B = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def may_hold_surrogates(text: str | bytes) -> bool:
    """Whether JSON text has a surrogate escape at all (pairs included): a scan in C before any walk."""
    if isinstance(text, str):
        return _SURROGATE_ESCAPE.search(text) is not None or _SURROGATE.search(text) is not None
    return _SURROGATE_ESCAPE_B.search(text) is not None


def lone_surrogate(obj: Any) -> bool:
    """Whether a decoded JSON value holds a lone surrogate in any string or key (walked without recursion).

    Python's parser joins escaped pairs into one character, so any surrogate left is a lone one."""
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (decoding and parsing one ingest batch).

    A batch of 2,000 events decodes into ~15 containers each, all alive until parsed, so collections that start
    meanwhile scan them all and find nothing (decoded JSON has no cycles): measured 3 µs of GC per event, more
    than the decoding. Dropped before the block ends, they never reach a collection at all.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

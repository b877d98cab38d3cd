"""Chunk payload codec: float64 arrays <-> bytes, lossless (bit-exact), with a format tag per blob.

Full chunks are written compact: a column that is an arithmetic progression (the step axis of most series)
is stored as (start, step, n); anything else as the byte-shuffled int64 deltas of its float64 bit patterns,
zlib-compressed (wall times and smooth curves shrink to 1-4 bytes a value; noise stays near 8). A column whose
values are all float32 numbers widened (what `.item()` of a float32 tensor gives: most logged metrics) keeps only
the float32 bit patterns, delta-coded and shuffled the same way: its 29 low mantissa bits are zero anyway, and
dropping them saves zlib another half byte a value. The chunk layer writes every row compact, the partial tail
rows too (chunks.py).
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

RAW_F64 = 1     # little-endian float64, no compression
ARITH = 2       # start: f8, step: f8, n: u4 -> start + step * arange(n), bit-exact by construction
DELTA_Z = 3     # zlib(byte-shuffled int64 deltas of the float64 bit patterns)
DELTA32_Z = 4   # zlib(byte-shuffled int32 deltas of the float32 bit patterns), for float32 values widened
ZLIB_LEVEL = 6  # full chunks: vs 1, ~3% smaller on noisy curves for ~0.1 us a point more, once
FAST_LEVEL = 1  # partial tail rows: rewritten by the next merges, so written cheaply

_ARITH = struct.Struct("<ddI")


def encode(values: np.ndarray, compact: bool = False, level: int = ZLIB_LEVEL) -> bytes:
    v = np.ascontiguousarray(values, dtype="<f8")
    raw = bytes([RAW_F64]) + v.tobytes()
    if not compact or len(v) < 2:
        return raw
    start, step = float(v[0]), float(v[1] - v[0])
    # Compared as bit patterns: -0.0 vs 0.0 and NaN payloads must survive too.
    if np.isfinite(step) and np.array_equal(_progression(start, step, len(v)).view("<i8"), v.view("<i8")):
        return bytes([ARITH]) + _ARITH.pack(start, step, len(v))
    with np.errstate(all="ignore"):  # values float32 cannot hold overflow here; the comparison rejects them
        narrow = v.astype("<f4")
    if np.array_equal(narrow.astype("<f8").view("<i8"), v.view("<i8")):  # bit-exact: NaN payloads and -0.0 too
        packed = _pack_deltas(narrow.view("<i4"), level)
        tag = DELTA32_Z
    else:
        packed = _pack_deltas(v.view("<i8"), level)
        tag = DELTA_Z
    return bytes([tag]) + packed if len(packed) + 1 < len(raw) else raw


def _pack_deltas(bits: np.ndarray, level: int) -> bytes:
    deltas = bits.copy()  # (np.diff with prepend costs 15 us on a 50-value tail piece; this 1 us)
    deltas[1:] -= bits[:-1]  # wraps on overflow; cumsum undoes it exactly
    return zlib.compress(deltas.view(np.uint8).reshape(-1, bits.itemsize).T.tobytes(), level)


def _unpack_deltas(data: memoryview, dtype: str) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    shuffled = np.frombuffer(zlib.decompress(data), dtype=np.uint8)
    deltas = shuffled.reshape(width, -1).T.copy().view(dtype).ravel()
    return np.cumsum(deltas, dtype=dtype)


def _progression(start: float, step: float, n: int) -> np.ndarray:
    return start + step * np.arange(n, dtype="<f8")


def decode(data: bytes) -> np.ndarray:
    if not data:
        return np.empty(0, dtype=np.float64)
    tag = data[0]
    if tag == RAW_F64:
        return np.frombuffer(data, dtype="<f8", offset=1).astype(np.float64, copy=False)
    if tag == ARITH:
        start, step, n = _ARITH.unpack_from(data, 1)
        return _progression(start, step, n)
    if tag == DELTA_Z:
        return _unpack_deltas(memoryview(data)[1:], "<i8").view("<f8")
    if tag == DELTA32_Z:
        return _unpack_deltas(memoryview(data)[1:], "<i4").view("<f4").astype(np.float64)
    raise ValueError(f"unknown chunk encoding tag {tag}")


def decode_many(blobs: list[bytes]) -> list[np.ndarray]:
    """decode() of many blobs at once, bit for bit the same: thousands of short chunks (a multi-metric chart's
    ~50-point lines) cost one numpy pass per encoding and length instead of a few numpy calls per blob."""
    out: list[np.ndarray | None] = [None] * len(blobs)
    groups: dict[tuple[int, int], list[tuple[int, bytes]]] = {}  # (tag, raw length) -> (index, payload)
    for k, data in enumerate(blobs):
        tag = data[0] if data else 0
        if tag == ARITH:
            groups.setdefault((ARITH, 0), []).append((k, data))
        elif tag in (DELTA_Z, DELTA32_Z):
            raw = zlib.decompress(memoryview(data)[1:])
            groups.setdefault((tag, len(raw)), []).append((k, raw))
        else:
            out[k] = decode(data)
    for (tag, size), members in groups.items():
        if tag == ARITH:
            heads = np.array([_ARITH.unpack_from(d, 1) for _, d in members], dtype=np.float64)
            for n in np.unique(heads[:, 2]).astype(np.int64):
                rows = np.flatnonzero(heads[:, 2] == n)
                block = heads[rows, 0:1] + heads[rows, 1:2] * np.arange(n, dtype="<f8")  # as _progression
                for r, values in zip(rows, block, strict=True):
                    out[members[r][0]] = values
            continue
        dtype = "<i8" if tag == DELTA_Z else "<i4"
        width = np.dtype(dtype).itemsize
        shuffled = np.frombuffer(b"".join(raw for _, raw in members), dtype=np.uint8)
        deltas = shuffled.reshape(len(members), width, size // width).transpose(0, 2, 1).copy().view(dtype)
        bits = np.cumsum(deltas.reshape(len(members), -1), axis=1, dtype=dtype)
        values = bits.view("<f8") if tag == DELTA_Z else bits.view("<f4").astype(np.float64)
        for (k, _), row in zip(members, values, strict=True):
            out[k] = row
    return [v if v is not None else np.empty(0, dtype=np.float64) for v in out]

"""Chunk payload codec: float64 arrays <-> bytes, with a format tag so better encodings can follow."""

from __future__ import annotations

import numpy as np

RAW_F64 = 1  # tag byte: little-endian float64, no compression


def encode(values: np.ndarray) -> bytes:
    return bytes([RAW_F64]) + np.ascontiguousarray(values, dtype="<f8").tobytes()


def decode(data: bytes) -> np.ndarray:
    if not data:
        return np.empty(0, dtype=np.float64)
    tag = data[0]
    if tag == RAW_F64:
        return np.frombuffer(data, dtype="<f8", offset=1).astype(np.float64, copy=False)
    raise ValueError(f"unknown chunk encoding tag {tag}")

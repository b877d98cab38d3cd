"""Chunk codec: every encoding round-trips float64 bit patterns exactly, and full chunks get smaller."""

from __future__ import annotations

import numpy as np
import pytest

from paneboard.server.store import codec

RNG = np.random.default_rng(7)
CASES = {
    "steps": np.arange(2048.0),
    "scaled steps": np.arange(2048.0) * 0.1 + 3,
    "noise": RNG.normal(size=2048),
    "specials": np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e308, -1e-308, 5e-324] * 256),
    "walls": 1.7e9 + np.cumsum(RNG.exponential(0.001, 2048)),
    "all nan": np.full(2048, np.nan),
    "negative zeros": -np.zeros(2048),
    "float32 losses": np.exp(-np.arange(2048) / 500).astype(np.float32).astype(np.float64),
    "two": np.array([1.0, 2.0]),
    "one": np.array([4.5]),
    "empty": np.empty(0),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("compact", [False, True])
def test_round_trip_is_bit_exact(name, compact):
    values = CASES[name]
    back = codec.decode(codec.encode(values, compact))
    assert back.dtype == np.float64 and back.shape == values.shape
    assert np.array_equal(back.view("<i8"), values.astype("<f8").view("<i8"))


def test_compact_chunks_are_small_where_the_data_allows():
    size = {k: len(codec.encode(v, compact=True)) / max(len(v), 1) for k, v in CASES.items()}
    assert size["steps"] < 0.02 and size["walls"] < 3 and size["float32 losses"] < 5
    assert size["noise"] <= 8.0 + 1 / 2048  # incompressible data is never stored larger than raw
    assert codec.encode(CASES["steps"])[0] == codec.RAW_F64  # partial (non-compact) rows stay raw


def test_unknown_tag_is_an_error():
    with pytest.raises(ValueError, match="unknown chunk encoding"):
        codec.decode(b"\x09abc")

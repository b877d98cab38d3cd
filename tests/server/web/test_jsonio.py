"""The server's JSON helpers: NaN/Infinity on the way in and out, numpy inline, GC paused while decoding."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest

from paneboard.server import jsonio


def test_loads_accepts_the_nan_literals_some_clients_send_and_dumps_writes_null():
    got = jsonio.loads(b'{"y": [NaN, Infinity, -Infinity, 1.5]}')["y"]
    assert math.isnan(got[0]) and got[1:] == [math.inf, -math.inf, 1.5]
    assert jsonio.dumps({"y": np.array([np.nan, 2.0]), "n": np.int64(3)}) == b'{"y":[null,2.0],"n":3}'
    with pytest.raises(ValueError):
        jsonio.loads(b'{"y": [1,')


def test_gc_paused_restores_collection_even_when_the_block_fails():
    assert gc.isenabled()
    with pytest.raises(ValueError), jsonio.gc_paused():
        assert not gc.isenabled()
        jsonio.loads(b"not json")
    assert gc.isenabled()
    gc.disable()
    try:
        with jsonio.gc_paused():
            pass
        assert not gc.isenabled()  # a caller that had collection off keeps it off
    finally:
        gc.enable()

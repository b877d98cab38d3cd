"""Visdom-style Client calls never raise in a training loop: each bad input is one logged, counted rejection
(client.rejected), and what was accepted before and after it is stored; strict=True raises instead."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest

import paneboard
from paneboard.never_raise import GUARDED, INLINE

# One bad call per guarded method: (method, args, kwargs); each raises under strict=True (checked below).
BAD: list[tuple[str, tuple, dict[str, Any]]] = [
    ("line", (["a"],), {"X": [1], "win": "L", "update": "append"}),
    ("scatter", (np.zeros((3, 4)),), {"win": "S"}),
    ("text", (123,), {"win": "T"}),
    ("image", (None,), {"win": "I"}),
    ("images", (np.zeros((2, 3, 4, 4, 1)),), {}),
    ("close", (), {"win": 5}),
    ("delete_env", (123,), {}),
    ("heatmap", (np.zeros((2, 2, 2)),), {}),
    ("bar", ("abc",), {}),
    ("histogram", ("abc",), {}),
    ("boxplot", (np.zeros((2, 2, 2)),), {}),
    ("surf", ("abc",), {}),
    ("contour", ("abc",), {}),
    ("pie", ("abc",), {}),
    ("sunburst", (5, 6), {}),
    ("mesh", (np.zeros((2, 5)),), {}),
    ("stem", (np.zeros((2, 2, 2)),), {}),
    ("quiver", (np.zeros((2, 2)), np.zeros((3, 3))), {}),
    ("dual_axis_lines", (), {"X": [1, 2], "Y1": "abc", "Y2": [1, 2]}),
    ("svg", (), {}),
    ("properties", (5,), {}),
    ("graph", ([(0, 1)],), {"nodeLabels": ["one"], "win": "G"}),
    ("update_window_opts", (None, "x"), {}),
    ("plotlyplot", (5,), {}),
    ("matplot", (5,), {}),
    ("audio", (), {}),
    ("video", (), {}),
    ("embeddings", ([[1.0]], []), {}),
    ("point_cloud", (np.zeros((3, 2)),), {}),
    ("rewind", ("x",), {}),
    ("set_config", (5,), {}),
    ("add_tags", (5,), {}),
    ("remove_tags", (5,), {}),
    ("note", (5,), {}),
    ("set_best", ("loss", "up"), {}),
]


def test_every_guarded_method_has_a_bad_input_here() -> None:
    assert sorted(name for name, _a, _k in BAD) == sorted(GUARDED + INLINE)


def test_bad_inputs_are_counted_rejections_and_nothing_accepted_is_lost(server, caplog) -> None:
    client = server.client("never")
    client.line(Y=[1.0], X=[0], win="loss", update="append")
    with caplog.at_level(logging.DEBUG, logger="paneboard"):
        for k, (name, args, kw) in enumerate(BAD):
            got = getattr(client, name)(*args, **kw)  # must not raise
            assert client.rejected == k + 1, name
            assert got == kw.get("win"), name  # the window it was given (None: none)
            client.line(Y=[float(k + 2)], X=[k + 1], win="loss", update="append")  # the loop goes on
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "not sent" in r.getMessage()]
    assert len(warnings) == 1 and "line()" in warnings[0].getMessage()  # one warning, the rest at debug level
    assert any("graph(): ValueError: graph: 1 nodeLabels for 2 nodes" in r.getMessage() for r in caplog.records)
    assert client.flush(timeout=30) is False  # flush() reports the rejections ...
    assert client.flush(timeout=30) is True  # ... once
    assert server.series("never", "loss")["1"] == [(float(k), float(k + 1)) for k in range(len(BAD) + 1)]
    client.close_connection(timeout=5)


@pytest.mark.parametrize(("name", "args", "kw"), BAD, ids=lambda v: str(v)[:20])
def test_strict_clients_raise_in_the_caller(name: str, args: tuple, kw: dict) -> None:
    client = paneboard.Client(server="http://127.0.0.1", port=1, env="strict", capture=False, console=False,
                              spool_dir=False, strict=True)
    try:
        with pytest.raises((ValueError, TypeError, AttributeError)):
            getattr(client, name)(*args, **kw)
        assert client.rejected == 0
    finally:
        client.close_connection(timeout=0)

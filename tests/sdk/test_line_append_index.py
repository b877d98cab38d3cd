"""Visdom's line(Y=[v], win=w, update="append") without X: points at the trace's next indices, never an error."""

from __future__ import annotations


def test_append_without_x_counts_per_trace(server) -> None:
    c = server.client("noX")
    try:
        for v in (0.5, 0.25, 0.125):
            c.line(Y=[v], win="loss", update="append")
        c.line(Y=[1.0, 2.0], win="loss", update="append", name="val")
        c.line(Y=[3.0], win="loss", update="append", name="val")
        c.line(Y=[[1.0, 2.0]], win="pair", update="append")  # one row of two traces
        assert c.flush(20) and c.rejected == 0
    finally:
        c.close_connection(5)
    assert server.series("noX", "loss") == {"1": [(0, 0.5), (1, 0.25), (2, 0.125)],
                                             "val": [(0, 1.0), (1, 2.0), (2, 3.0)]}
    assert server.series("noX", "pair") == {"1": [(0, 1.0)], "2": [(0, 2.0)]}

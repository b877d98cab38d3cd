"""Chunk layout of a trace's points: rows of up to CHUNK_POINTS points with summary columns, tail merging."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Connection

from . import codec
from .models import chunk_t

CHUNK_POINTS = 2048        # points per full chunk row
ROWS_PER_INSERT = 256      # chunk rows per INSERT statement
MAX_TAIL_PIECES = 16       # small trailing chunk rows allowed before they are merged into full ones


@dataclass
class TailState:
    """Where a trace's next chunk goes and which trailing rows are still partial (seq, n)."""

    next_seq: int
    partial: list[tuple[int, int]] = field(default_factory=list)


def _finite_or_none(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None


def chunk_row(trace_id: int, seq: int, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, Any]:
    """A chunk row with the summary columns the downsampler reads instead of the blobs."""
    # Partial tail rows are compact too (a short run's tail is a large share of its points), at zlib's fastest
    # level: the next merges rewrite them, and a merge decodes them for less than it costs to write them raw.
    level = codec.ZLIB_LEVEL if len(x) >= CHUNK_POINTS else codec.FAST_LEVEL
    row: dict[str, Any] = {"trace_id": trace_id, "seq": seq, "n": len(x), "x0": None, "x1": None, "ymin": None, "ymax": None,
           "x_ymin": None, "x_ymax": None,
           "xs": codec.encode(x, True, level), "ys": codec.encode(y, True, level), "walls": codec.encode(w, True, level)}
    fx = np.isfinite(x)
    if fx.any():
        row["x0"] = float(x[fx].min())
        row["x1"] = float(x[fx].max())
    ok = np.isfinite(y) & fx
    if ok.any():
        idx = np.flatnonzero(ok)
        lo = idx[np.argmin(y[idx])]
        hi = idx[np.argmax(y[idx])]
        row.update(ymin=float(y[lo]), ymax=float(y[hi]), x_ymin=_finite_or_none(x[lo]), x_ymax=_finite_or_none(x[hi]))
    return row


def load_tail(conn: Connection, trace_id: int) -> TailState:
    """Where the trace's next chunk goes and which trailing rows are partial (read once per writer run)."""
    rows = conn.execute(select(chunk_t.c.seq, chunk_t.c.n).where(chunk_t.c.trace_id == trace_id)
                        .order_by(chunk_t.c.seq.desc()).limit(MAX_TAIL_PIECES + 1)).all()
    state = TailState(next_seq=rows[0].seq + 1 if rows else 0)
    for r in rows:
        if r.n >= CHUNK_POINTS:
            break
        state.partial.insert(0, (r.seq, r.n))
    return state


def write_points(conn: Connection, tail: TailState, trace_id: int, x: np.ndarray, y: np.ndarray, w: np.ndarray,
                 small_rows: list[dict[str, Any]] | None = None) -> None:
    """Write new points after the trace's tail, merging small trailing rows into full chunks.

    With `small_rows`, an append that makes a single row adds it there instead: the caller inserts the rows
    of every trace of a commit in one executemany.
    """
    start = tail.next_seq
    pending = sum(n for _, n in tail.partial)
    if tail.partial and (len(tail.partial) >= MAX_TAIL_PIECES or pending + len(x) >= CHUNK_POINTS):
        # Merge the small trailing rows with the new points into full chunks: each point is
        # rewritten at most a bounded number of times, so appends stay O(points appended).
        seqs = [s for s, _ in tail.partial]
        merged = conn.execute(select(chunk_t.c.xs, chunk_t.c.ys, chunk_t.c.walls)
                              .where(chunk_t.c.trace_id == trace_id, chunk_t.c.seq.in_(seqs))
                              .order_by(chunk_t.c.seq)).all()
        x = np.concatenate([codec.decode(r.xs) for r in merged] + [x])
        y = np.concatenate([codec.decode(r.ys) for r in merged] + [y])
        w = np.concatenate([codec.decode(r.walls) for r in merged] + [w])
        conn.execute(delete(chunk_t).where(chunk_t.c.trace_id == trace_id, chunk_t.c.seq.in_(seqs)))
        start = seqs[0]
        tail.partial = []
    seq = start
    last: dict[str, Any] = {}
    for lo in range(0, len(x), CHUNK_POINTS * ROWS_PER_INSERT):
        # A few hundred rows per INSERT: a huge append never holds all of its encoded rows at once.
        rows: list[dict[str, Any]] = []
        for i in range(lo, min(len(x), lo + CHUNK_POINTS * ROWS_PER_INSERT), CHUNK_POINTS):
            rows.append(chunk_row(trace_id, seq, x[i:i + CHUNK_POINTS], y[i:i + CHUNK_POINTS],
                                  w[i:i + CHUNK_POINTS]))
            seq += 1
        if small_rows is not None and len(rows) == 1:
            small_rows.append(rows[0])
        else:
            conn.execute(insert(chunk_t), rows)
        last = rows[-1]
    if last["n"] < CHUNK_POINTS:
        tail.partial.append((last["seq"], last["n"]))
    tail.next_seq = seq

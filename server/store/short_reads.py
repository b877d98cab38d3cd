"""Many short traces read whole (a multi-metric chart: thousands of ~50-point lines, one partial chunk each): every
chunk row in a few queries, every blob decoded in one batched pass, each line's points joined once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.engine import Connection

from . import codec
from .chunks import CHUNK_POINTS
from .dialect import IN_LIST_MAX
from .downsample import ChunkMeta
from .models import chunk_t

# Traces this short are read whole, every chunk row with its blobs up front: a line of a sweep or of a multi-metric
# chart. Longer ones go through their chunk summaries (and digests), decoding only what the budget needs.
SHORT_POINTS = 2 * CHUNK_POINTS


@dataclass(frozen=True, slots=True)
class ShortLine:
    """One trace's chunk rows (summary columns, seq order), their decoded points, and all its points joined."""

    rows: list[tuple]
    chunks: list[tuple[np.ndarray, np.ndarray]]
    x: np.ndarray
    y: np.ndarray

    def metas(self) -> list[ChunkMeta]:
        return [ChunkMeta(*r) for r in self.rows]

    def by_seq(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        return {r[0]: chunk for r, chunk in zip(self.rows, self.chunks, strict=True)}


def read_whole(conn: Connection, trace_ids: list[int]) -> dict[int, ShortLine]:
    """Every listed trace's chunk rows and points (a trace without rows gets empty arrays)."""
    c = chunk_t.c
    rows: dict[int, list[tuple]] = {i: [] for i in trace_ids}
    owners: list[int] = []  # the trace of each (xs, ys) pair, in the order the queries gave them
    blobs: list[bytes] = []
    for k in range(0, len(trace_ids), IN_LIST_MAX):
        q = (select(c.trace_id, c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax, c.xs, c.ys)
             .where(c.trace_id.in_(trace_ids[k:k + IN_LIST_MAX])).order_by(c.trace_id, c.seq))
        for r in conn.execute(q).all():
            rows[r[0]].append(r[1:9])
            owners.append(r[0])
            blobs += (r[9], r[10])
    decoded = codec.decode_many(blobs)
    chunks: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {i: [] for i in trace_ids}
    for j, trace_id in enumerate(owners):  # the queries sort by trace id, not in the caller's order
        chunks[trace_id].append((decoded[2 * j], decoded[2 * j + 1]))
    out: dict[int, ShortLine] = {}
    empty = np.empty(0, dtype=np.float64)
    for trace_id, metas in rows.items():
        x, y = joined(chunks[trace_id]) if chunks[trace_id] else (empty, empty)
        out[trace_id] = ShortLine(metas, chunks[trace_id], x, y)
    return out


def joined(chunks: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """A trace's points from its decoded chunks (at least one), in chunk order."""
    if len(chunks) == 1:
        return chunks[0]
    return np.concatenate([x for x, _ in chunks]), np.concatenate([y for _, y in chunks])

"""Chunk digests: the summary columns of every DIGEST_CHUNKS full chunks packed in one small row, for long reads.

A full-range read of a long trace needs every chunk's summary (n, x bounds, min and max with their x) but
hardly any of its points. Read from the chunk rows, each summary costs a ~7 KB row (about one SQLite page);
a digest row holds 64 of them in 3.5 KB. Digests are written once, as the 64th chunk of a page seals: full
chunks are never rewritten (the tail merge only rewrites partial rows; rewind and clear delete the trace's
chunks and digests together), so a digest never goes stale.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection

from .chunks import CHUNK_POINTS
from .dialect import IN_LIST_MAX
from .models import chunk_t, digest_t

DIGEST_CHUNKS = 64  # chunks per digest row: 64 x 7 float64 = 3,584 bytes, one SQLite page
FIELDS = ("n", "x0", "x1", "ymin", "ymax", "x_ymin", "x_ymax")  # the chunk summary columns, in this order
SEQ_PAGE_ROWS = 4096  # chunk summaries per SELECT while sealing a huge append


def pack(rows: list[Any]) -> bytes:
    """Chunk summary rows (with the FIELDS attributes) as float64 columns; NULL becomes NaN."""
    table = np.array([[np.nan if getattr(r, f) is None else getattr(r, f) for f in FIELDS] for r in rows],
                     dtype="<f8")
    return table.tobytes()


def unpack(data: bytes) -> np.ndarray:
    """A digest's (DIGEST_CHUNKS, len(FIELDS)) float64 table."""
    return np.frombuffer(data, dtype="<f8").reshape(-1, len(FIELDS))


def seal(conn: Connection, trace_id: int, full_before: int, full_after: int) -> None:
    """Write the digests of the pages that the chunks [full_before, full_after) completed (all full, stored)."""
    first, end = full_before // DIGEST_CHUNKS, full_after // DIGEST_CHUNKS
    c = chunk_t.c
    for lo_page in range(first, end, SEQ_PAGE_ROWS // DIGEST_CHUNKS):
        hi_page = min(end, lo_page + SEQ_PAGE_ROWS // DIGEST_CHUNKS)
        rows = conn.execute(select(c.seq, *(getattr(c, f) for f in FIELDS))
                            .where(c.trace_id == trace_id, c.seq >= lo_page * DIGEST_CHUNKS,
                                   c.seq < hi_page * DIGEST_CHUNKS).order_by(c.seq)).all()
        by_seq = {r.seq: r for r in rows}
        out: list[dict[str, Any]] = []
        for page in range(lo_page, hi_page):
            members = [by_seq.get(s) for s in range(page * DIGEST_CHUNKS, (page + 1) * DIGEST_CHUNKS)]
            # A page with a missing or partial chunk gets no digest: reads then take those chunks' own rows.
            if all(m is not None and m.n >= CHUNK_POINTS for m in members):
                out.append({"trace_id": trace_id, "page": page, "data": pack(members)})
        if out:
            conn.execute(insert(digest_t), out)


def rebuild(conn: Connection, trace_id: int) -> None:
    """Digests of a trace written from its chunk rows (fork of an old database, migration backfill)."""
    conn.execute(delete(digest_t).where(digest_t.c.trace_id == trace_id))
    c = chunk_t.c
    partial = conn.execute(select(func.min(c.seq)).where(c.trace_id == trace_id, c.n < CHUNK_POINTS)).scalar()
    full = partial if partial is not None else (conn.execute(
        select(func.max(c.seq)).where(c.trace_id == trace_id)).scalar() or -1) + 1
    seal(conn, trace_id, 0, full)


def load(conn: Connection, trace_id: int) -> np.ndarray:
    """The summaries of the trace's first chunks, seq 0 up to the first page without a digest, as one table."""
    rows = conn.execute(select(digest_t.c.page, digest_t.c.data).where(digest_t.c.trace_id == trace_id)
                        .order_by(digest_t.c.page)).all()
    tables = []
    for expected, r in enumerate(rows):
        if r.page != expected:  # only a contiguous prefix: the chunk rows after it are read as they are
            break
        tables.append(unpack(r.data))
    return np.concatenate(tables) if tables else np.empty((0, len(FIELDS)))


def with_digests(conn: Connection, trace_ids: list[int]) -> set[int]:
    """Which of these traces have a digest (are long enough for summaries() to be worth reading)."""
    d = digest_t.c
    found: set[int] = set()
    for k in range(0, len(trace_ids), IN_LIST_MAX):
        found.update(conn.execute(select(d.trace_id).where(d.trace_id.in_(trace_ids[k:k + IN_LIST_MAX]),
                                                           d.page == 0)).scalars())
    return found


def summaries(conn: Connection, trace_id: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Every chunk's summary (FIELDS columns, NaN for NULL) and seq, in seq order: the digests' chunks from
    the digest rows, the rest from their own rows; None when the trace has no digest (read its chunk rows)."""
    table = load(conn, trace_id)
    if not len(table):
        return None
    c = chunk_t.c
    rest = conn.execute(select(c.seq, *(getattr(c, f) for f in FIELDS))
                        .where(c.trace_id == trace_id, c.seq >= len(table)).order_by(c.seq)).all()
    rest_table = np.array([[np.nan if v is None else v for v in r[1:]] for r in rest], dtype=np.float64)
    seqs = np.concatenate([np.arange(len(table)), np.array([r.seq for r in rest], dtype=np.int64)])
    return np.concatenate([table, rest_table.reshape(-1, len(FIELDS))]), seqs


def forget(conn: Connection, trace_id: int) -> None:
    """Delete a trace's digests (its chunks are deleted or rewritten)."""
    conn.execute(delete(digest_t).where(digest_t.c.trace_id == trace_id))

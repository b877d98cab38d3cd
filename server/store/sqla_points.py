"""Points a writer transaction appends: buffered per trace, then written at flush as chunks, counts and summaries."""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import delete, update
from sqlalchemy.engine import Connection

from . import digests, sqla_runs
from . import hot_statements as hot
from .chunks import TailState, load_tail, write_points
from .models import chunk_t, trace_t
from .summary import Summary
from .summary import update as update_summary


class PointBuffer:
    """One transaction's appends, so that many small ones to a trace cost one chunk write and one UPDATE.

    `tails` and `summaries` are the writer's caches (trace id -> state), which outlive the transaction.
    """

    def __init__(self, conn: Connection, tails: dict[int, TailState], summaries: dict[int, Summary]) -> None:
        self.conn = conn
        self.tails = tails
        self.summaries = summaries
        self.rewritten: set[int] = set()  # traces whose full chunks may be rewritten: readers' decoded copies go
        self._parts: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self._counts: dict[int, int] = {}

    def append(self, trace_id: int, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> None:
        self._parts.setdefault(trace_id, []).append((x, y, wall))
        self._counts[trace_id] = self._counts.get(trace_id, 0) + len(x)

    def forget(self, trace_id: int) -> None:
        """Drop what is buffered and cached for a trace that is deleted or about to be rewritten."""
        self.rewritten.add(trace_id)
        self._parts.pop(trace_id, None)
        self._counts.pop(trace_id, None)
        self.tails.pop(trace_id, None)
        self.summaries.pop(trace_id, None)

    def clear_trace(self, trace_id: int) -> None:
        """Delete a trace's stored points; it starts again from an empty tail and summary."""
        self.forget(trace_id)
        self.conn.execute(delete(chunk_t).where(chunk_t.c.trace_id == trace_id))
        digests.forget(self.conn, trace_id)
        self.conn.execute(update(trace_t).where(trace_t.c.id == trace_id).values(
            npoints=0, **sqla_runs.summary_values(Summary())))
        self.tails[trace_id] = TailState(next_seq=0)
        self.summaries[trace_id] = Summary()

    def flush(self) -> None:
        """Write every buffered trace: one executemany for the chunks, one for the counts and summaries."""
        chunk_rows: list[dict[str, Any]] = []
        sealed: list[tuple[int, int, int]] = []  # (trace, full chunks before, after): for the digests
        for trace_id, parts in self._parts.items():
            if len(parts) == 1:  # one big append: no copy (20M points would cost 480 MB more)
                x, y, w = parts[0]
            else:
                x = np.concatenate([p[0] for p in parts])
                y = np.concatenate([p[1] for p in parts])
                w = np.concatenate([p[2] for p in parts])
            tail = self._tail(trace_id)
            full_before = tail.next_seq - len(tail.partial)
            write_points(self.conn, tail, trace_id, x, y, w, chunk_rows)
            full_after = tail.next_seq - len(tail.partial)
            if full_after // digests.DIGEST_CHUNKS > full_before // digests.DIGEST_CHUNKS:
                sealed.append((trace_id, full_before, full_after))
            self.summaries[trace_id] = update_summary(self._summary(trace_id), x, y)
        if chunk_rows:
            hot.run(self.conn, hot.INSERT_CHUNK, chunk_rows)
        for trace_id, full_before, full_after in sealed:  # after the INSERT: a digest reads its chunks' rows
            digests.seal(self.conn, trace_id, full_before, full_after)
        bumps, summarized = [], []
        for trace_id, n in self._counts.items():
            summary = self.summaries.get(trace_id)
            if summary is None:
                bumps.append({"tid": trace_id, "k": n})
            else:
                values = sqla_runs.summary_values(summary)
                summarized.append({"tid": trace_id, "k": n, **{"v_" + c: values[c] for c in sqla_runs.SUMMARY_COLUMNS}})
        if bumps:
            hot.run(self.conn, hot.BUMP_NPOINTS, bumps)
        if summarized:
            hot.run(self.conn, hot.BUMP_NPOINTS_SUMMARY, summarized)
        self._parts.clear()
        self._counts.clear()

    def _summary(self, trace_id: int) -> Summary:
        if trace_id not in self.summaries:
            self.summaries[trace_id] = sqla_runs.load_summary(self.conn, trace_id)
        return self.summaries[trace_id]

    def _tail(self, trace_id: int) -> TailState:
        if trace_id not in self.tails:
            self.tails[trace_id] = load_tail(self.conn, trace_id)
        return self.tails[trace_id]

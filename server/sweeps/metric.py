"""A trial's metric as its run logged it: the points of the run's line pane named after the metric."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..store import Store
from ..store.chunks import CHUNK_POINTS
from ..store.sweep_records import MetricTrace


class ChunkReader(Protocol):
    def metric_chunks(self, trace_id: int, from_seq: int) -> list[tuple[int, np.ndarray]]: ...


@dataclass(frozen=True)
class MetricCursor:
    """How far a report read a trace: the chunk rows before `seq` are full (the writer never rewrites those) and
    hold `before` values; `mark` is the trace's at that read (an equal mark: nothing new to read)."""

    mark: tuple
    seq: int
    before: int

    @property
    def trace_id(self) -> int:
        return int(self.mark[0])


def metric_trace(store: Store, env: str, name: str) -> MetricTrace | None:
    """The metric's trace and its mark (one query): a report compares marks before reading any point."""
    return store.metric_trace(env, name, name)


def read_values(store: ChunkReader, found: MetricTrace, cursor: MetricCursor | None = None
                ) -> tuple[int, list[float], MetricCursor]:
    """(first, values, cursor): the metric's values from index `first` on, in the order they were logged, read
    from the cursor's chunk row on in one query; the cursor for the next read."""
    if cursor is not None and cursor.trace_id != found.trace.id:
        cursor = None  # another trace (the pane was replaced): its rows are not the ones the cursor counted
    seq, before = (cursor.seq, cursor.before) if cursor is not None else (0, 0)
    rows = store.metric_chunks(found.trace.id, seq)
    values = [float(v) for _, ys in rows for v in ys]
    if cursor is not None and before + len(values) < found.trace.total:
        return read_values(store, found)  # the line was replaced since: read it whole
    for row_seq, ys in rows:
        if len(ys) < CHUNK_POINTS:
            break
        seq, before = row_seq + 1, before + len(ys)
    first = cursor.before if cursor is not None else 0
    return first, values, MetricCursor(found.mark, seq, before)


def metric_values(store: Store, env: str, name: str) -> list[float]:
    """Every value of the metric ([] before the first one)."""
    found = metric_trace(store, env, name)
    return [] if found is None else read_values(store, found)[1]

"""Min/max reads of long traces from chunk summary tables (digests), in numpy: no row per chunk.

Gives exactly what downsample.minmax gives for the same chunks (the same candidates in the same order,
the same buckets, first minimum and last maximum per bucket, the same edge points); only the summaries
come from one float table instead of a ChunkMeta object per chunk, so 49,000 chunks cost a few array
operations rather than a Python loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .digests import FIELDS
from .downsample import Candidates, Loader, select_extremes

SeqPrefetch = Callable[[Sequence[int]], None]  # warms the loader for these chunk seqs in one query

N, X0, X1, YMIN, YMAX, X_YMIN, X_YMAX = range(len(FIELDS))


def in_range(table: np.ndarray, seqs: np.ndarray, x0: float | None, x1: float | None
             ) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the chunks meeting [x0, x1] (None: unbounded), as read_series's chunk query selects them;
    chunks with no finite x (NaN bounds) meet no range, and take no part in a full-range read either."""
    with np.errstate(invalid="ignore"):
        keep = ~np.isnan(table[:, X0])
        if x0 is not None:
            keep &= table[:, X1] >= x0
        if x1 is not None:
            keep &= table[:, X0] <= x1
    return table[keep], seqs[keep]


def wholly_inside(table: np.ndarray, x0: float | None, x1: float | None) -> np.ndarray:
    """Which chunks lie wholly inside [x0, x1]: the others hold points on both sides of an edge."""
    lo = -np.inf if x0 is None else x0
    hi = np.inf if x1 is None else x1
    with np.errstate(invalid="ignore"):
        return (table[:, X0] >= lo) & (table[:, X1] <= hi)


def count(table: np.ndarray, seqs: np.ndarray, load: Loader, x0: float | None, x1: float | None) -> int:
    """Exact number of points in [x0, x1] of these chunks: those wholly inside count whole, the others are
    decoded (as SqlStore._count_in_range)."""
    lo = -np.inf if x0 is None else x0
    hi = np.inf if x1 is None else x1
    inside = wholly_inside(table, x0, x1)
    total = int(table[inside, N].sum())
    for s in seqs[~inside]:
        x, _ = load(int(s))
        total += int(np.count_nonzero((x >= lo) & (x <= hi)))
    return total


def minmax(table: np.ndarray, seqs: np.ndarray, load: Loader, budget: int, prefetch: SeqPrefetch,
           candidates: Candidates | None = None, x0: float | None = None, x1: float | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """At most ~budget points in [x0, x1] (None: the trace's own bounds) of the trace whose chunk summaries are
    `table` (FIELDS columns, NaN for NULL; row i is chunk seqs[i], in seq order): downsample.minmax over the
    chunks meeting the range, as read_series gives it."""
    table, seqs = in_range(table, seqs, x0, x1)
    if not len(table):
        return np.empty(0), np.empty(0)
    lo = float(table[:, X0].min()) if x0 is None else x0
    hi = float(table[:, X1].max()) if x1 is None else x1
    nb = max(1, (budget - 2) // 2)
    width = (hi - lo) / nb if hi > lo else 1.0
    left, right = table[:, X0], table[:, X1]
    with np.errstate(invalid="ignore"):
        summarized = (~np.isnan(right) & ~np.isnan(table[:, YMIN]) & (left >= lo) & (right <= hi)
                      & ((right - left) <= width))
    decoded = np.flatnonzero(~summarized)
    prefetch([int(s) for s in seqs[decoded]] + [int(seqs[0]), int(seqs[-1])])
    pair_x, pair_y = _pairs(table)
    cand_x: list[np.ndarray] = []
    cand_y: list[np.ndarray] = []
    points = load if candidates is None else candidates(lo, hi, width, nb)
    prev = 0
    for i in decoded:  # few in a long overview: the chunks wider than a bucket
        cand_x.append(pair_x[prev:i].ravel())
        cand_y.append(pair_y[prev:i].ravel())
        x, y = points(int(seqs[i]))
        cand_x.append(x)
        cand_y.append(y)
        prev = i + 1
    cand_x.append(pair_x[prev:].ravel())
    cand_y.append(pair_y[prev:].ravel())
    X, Y = np.concatenate(cand_x), np.concatenate(cand_y)
    keep = (X >= lo) & (X <= hi) & np.isfinite(Y) & np.isfinite(X)
    X, Y = X[keep], Y[keep]
    first, last = _edge_points(seqs, load, lo, hi)
    return select_extremes(X, Y, lo, width, nb, first, last)


def _pairs(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's (x_ymin, ymin) and (x_ymax, ymax) as two candidates in tuple order, as sorted() puts them."""
    ax, ay, bx, by = table[:, X_YMIN], table[:, YMIN], table[:, X_YMAX], table[:, YMAX]
    swap = (bx < ax) | ((bx == ax) & (by < ay))  # sorted() swaps only when the second tuple is less
    first_x, second_x = np.where(swap, bx, ax), np.where(swap, ax, bx)
    first_y, second_y = np.where(swap, by, ay), np.where(swap, ay, by)
    return np.stack([first_x, second_x], axis=1), np.stack([first_y, second_y], axis=1)


def _edge_points(seqs: np.ndarray, load: Loader, lo: float, hi: float
                 ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """First and last stored point inside [lo, hi], as downsample._edge_points finds them."""
    first: tuple[float, float] | None = None
    last: tuple[float, float] | None = None
    for s in seqs:
        x, y = load(int(s))
        idx = np.flatnonzero((x >= lo) & (x <= hi))
        if len(idx):
            first = (float(x[idx[0]]), float(y[idx[0]]))
            break
    for s in seqs[::-1]:
        x, y = load(int(s))
        idx = np.flatnonzero((x >= lo) & (x <= hi))
        if len(idx):
            last = (float(x[idx[-1]]), float(y[idx[-1]]))
            break
    return first, last

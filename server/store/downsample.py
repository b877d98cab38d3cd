"""Budgeted reads of a chunked series: min/max per x bucket (lines) or strided sampling (scatter)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Loader = Callable[[int], tuple[np.ndarray, np.ndarray]]  # chunk seq -> (x, y)
Prefetch = Callable[[Sequence["ChunkMeta"]], None]  # warms the loader for these chunks in one query
# (lo, hi, width, buckets) -> per chunk seq, the points that may be a bucket's first minimum or last maximum:
# a subset of the chunk's points in storage order holding all of those (chunk_cache.py), or simply all of them.
Candidates = Callable[[float, float, float, int], Loader]


@dataclass(frozen=True)
class ChunkMeta:
    seq: int
    n: int
    x0: float | None
    x1: float | None
    ymin: float | None
    ymax: float | None
    x_ymin: float | None
    x_ymax: float | None


def _in_range(x: np.ndarray, lo: float | None, hi: float | None) -> np.ndarray:
    mask = np.ones(x.shape, dtype=bool)
    if lo is not None:
        mask &= x >= lo
    if hi is not None:
        mask &= x <= hi
    return mask


def read_all(metas: Sequence[ChunkMeta], load: Loader, lo: float | None, hi: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Every point in [lo, hi], in storage order."""
    xs, ys = [], []
    for m in metas:
        x, y = load(m.seq)
        if lo is not None or hi is not None:
            keep = _in_range(x, lo, hi)
            x, y = x[keep], y[keep]
        xs.append(x)
        ys.append(y)
    if not xs:
        return np.empty(0), np.empty(0)
    return np.concatenate(xs), np.concatenate(ys)


def stride(metas: Sequence[ChunkMeta], load: Loader, budget: int, lo: float | None, hi: float | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """Every k-th point: the right reduction for scatter clouds, where x order means nothing."""
    x, y = read_all(metas, load, lo, hi)
    if len(x) <= budget:
        return x, y
    step = int(np.ceil(len(x) / budget))
    return x[::step], y[::step]


def minmax(metas: Sequence[ChunkMeta], load: Loader, budget: int, lo: float, hi: float,
           prefetch: Prefetch | None = None, candidates: Candidates | None = None) -> tuple[np.ndarray, np.ndarray]:
    """At most ~budget points: per x bucket its min and max point, plus the first and last point.

    A chunk no wider than a bucket contributes its stored (x_ymin, ymin) and (x_ymax, ymax) without
    being decoded, so a 10M-point overview reads only chunk summaries, yet no extreme (a spike) is lost.
    Candidates are gathered in chunk order, so a line's usual non-decreasing x takes the linear fast path.
    """
    nb = max(1, (budget - 2) // 2)
    width = (hi - lo) / nb if hi > lo else 1.0
    summarized = [_summarizable(m, lo, hi, width) for m in metas]
    if prefetch is not None:  # one query for every chunk this read decodes, edge chunks included
        edges = [metas[0], metas[-1]] if metas else []  # _edge_points reads these
        prefetch([m for m, s in zip(metas, summarized, strict=True) if not s] + edges)
    cand_x: list[np.ndarray] = []
    cand_y: list[np.ndarray] = []
    points = load if candidates is None else candidates(lo, hi, width, nb)
    for m, summary in zip(metas, summarized, strict=True):
        if summary:
            pair = sorted([(m.x_ymin, m.ymin), (m.x_ymax, m.ymax)])  # in x order: sorted input stays sorted
            cand_x.append(np.array([pair[0][0], pair[1][0]], dtype=np.float64))
            cand_y.append(np.array([pair[0][1], pair[1][1]], dtype=np.float64))
        else:
            x, y = points(m.seq)
            cand_x.append(x)
            cand_y.append(y)
    X = np.concatenate(cand_x) if cand_x else np.empty(0)
    Y = np.concatenate(cand_y) if cand_y else np.empty(0)
    keep = _in_range(X, lo, hi) & np.isfinite(Y) & np.isfinite(X)  # one pass, not one per chunk
    X, Y = X[keep], Y[keep]
    first, last = _edge_points(metas, load, lo, hi)
    return select_extremes(X, Y, lo, width, nb, first, last)


def _summarizable(m: ChunkMeta, lo: float, hi: float, width: float) -> bool:
    return (m.x0 is not None and m.x1 is not None and m.ymin is not None
            and m.x0 >= lo and m.x1 <= hi and (m.x1 - m.x0) <= width)


def bucket_extremes(b: np.ndarray, y: np.ndarray) -> np.ndarray:
    """General path, any x order: sorted indices of each bucket's first minimum and last maximum of y."""
    order = np.lexsort((y, b))  # by bucket, then by y; stable, so ties keep index order
    bs = b[order]
    starts = np.flatnonzero(np.r_[True, bs[1:] != bs[:-1]])
    ends = np.r_[starts[1:], len(bs)] - 1
    return np.unique(np.concatenate([order[starts], order[ends]]))


def bucket_extremes_sorted(b: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Same result as bucket_extremes when b is non-decreasing (sorted x), in O(n) without a sort."""
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    seg = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(b)]))
    at_min = np.flatnonzero(y == np.minimum.reduceat(y, starts)[seg])
    at_max = np.flatnonzero(y == np.maximum.reduceat(y, starts)[seg])
    first_min = at_min[np.r_[True, seg[at_min[1:]] != seg[at_min[:-1]]]]
    last_max = at_max[np.r_[seg[at_max[1:]] != seg[at_max[:-1]], True]]
    # Both are indices into b: a mask merges them in O(n); union1d's unique() took seconds on a 1,000-run read.
    keep = np.zeros(len(b), dtype=bool)
    keep[first_min] = True
    keep[last_max] = True
    return np.flatnonzero(keep)


def _edge_points(metas: Sequence[ChunkMeta], load: Loader, lo: float, hi: float
                 ) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
    """First and last stored point inside [lo, hi] (kept exactly, whatever the buckets say)."""
    first: tuple[float, float] | None = None
    last: tuple[float, float] | None = None
    for m in metas:
        x, y = load(m.seq)
        idx = np.flatnonzero(_in_range(x, lo, hi))
        if len(idx):
            first = (float(x[idx[0]]), float(y[idx[0]]))
            break
    for m in reversed(metas):
        x, y = load(m.seq)
        idx = np.flatnonzero(_in_range(x, lo, hi))
        if len(idx):
            last = (float(x[idx[-1]]), float(y[idx[-1]]))
            break
    return first, last


def minmax_many(parts: Sequence[tuple[np.ndarray, np.ndarray]], budget: int
                ) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """minmax() of many whole series at once, in one numpy pass (a sweep's chart: a thousand series, each a
    few thousand points): per series its own buckets over its own x span, each bucket's first minimum and last
    maximum, plus its first and last point. None unless every series' x is finite and non-decreasing (then
    the caller reads them one by one)."""
    nb = max(1, (budget - 2) // 2)
    sizes = np.array([len(x) for x, _ in parts], dtype=np.int64)
    if not len(parts) or not sizes.all():
        return None
    X = np.concatenate([x for x, _ in parts])
    Y = np.concatenate([y for _, y in parts])
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    ends = starts + sizes - 1
    if not np.all(np.isfinite(X)):
        return None
    seg = np.repeat(np.arange(len(parts)), sizes)
    step_ok = np.ones(len(X), dtype=bool)
    step_ok[1:] = X[1:] >= X[:-1]
    step_ok[starts] = True  # a new series may start lower than the last one ended
    if not step_ok.all():
        return None
    lo, hi = X[starts], X[ends]
    width = np.where(hi > lo, (hi - lo) / nb, 1.0)
    b = np.clip(((X - lo[seg]) / width[seg]).astype(np.int64), 0, nb - 1) + seg * nb  # non-decreasing overall
    finite = np.isfinite(Y)
    idx = np.flatnonzero(finite)
    picked = idx[bucket_extremes_sorted(b[idx], Y[idx])] if len(idx) else idx
    keep = np.zeros(len(X), dtype=bool)
    keep[picked] = True
    keep[starts] = True  # first and last stored points, kept exactly (as minmax's edge points)
    keep[ends] = True
    out_idx = np.flatnonzero(keep)
    begins: list[int] = np.asarray(np.searchsorted(out_idx, starts)).tolist()  # each series' first kept point
    cut = [*begins, len(out_idx)]
    # One gather, then each series a slice of it (np.split and a gather per series cost 4 us each a series).
    xs, ys = X[out_idx], Y[out_idx]
    return [(xs[a:b], ys[a:b]) for a, b in zip(cut[:-1], cut[1:], strict=True)]


def select_extremes(X: np.ndarray, Y: np.ndarray, lo: float, width: float, nb: int,
                    first: tuple[float, float] | None, last: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """The budget's answer from candidate points (in range, finite): each bucket's first minimum and last maximum
    in x order, and the range's first and last points where they are not already its ends."""
    if len(X):
        b = np.clip(((X - lo) / width).astype(np.int64), 0, nb - 1)
        if len(X) < 2 or bool(np.all(X[1:] >= X[:-1])):
            picked = bucket_extremes_sorted(b, Y)
        else:
            picked = bucket_extremes(b, Y)
            picked = picked[np.argsort(X[picked], kind="stable")]
        X, Y = X[picked], Y[picked]
    xs, ys = X.tolist(), Y.tolist()
    if first and (not xs or (xs[0], ys[0]) != first):
        xs.insert(0, first[0])
        ys.insert(0, first[1])
    if last and (xs[-1], ys[-1]) != last:
        xs.append(last[0])
        ys.append(last[1])
    return np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)

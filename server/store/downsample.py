"""Budgeted reads of a chunked series: min/max per x bucket (lines) or strided sampling (scatter)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Loader = Callable[[int], tuple[np.ndarray, np.ndarray]]  # chunk seq -> (x, y)


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


def read_all(metas: Sequence[ChunkMeta], load: Loader, lo: float | None, hi: float | None):
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


def stride(metas: Sequence[ChunkMeta], load: Loader, budget: int, lo: float | None, hi: float | None):
    """Every k-th point: the right reduction for scatter clouds, where x order means nothing."""
    x, y = read_all(metas, load, lo, hi)
    if len(x) <= budget:
        return x, y
    step = int(np.ceil(len(x) / budget))
    return x[::step], y[::step]


def minmax(metas: Sequence[ChunkMeta], load: Loader, budget: int, lo: float, hi: float):
    """At most ~budget points: per x bucket its min and max point, plus the first and last point.

    A chunk no wider than a bucket contributes its stored (x_ymin, ymin) and (x_ymax, ymax) without
    being decoded, so a 10M-point overview reads only chunk summaries, yet no extreme (a spike) is lost.
    """
    nb = max(1, (budget - 2) // 2)
    width = (hi - lo) / nb if hi > lo else 1.0
    cand_x: list[np.ndarray] = []
    cand_y: list[np.ndarray] = []
    sx: list[float] = []
    sy: list[float] = []
    for m in metas:
        summarizable = (
            m.x0 is not None and m.x1 is not None and m.ymin is not None
            and m.x0 >= lo and m.x1 <= hi and (m.x1 - m.x0) <= width
        )
        if summarizable:
            sx += [m.x_ymin, m.x_ymax]
            sy += [m.ymin, m.ymax]
            continue
        x, y = load(m.seq)
        keep = _in_range(x, lo, hi) & np.isfinite(y) & np.isfinite(x)
        cand_x.append(x[keep])
        cand_y.append(y[keep])
    cand_x.append(np.asarray(sx, dtype=np.float64))
    cand_y.append(np.asarray(sy, dtype=np.float64))
    X = np.concatenate(cand_x)
    Y = np.concatenate(cand_y)
    first, last = _edge_points(metas, load, lo, hi)
    if len(X):
        b = np.clip(((X - lo) / width).astype(np.int64), 0, nb - 1)
        order = np.lexsort((Y, b))  # by bucket, then by y within the bucket
        bs = b[order]
        starts = np.flatnonzero(np.r_[True, bs[1:] != bs[:-1]])
        ends = np.r_[starts[1:], len(bs)] - 1
        picked = np.unique(np.concatenate([order[starts], order[ends]]))
        X, Y = X[picked], Y[picked]
        by_x = np.argsort(X, kind="stable")
        X, Y = X[by_x], Y[by_x]
    xs, ys = X.tolist(), Y.tolist()
    if first and (not xs or (xs[0], ys[0]) != first):
        xs.insert(0, first[0])
        ys.insert(0, first[1])
    if last and (xs[-1], ys[-1]) != last:
        xs.append(last[0])
        ys.append(last[1])
    return np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)


def _edge_points(metas, load: Loader, lo: float, hi: float):
    """First and last stored point inside [lo, hi] (kept exactly, whatever the buckets say)."""
    first = last = None
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

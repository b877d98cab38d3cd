"""Series summaries kept at ingest: count, last, min and max (each with its x), updated from new points only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class Summary:
    """One series' summary; the x fields say where (at which step) the value was seen."""

    count: int = 0
    last_x: float | None = None
    last_y: float | None = None
    min_x: float | None = None
    min_y: float | None = None
    max_x: float | None = None
    max_y: float | None = None


def update(s: Summary, x: np.ndarray, y: np.ndarray) -> Summary:
    """The summary after appending (x, y): O(len(x)), whatever the series held before. NaN/inf y are gaps."""
    ok = np.isfinite(y)
    n = int(np.count_nonzero(ok))
    if n == 0:
        return s
    idx = np.flatnonzero(ok) if n < len(y) else None
    ys = y if idx is None else y[idx]
    xs = x if idx is None else x[idx]
    lo, hi = int(np.argmin(ys)), int(np.argmax(ys))  # the first of equal values: the earliest step reached it
    out = Summary(count=s.count + n, last_x=_num(xs[-1]), last_y=float(ys[-1]),
                  min_x=s.min_x, min_y=s.min_y, max_x=s.max_x, max_y=s.max_y)
    if s.min_y is None or ys[lo] < s.min_y:
        out.min_x, out.min_y = _num(xs[lo]), float(ys[lo])
    if s.max_y is None or ys[hi] > s.max_y:
        out.max_x, out.max_y = _num(xs[hi]), float(ys[hi])
    return out


def _num(v: float) -> float | None:
    f = float(v)
    return f if np.isfinite(f) else None

"""Histogram panes (TensorBoard's histograms and distributions): one HistogramProto-like record per step."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from paneboard.protocol import MAX_BUCKETS

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StepRow, Store, StoreTx
from . import stepped
from .contract import ReadOptions, StoredStep
from .stepped import merge, mergeable  # noqa: F401  (PaneKind.merge and .mergeable)

KINDS = ("histogram",)
UPDATE_MODES = stepped.UPDATE_MODES
READ_OPTIONS = ("steps",)

# TensorBoard's distribution basis points (in 1/10000 of the count): min, -1.5σ, -1σ, -0.5σ, median, ... max.
BASIS_POINTS = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)
_STATS = ("min", "max", "num", "sum", "sum_squares")
MAX_DISTRIBUTION = 500  # distribution steps per read (TensorBoard serves 500): each record's buckets are decoded


def _number_or_none(value: object, what: str) -> float | None:
    """NaN/Inf (a histogram of values containing NaN, as torch writes it) is kept as null, not refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EventError(f"{what} must be a number")
    return float(value) if math.isfinite(value) else None


def _check(rec: dict, where: str) -> tuple[dict, None, None]:
    limits, counts = rec.get("limits"), rec.get("counts")
    if not isinstance(limits, list) or not isinstance(counts, list):
        raise EventError(f"{where}: limits and counts must be lists of numbers")
    if len(limits) != len(counts) or not 1 <= len(limits) <= MAX_BUCKETS:
        raise EventError(f"{where}: limits and counts must have the same length, 1..{MAX_BUCKETS}")
    try:
        lim = np.asarray(limits, dtype=np.float64)
        cnt = np.asarray(counts, dtype=np.float64)
    except (TypeError, ValueError):
        raise EventError(f"{where}: limits and counts must be lists of numbers") from None
    if lim.ndim != 1 or cnt.ndim != 1 or np.isnan(lim).any() or np.any(np.diff(lim) < 0):
        raise EventError(f"{where}: limits must be increasing numbers")
    if not np.all(np.isfinite(cnt)) or np.any(cnt < 0):
        raise EventError(f"{where}: counts must be non-negative numbers")
    data = {k: _number_or_none(rec.get(k), f"{where}.{k}") for k in _STATS}
    if data["num"] is None:
        data["num"] = float(cnt.sum())
    # Infinite edges (a last bucket up to DBL_MAX) cannot be JSON: clamp to the largest finite float.
    data["limits"] = np.clip(lim, -np.finfo(np.float64).max, np.finfo(np.float64).max).tolist()
    data["counts"] = cnt.tolist()
    return data, None, None


def validate(cmd: PaneCommand, raw: dict) -> list[stepped.Rec]:
    return stepped.parse_records(cmd, raw, _check)


def _check_stored(data: dict, blob: str | None, where: str) -> None:
    if blob is not None:
        raise EventError(f"{where}: a histogram record has no blob")
    _check(data, where)


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    return stepped.check_stored_records("histogram", content, steps, _check_stored)


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    stepped.apply_records(tx, cmd, deltas)


def buckets(data: dict) -> list[list[float]]:
    """[[left, right, count], ...] without empty outer buckets; bucket 0 starts at min, the last ends at max."""
    lim = np.asarray(data.get("limits") or [], dtype=np.float64)
    cnt = np.asarray(data.get("counts") or [], dtype=np.float64)
    if len(lim) == 0:
        return []
    lo, hi = data.get("min"), data.get("max")
    left = np.concatenate([[lim[0] if lo is None else min(lo, lim[0])], lim[:-1]])
    right = lim.copy()
    nz = np.flatnonzero(cnt > 0)
    if len(nz) == 0:
        return []
    a, b = int(nz[0]), int(nz[-1]) + 1
    left, right, cnt = left[a:b], right[a:b], cnt[a:b]
    if lo is not None:
        left[0] = max(left[0], min(lo, right[0]))
    if hi is not None:
        right[-1] = min(right[-1], max(hi, left[-1]))
    return np.stack([left, right, cnt], axis=1).tolist()


def quantiles(data: dict) -> list[float | None]:
    """Values at BASIS_POINTS, interpolating linearly inside the bucket where the cumulative count crosses."""
    b = np.asarray(buckets(data), dtype=np.float64).reshape(-1, 3)
    total = b[:, 2].sum() if len(b) else 0.0
    if total <= 0:
        return [None] * len(BASIS_POINTS)
    cum = np.cumsum(b[:, 2])
    out: list[float | None] = []
    for bp in BASIS_POINTS:
        target = total * bp / 10_000
        i = int(min(np.searchsorted(cum, target), len(b) - 1))
        before = cum[i] - b[i, 2]
        frac = 0.0 if b[i, 2] == 0 else min(max((target - before) / b[i, 2], 0.0), 1.0)
        out.append(float(b[i, 0] + (b[i, 1] - b[i, 0]) * frac))
    return out


def render_record(row: StepRow) -> dict:
    data = row.data or {}
    return {**stepped.record_head(row), **{k: data.get(k) for k in _STATS}, "buckets": buckets(data)}


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    out, n = stepped.render_index(store, pane)
    n_hist = stepped.int_option(options, "steps", stepped.DEFAULT_STEPS, stepped.MAX_STEPS)
    shown = stepped.spread(n, n_hist)
    dist_idx = stepped.spread(n, min(budget, MAX_DISTRIBUTION))
    rows = {r.idx: r for r in store.read_steps(pane, sorted(set(shown) | set(dist_idx)))}
    out["histograms"] = [render_record(rows[i]) for i in shown if i in rows]
    out["distribution"] = [{**stepped.record_head(rows[i]), "q": quantiles(rows[i].data or {})}
                            for i in dist_idx if i in rows]
    return out

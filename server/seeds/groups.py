"""Group runs (envs) by chosen config keys (or the config minus some); per series a mean or median curve with a band on
aligned steps."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import jsonio
from ..store import Store, TraceRecord
from .stats import describe, t_ppf, welch

BANDS = ("std", "minmax", "ci")
CENTERS = ("mean", "median")
VALUES = ("final", "best")
SERIES_KINDS = ("line",)
MAX_PAIRS = 28  # all pairs of up to 8 groups per series; more groups compare each against the first
_MIN_NAMES = re.compile(r"loss|err|perplex|ppl|mse|mae|rmse|nll|cost|wer|cer|regret|time|latency", re.I)


def flatten(config: Any, prefix: str = "") -> dict[str, Any]:
    """Nested config dicts as dotted keys ({"optim": {"lr": 1}} -> {"optim.lr": 1})."""
    if not isinstance(config, dict):
        return {prefix or "config": config} if config is not None else {}
    out: dict[str, Any] = {}
    for k, v in config.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            out.update(flatten(v, key))
        else:
            out[key] = v
    return out


def group_key(config: Any, ignore: Iterable[str], by: Iterable[str] | None = None) -> dict[str, Any]:
    """The config that decides the group: the `by` keys when given (a run lacking one has None there), else every
    key but the ignored ones (a key or its last dotted part)."""
    flat = flatten(config)
    if by is not None:
        return {k: flat.get(k) for k in sorted(set(by))}
    ignored = set(ignore)
    return {k: v for k, v in sorted(flat.items()) if k not in ignored and k.rsplit(".", 1)[-1] not in ignored}


def varying_keys(configs: dict[str, Any]) -> list[str]:
    """The flattened config keys whose value differs between the runs (what a user may group by), sorted."""
    seen: dict[str, set[bytes]] = {}
    for config in configs.values():
        for k, v in flatten(config).items():
            seen.setdefault(k, set()).add(jsonio.dumps(v))
    n = len(configs)
    flat = [flatten(c) for c in configs.values()]
    return sorted(k for k, vals in seen.items() if len(vals) > 1 or sum(k in f for f in flat) < n)


def best_direction(title: str) -> str:
    """'min' for losses and errors, else 'max' (accuracy, F1, reward...)."""
    return "min" if _MIN_NAMES.search(title) else "max"


@dataclass
class Group:
    id: str
    key: dict[str, Any]
    envs: list[str] = field(default_factory=list)
    label: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "key": self.key, "envs": self.envs, "n": len(self.envs)}


def make_groups(configs: dict[str, Any], ignore: Iterable[str], by: Iterable[str] | None = None) -> list[Group]:
    """Envs in the given order, grouped by the `by` keys or else config minus `ignore`; labels name only the keys
    that differ."""
    by_key: dict[bytes, Group] = {}
    for env, config in configs.items():
        key = group_key(config, ignore, by)
        canon = jsonio.dumps(key)
        if canon not in by_key:
            by_key[canon] = Group(id=f"g{len(by_key)}", key=key)
        by_key[canon].envs.append(env)
    groups = list(by_key.values())
    keys = sorted({k for g in groups for k in g.key})
    varying = [k for k in keys if len({jsonio.dumps(g.key.get(k, None)) for g in groups}) > 1]
    for g in groups:
        parts = [f"{k}={_short(g.key[k])}" for k in varying if k in g.key]
        g.label = ", ".join(parts) or ("(no config)" if not g.key else "all runs")
    return groups


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else jsonio.dumps(value).decode()
    return text if len(text) <= 40 else text[:39] + "…"


@dataclass
class RunSeries:
    """One run's points of one series, as read within the budget (x sorted, one y per x: the last stored)."""

    x: np.ndarray
    y: np.ndarray
    downsampled: bool
    final: float | None
    low: float | None
    high: float | None


# A series whose runs hold at most this many points in all is read whole, so its band is computed exactly on the
# steps the runs share and only then reduced to the budget (a 1,000-run sweep's 2,000 steps: 2M points, 0.1 s);
# min/max-downsampling every run first cost seconds and left each run its own x. Longer series are downsampled.
WHOLE_POINTS = 4_000_000
WHOLE_PER_RUN = 200_000  # the store's largest read


def plan_series(store: Store, envs: list[str]) -> dict[str, list[tuple[str, TraceRecord]]]:
    """series name -> [(env, trace)] for every line pane of these runs (a sweep of a thousand runs: a few queries);
    a series is a line pane's title, plus `/trace` when it has several."""
    out: dict[str, list[tuple[str, TraceRecord]]] = {}
    listed = store.chart_panes(envs, SERIES_KINDS)
    for env in envs:
        for pane, traces in listed.get(env, []):
            title = pane.title or pane.win
            for tr in traces:
                out.setdefault(title if len(traces) == 1 else f"{title}/{tr.name}", []).append((env, tr))
    return out


def read_series(store: Store, members: list[tuple[str, TraceRecord]], budget: int) -> dict[str, RunSeries]:
    """env -> one series' points for each run: whole when the runs' points fit WHOLE_POINTS, else min/max
    downsampled to `budget` per run (which keeps the exact first, last, min and max points: final and best stay
    exact either way)."""
    totals = [tr.total for _, tr in members]
    whole = bool(totals) and sum(totals) <= WHOLE_POINTS and max(totals) <= WHOLE_PER_RUN
    read_budget = max(budget, max(totals)) if whole else budget
    out: dict[str, RunSeries] = {}
    reads: list[tuple[TraceRecord, float | None, str]] = [(tr, None, "minmax") for _, tr in members]
    for (env, _), s in zip(members, store.read_series_many(reads, read_budget), strict=True):
        x, y = np.asarray(s.x, dtype=np.float64), np.asarray(s.y, dtype=np.float64)
        ok = np.isfinite(x) & np.isfinite(y)
        if not ok.all():
            x, y = x[ok], y[ok]
        final = float(y[-1]) if len(y) else None
        if len(x) > 1 and not bool(np.all(x[1:] > x[:-1])):
            # A restarted run stores a step again: the last value at each step wins.
            order = np.argsort(x, kind="stable")
            x, y = x[order], y[order]
            last = np.r_[x[1:] != x[:-1], True]
            x, y = x[last], y[last]
        out[env] = RunSeries(x, y, s.downsampled, final, float(y.min()) if len(y) else None,
                             float(y.max()) if len(y) else None)
    return out


def read_runs(store: Store, envs: list[str], budget: int) -> dict[str, dict[str, RunSeries]]:
    """series name -> env -> its points, for every series of these runs (see read_series)."""
    return {name: read_series(store, members, budget) for name, members in plan_series(store, envs).items()}


def align(runs: list[RunSeries], buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The steps every run has, and a (runs x steps) matrix of their values there.

    Exact when no read was downsampled. Downsampled reads hold different x per run (each its own bucket
    extremes), so then the common x range is cut into `buckets` bins and each run contributes the mean of its
    points in a bin; only bins every run reaches are kept.
    """
    if not runs or any(len(r.x) == 0 for r in runs):
        return np.empty(0), np.empty((len(runs), 0))
    if not any(r.downsampled for r in runs):
        common = runs[0].x
        for r in runs[1:]:
            # A sweep's seeds usually log the very same steps (compared as bytes: array_equal costs 40 µs a call).
            if len(r.x) != len(common) or r.x.tobytes() != common.tobytes():
                common = np.intersect1d(common, r.x, assume_unique=True)
        if all(len(r.x) == len(common) for r in runs):
            return common, np.vstack([r.y for r in runs])
        rows = [r.y[np.searchsorted(r.x, common)] for r in runs]
        return common, np.vstack(rows) if rows else np.empty((0, len(common)))
    lo, hi = max(float(r.x[0]) for r in runs), min(float(r.x[-1]) for r in runs)
    if hi < lo:
        return np.empty(0), np.empty((len(runs), 0))
    nb = max(1, buckets)
    width = (hi - lo) / nb if hi > lo else 1.0
    sums = np.zeros((len(runs), nb))
    counts = np.zeros((len(runs), nb))
    for i, r in enumerate(runs):
        keep = (r.x >= lo) & (r.x <= hi)
        b = np.clip(((r.x[keep] - lo) / width).astype(np.int64), 0, nb - 1)
        np.add.at(sums[i], b, r.y[keep])
        np.add.at(counts[i], b, 1)
    full = np.all(counts > 0, axis=0)
    centers = lo + (np.arange(nb) + 0.5) * width if hi > lo else np.full(nb, lo)
    return centers[full], sums[:, full] / counts[:, full]


def band(values: np.ndarray, kind: str, center: str = "mean") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The centre line (mean or median) and the band's lower and upper edge per step (a single run: the band is the
    line itself). The std and CI bands stay around the mean's spread, drawn about the chosen centre."""
    n = values.shape[0]
    mean = values.mean(axis=0) if center == "mean" else np.median(values, axis=0)
    if kind == "minmax":
        return mean, values.min(axis=0), values.max(axis=0)
    if n < 2:
        return mean, mean, mean
    std = values.std(axis=0, ddof=1)
    half = std if kind == "std" else t_ppf(0.975, n - 1) * std / math.sqrt(n)
    return mean, mean - half, mean + half


def reduce_band(x: np.ndarray, lines: tuple[np.ndarray, np.ndarray, np.ndarray], buckets: int
                ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A band on more steps than the chart has room for, in `buckets` equal x bins: per bin the mean centre,
    the lowest lower edge and the highest upper edge, so the band keeps its full extent (x sorted)."""
    if len(x) <= 2 * buckets:
        return x, lines
    width = (x[-1] - x[0]) / buckets
    starts = np.unique(np.searchsorted(x, x[0] + width * np.arange(buckets)))
    counts = np.diff(np.r_[starts, len(x)])
    mid, lo, hi = lines
    # Each bin at its middle stored step (a step stays a whole number on the wire).
    return x[starts + counts // 2], (np.add.reduceat(mid, starts) / counts, np.minimum.reduceat(lo, starts),
                                     np.maximum.reduceat(hi, starts))


def _clean(a: np.ndarray) -> list[float] | np.ndarray:
    """Values for the wire: float32 when that holds them (a chart shows 7 digits; half the bytes of 50 groups x
    3 series), else rounded float64."""
    a = np.asarray(a, dtype=np.float64)
    mag = np.abs(a[np.isfinite(a)])
    if len(mag) and (mag.max() > 3e38 or mag[mag > 0].min(initial=1.0) < 1e-37):
        return np.round(a, 12).tolist()
    return a.astype(np.float32)


def _clean_x(x: np.ndarray) -> list[float] | np.ndarray:
    """Steps as integers when they are whole (exact at any size), else rounded float64."""
    if len(x) and np.all(x == np.floor(x)) and np.all(np.abs(x) < 2**53):
        return x.astype(np.int64)
    return np.round(np.asarray(x, dtype=np.float64), 12).tolist()


def series_bands(groups: list[Group], runs: dict[str, dict[str, RunSeries]], kind: str, budget: int,
                 center: str = "mean") -> list[dict[str, Any]]:
    out = []
    for name in sorted(runs):
        per_env = runs[name]
        entries = []
        for g in groups:
            have = [e for e in g.envs if e in per_env]
            if not have:
                continue
            x, values = align([per_env[e] for e in have], max(1, budget // 2))
            entry: dict[str, Any] = {"group": g.id, "n": len(g.envs), "aligned": len(have), "steps": int(len(x)),
                                     "downsampled": any(per_env[e].downsampled for e in have)}
            if len(x):
                # Exact per step, then reduced to what a chart draws (a band reads as an envelope: its extremes stay).
                mean, lo, hi = band(values, kind, center)
                nx, (mean, lo, hi) = reduce_band(x, (mean, lo, hi), max(1, budget // 2))
                entry["downsampled"] = entry["downsampled"] or len(nx) < len(x)
                entry.update(x=_clean_x(nx), mean=_clean(mean), lo=_clean(lo), hi=_clean(hi))
            else:
                entry.update(x=[], mean=[], lo=[], hi=[])
            entries.append(entry)
        out.append({"title": name, "direction": best_direction(name), "groups": entries})
    return out


def comparisons(groups: list[Group], runs: dict[str, dict[str, RunSeries]], value: str,
                baseline: str | None = None) -> list[dict[str, Any]]:
    """Per series: each group's final (or best) values summarized, and Welch's test for pairs of groups: every
    other group against `baseline` (a group id) when it has values, else all pairs (or each against the first)."""
    out = []
    for name in sorted(runs):
        per_env = runs[name]
        direction = best_direction(name)
        samples = {}
        for g in groups:
            vals = []
            for e in g.envs:
                r = per_env.get(e)
                if r is None:
                    continue
                v = r.final if value == "final" else (r.low if direction == "min" else r.high)
                if v is not None:
                    vals.append(v)
            if vals:
                samples[g.id] = describe(vals)
        ids = list(samples)
        pairs = [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]]
        if baseline in samples:  # the page's compact table: one row per group, each against the user's baseline
            pairs = [(a, baseline) for a in ids if a != baseline]
        elif len(pairs) > MAX_PAIRS:
            pairs = [(ids[0], b) for b in ids[1:]]
        out.append({
            "title": name, "value": value, "direction": direction,
            "groups": [{"group": gid, **s.to_json()} for gid, s in samples.items()],
            "pairs": [{"a": a, "b": b, **welch(samples[a], samples[b]).to_json()} for a, b in pairs],
        })
    return out

"""Parameter importance against a metric, as W&B shows it: a correlation per hparam and the impurity importance of
a small seeded random forest of regression trees (numpy only; bounded cost for thousands of runs)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

N_TREES = 32
MAX_DEPTH = 6
MIN_LEAF = 2
BINS = 32                 # quantile bins per hparam: every split of a node is one bincount over all candidates
MAX_ROWS = 5_000          # more rows than this are subsampled (seeded): the forest's cost stays bounded
MAX_FEATURES = 256        # varying hparams considered, in column order
MIN_ROWS = 3
SEED = 0


def _feature(values: list[Any], typ: str, log: bool, y: np.ndarray) -> np.ndarray:
    """One hparam as floats (NaN where missing): numbers (log10 on a log axis), bools 0/1, text ranked by the
    metric's mean per value, so one threshold split of the ranks is the best split into two groups of values."""
    if typ == "number":
        x = np.array([np.nan if v is None else float(v) for v in values])
        return np.log10(x) if log else x
    if typ == "bool":
        return np.array([np.nan if v is None else float(bool(v)) for v in values])
    text = [None if v is None else str(v) for v in values]
    means: dict[str, list[float]] = {}
    for t, target in zip(text, y, strict=True):
        if t is not None:
            means.setdefault(t, []).append(float(target))
    rank = {t: i for i, t in enumerate(sorted(means, key=lambda t: sum(means[t]) / len(means[t])))}
    return np.array([np.nan if t is None else float(rank[t]) for t in text])


def _correlation(x: np.ndarray, y: np.ndarray, categorical: bool) -> float | None:
    """Pearson's r on the rows with a value; for text, the correlation ratio η (unsigned)."""
    ok = np.isfinite(x)
    if ok.sum() < MIN_ROWS:
        return None
    x, y = x[ok], y[ok]
    total = float(((y - y.mean()) ** 2).sum())
    if total <= 0:
        return None
    if categorical:
        _, inverse = np.unique(x, return_inverse=True)
        counts = np.bincount(inverse)
        sums = np.bincount(inverse, weights=y)
        between = float((sums ** 2 / counts).sum() - y.sum() ** 2 / len(y))
        return math.sqrt(max(between, 0.0) / total)
    if float(x.std()) == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def _bins(x: np.ndarray) -> np.ndarray:
    """Bin codes 1..BINS by quantile (0: missing, so a split can set the runs without a value apart)."""
    out = np.zeros(len(x), dtype=np.int64)
    ok = np.isfinite(x)
    if ok.any():
        edges = np.unique(np.quantile(x[ok], np.linspace(0, 1, BINS + 1)[1:-1]))
        out[ok] = np.searchsorted(edges, x[ok], side="right") + 1
    return out


def forest_importance(codes: np.ndarray, y: np.ndarray, seed: int = SEED) -> np.ndarray:
    """Mean decrease in squared error per feature over a bagged forest, normalised to sum to 1 (zeros when no
    split helps). codes: (rows, features) bin codes in 0..BINS."""
    n, f = codes.shape
    width = BINS + 1
    imp = np.zeros(f)
    if n < MIN_ROWS or f == 0:
        return imp
    rng = np.random.default_rng(seed)
    k = max(1, min(f, math.ceil(f / 3)))   # features tried per split, as regression forests do
    # Each feature's codes offset into its own block of bins: one bincount per node counts every candidate.
    shifted = codes + np.arange(f) * width
    for _ in range(N_TREES):
        boot: np.ndarray = np.asarray(rng.integers(0, n, size=n))  # bagging: each tree sees a bootstrap sample
        stack: list[tuple[np.ndarray, int]] = [(boot, 0)]
        while stack:
            node, depth = stack.pop()
            m = len(node)
            yn = y[node]
            if depth >= MAX_DEPTH or m < 2 * MIN_LEAF or float(yn.max() - yn.min()) == 0:
                continue
            feats = rng.choice(f, k, replace=False)
            sub = shifted[np.ix_(node, feats)].ravel()
            cnt = np.bincount(sub, minlength=f * width).reshape(f, width)[feats]
            tot = np.bincount(sub, weights=np.repeat(yn, k), minlength=f * width).reshape(f, width)[feats]
            cl = np.cumsum(cnt, axis=1)[:, :-1].astype(float)
            sl = np.cumsum(tot, axis=1)[:, :-1]
            cr, sr = m - cl, yn.sum() - sl
            ok = (cl >= MIN_LEAF) & (cr >= MIN_LEAF)
            with np.errstate(divide="ignore", invalid="ignore"):
                gain = np.where(ok, sl ** 2 / cl + sr ** 2 / cr, -np.inf) - yn.sum() ** 2 / m
            best = int(np.argmax(gain))
            j, cut = divmod(best, width - 1)
            if not gain[j, cut] > 1e-12 * max(1.0, float((yn ** 2).sum())):
                continue
            imp[feats[j]] += gain[j, cut]
            left = codes[node, feats[j]] <= cut
            stack += [(node[left], depth + 1), (node[~left], depth + 1)]
    total = imp.sum()
    return imp / total if total > 0 else imp


def importance(rows: list[dict[str, Any]], cols: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """{"metric", "rows", "params": [{"name", "importance", "correlation", "correlation_kind"}]} for the varying
    hparams against the rows' final value of `metric` (rows without one are left out), most important first."""
    rows = [r for r in rows if isinstance(r["metrics"].get(metric), (int, float))
            and math.isfinite(r["metrics"][metric])]
    if len(rows) > MAX_ROWS:
        keep = np.sort(np.random.default_rng(SEED).choice(len(rows), MAX_ROWS, replace=False))
        rows = [rows[i] for i in keep]
    ranked = [c for c in cols if c["varying"] and not c.get("identifier")]
    feats = ranked[:MAX_FEATURES]
    y = np.array([float(r["metrics"][metric]) for r in rows])
    xs = [_feature([r["hparams"].get(c["name"]) for r in rows], c["type"], c["log"], y) for c in feats]
    # A key varying only among rows without this metric is constant here: it explains nothing.
    params = []
    for c, x in zip(feats, xs, strict=True):
        kind = "eta" if c["type"] == "string" else "pearson"
        params.append({"name": c["name"], "importance": 0.0, "correlation": _correlation(x, y, kind == "eta"),
                       "correlation_kind": kind})
    if len(rows) >= MIN_ROWS and xs:
        imp = forest_importance(np.stack([_bins(x) for x in xs], axis=1), y)
        for p, v in zip(params, imp, strict=True):
            p["importance"] = round(float(v), 6)
    params.sort(key=lambda p: (-p["importance"], -abs(p["correlation"] or 0.0), p["name"]))
    return {"metric": metric, "rows": len(rows), "params": params, "trees": N_TREES,
            "truncated": len(ranked) > MAX_FEATURES}

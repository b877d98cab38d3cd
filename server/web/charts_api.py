"""Chart reads for Scalars and Compare: every picked run's series of one chart in one budgeted, columnar answer."""

from __future__ import annotations

import math
import re
from fnmatch import fnmatchcase
from typing import Any

import numpy as np
from flask import Blueprint, Response, request

from ..store import PaneRecord, TraceRecord
from .api import MAX_POINTS, _float_arg, _int_arg, _name, env_names_arg
from .common import ApiError, env_visible, json_response, services

bp = Blueprint("charts_api", __name__, url_prefix="/api/v1")

CHART_KINDS = ("line", "scatter")
MIN_PER_SERIES = 16        # even a 10,000-run chart keeps each run's first, last, lowest and highest points
DEFAULT_WIDTH = 600        # CSS pixels of a chart when the browser does not say
MAX_WIDTH = 10_000
# Points of one chart, shared by all its series: ~0.4 MB of JSON however many runs, and what Plotly draws in SVG
# within a few hundred ms (100 runs: 240 points each, 1,000 runs: 24).
DEFAULT_BUDGET = 24_000
# A multi-metric chart (every tag matching a pattern on one chart): lines it may hold, and the points of each line
# when the caller does not say (3,000 tags of one run: 48,000 points, drawn on a canvas in well under a second).
MAX_MATCH_LINES = 20_000
MATCH_PER_LINE = 16


def _picked_envs() -> list[str]:
    """?envs=a,b, or every env this caller may see when the parameter is absent (a sweep's "all runs")."""
    known = {e.name for e in services().store.list_envs() if env_visible(e.name)}  # one query, not one per run
    if request.args.get("envs") is None:
        return sorted(known)
    names = env_names_arg()
    missing = next((n for n in names if n not in known), None)
    if missing is not None:
        raise ApiError(404, f"env {missing!r} not found")
    return names


def _key(pane: PaneRecord, by: str) -> tuple[str, str]:
    title = pane.title or pane.win
    return (pane.win, title) if by == "win" else ("", title)


@bp.get("/charts")
def charts() -> Response:
    """The charts of the picked runs, without data: ?by=title (Scalars: one chart per title) or ?by=win
    (Compare: one per (win, title), so two panes sharing a title but not a win stay apart)."""
    by = request.args.get("by", "title")
    if by not in ("title", "win"):
        raise ApiError(400, "by must be title or win")
    envs = _picked_envs()
    store = services().store
    found: dict[tuple[str, str], dict[str, Any]] = {}
    counts = {e.name: e.panes for e in store.list_envs()}  # the browser spots new tags by a run's pane count
    panes = {env: counts.get(env, 0) for env in envs}
    layout: dict[str, dict[str, Any]] = {}
    views: dict[str, dict[str, Any]] = {}  # the picked runs' saved Scalars views (the newest of a name wins)
    metas = store.env_metas(envs)
    listed = store.chart_panes(envs, CHART_KINDS, traces=False)
    for env in envs:
        _merge_layout(layout, metas.get(env, {}).get("custom_scalars"))
        for vname, v in (metas.get(env, {}).get("views") or {}).items():
            if isinstance(v, dict) and isinstance(v.get("scalars"), dict):
                if vname not in views or v.get("saved", 0) > views[vname]["saved"]:
                    views[vname] = {"saved": v.get("saved", 0), "env": env, **v["scalars"]}
        for pane, _traces in listed.get(env, []):
            win, title = _key(pane, by)
            chart = found.setdefault((win, title), {"title": title, "win": win or None, "kind": pane.kind,
                                                    "opts": pane.opts, "envs": []})
            if not chart["envs"] or chart["envs"][-1] != env:
                chart["envs"].append(env)
            chart.setdefault("wins", {})[pane.win] = None  # hook groups (sys_*) are told by their win
    for chart in found.values():
        chart["wins"] = list(chart["wins"])[:8]
    return json_response({"envs": envs, "panes": panes, "charts": list(found.values()), "custom_scalars": layout,
                          "views": views})


def _merge_layout(into: dict[str, dict[str, Any]], layout: object) -> None:
    """TensorBoard merges every run's custom-scalars layout (a later run adds charts); here once for all runs,
    so the browser does not read the meta of a thousand runs."""
    if not isinstance(layout, dict):
        return
    for category, charts in layout.items():
        if isinstance(charts, dict):
            into[str(category)] = {**into.get(str(category), {}), **charts}


def _after_list(envs: list[str]) -> list[float | None]:
    """?after=x1,,x3 (aligned with envs): only points past that x, for a live update; empty means all."""
    raw = request.args.get("after")
    if raw is None:
        return [None] * len(envs)
    parts = raw.split(",")
    if len(parts) != len(envs):
        raise ApiError(400, f"after must hold one value per env ({len(envs)}), comma-separated")
    out: list[float | None] = []
    for p in parts:
        try:
            v = float(p) if p.strip() else None
        except ValueError:
            raise ApiError(400, f"after must hold numbers, not {p[:40]!r}") from None
        if v is not None and not math.isfinite(v):
            raise ApiError(400, "after must hold finite numbers")
        out.append(v)
    return out


def _compact(x: np.ndarray) -> np.ndarray:
    """Whole-number x (steps) as integers: "12" instead of "12.0" on the wire, a fifth fewer bytes per point."""
    if len(x) and np.all(np.isfinite(x)) and np.all(x == np.floor(x)) and np.all(np.abs(x) < 2**53):
        return x.astype(np.int64)
    return x


def _compact_y(y: np.ndarray) -> np.ndarray:
    """Values as float32 when that keeps them (a chart draws 7 digits at most): "0.42007506" instead of
    "0.42007505702973165", about half the bytes of a sweep's chart read. Out of float32's range: kept as is."""
    finite = np.abs(y[np.isfinite(y)])
    nonzero = finite[finite > 0]
    if len(finite) and (finite.max() > 3e38 or (len(nonzero) and nonzero.min() < 1e-37)):
        return y
    return y.astype(np.float32)


@bp.get("/chart")
def chart() -> Response:
    """Every picked run's series of one chart: ?title= (and ?win= for Compare's keying), ?width= (CSS px),
    ?budget= (points shared by all series), ?walls=1, ?after= (live updates: only newer points).

    Columnar: per-series arrays (env index, win, name, total, n) and the points of all series concatenated
    in flat x / y (/ wall) arrays, series after series, n[i] points each. Each series gets an equal share of
    the budget, at most two points per pixel (min and max per x bucket, so spikes survive) and at least
    MIN_PER_SERIES."""
    title = request.args.get("title")
    if not title:
        raise ApiError(400, "title is required")
    win = request.args.get("win") or None
    if win is not None:
        win = _name(win, "win")
    envs = _picked_envs()
    after = _after_list(envs)
    width = _int_arg("width", DEFAULT_WIDTH)
    budget = _int_arg("budget", DEFAULT_BUDGET)
    if not 1 <= width <= MAX_WIDTH:
        raise ApiError(400, f"width must be between 1 and {MAX_WIDTH}")
    if not 1 <= budget <= MAX_POINTS:
        raise ApiError(400, f"budget must be between 1 and {MAX_POINTS}")
    walls = request.args.get("walls") in ("1", "true")
    store = services().store
    plan: list[tuple[int, PaneRecord, TraceRecord]] = []
    kind = None
    listed = store.chart_panes(envs, CHART_KINDS, title)  # a few queries for any number of runs
    for i, env in enumerate(envs):
        for pane, traces in listed.get(env, []):
            if (pane.title or pane.win) != title or (win is not None and pane.win != win):
                continue
            kind = kind or pane.kind
            plan.extend((i, pane, trace) for trace in traces)
    per = max(MIN_PER_SERIES, min(2 * width, budget // max(1, len(plan))))
    cols: dict[str, list[Any]] = {"env": [], "win": [], "name": [], "total": [], "n": []}
    xs, ys, ws = [], [], []
    x0 = _float_arg("x0")
    reads = [(trace, after[i] if after[i] is not None else x0, "stride" if pane.kind == "scatter" else "minmax")
             for i, pane, trace in plan]
    for (i, pane, trace), series in zip(plan, store.read_series_many(reads, per), strict=True):
        x, y = series.x, series.y
        if after[i] is not None:  # the read's range is inclusive; the browser already has the point at `after`
            keep = x > after[i]
            x, y = x[keep], y[keep]
        cols["env"].append(i)
        cols["win"].append(pane.win)
        cols["name"].append(trace.name)
        cols["total"].append(series.total)
        cols["n"].append(len(x))
        xs.append(x)
        ys.append(y)
        if walls:
            ws.append(store.read_walls(trace, x))
    cat = (lambda parts: np.concatenate(parts) if parts else np.empty(0))  # noqa: E731
    out: dict[str, Any] = {"title": title, "win": win, "kind": kind, "envs": envs, "per_series": per,
                           "series": cols, "x": _compact(cat(xs)), "y": _compact_y(cat(ys))}
    if walls:
        out["wall"] = cat(ws)
    return json_response(out)


def _tag_matcher(pattern: str, regex: bool) -> Any:
    """A tag test for ?pattern=: a glob (layer*/grad_norm, * crossing "/") or, with ?regex=1, a search regex."""
    if not regex:
        return lambda tag: fnmatchcase(tag, pattern)
    try:
        compiled = re.compile(pattern)
    except re.error as err:
        raise ApiError(400, f"pattern is not a valid regex: {err}") from None
    return lambda tag: compiled.search(tag) is not None


@bp.get("/chart/match")
def chart_match() -> Response:
    """Every line chart whose title matches ?pattern= (a glob, or a regex with ?regex=1), all picked runs, on one
    chart: the same columnar answer as /chart plus a `title` per series, each series ?per= points (default
    MATCH_PER_LINE, at most 2 per pixel of ?width=), read in one batched store read however many tags match."""
    pattern = request.args.get("pattern") or ""
    if not pattern.strip():
        raise ApiError(400, "pattern is required")
    if len(pattern) > 1000:
        raise ApiError(400, "pattern is longer than 1000 characters")
    regex = request.args.get("regex") in ("1", "true")
    matches = _tag_matcher(pattern, regex)
    envs = _picked_envs()
    width = _int_arg("width", DEFAULT_WIDTH)
    if not 1 <= width <= MAX_WIDTH:
        raise ApiError(400, f"width must be between 1 and {MAX_WIDTH}")
    per = _int_arg("per", MATCH_PER_LINE)
    if not 1 <= per <= MAX_POINTS:
        raise ApiError(400, f"per must be between 1 and {MAX_POINTS}")
    per = max(4, min(per, 2 * width))
    store = services().store
    # Only the matching tags' traces, in a few queries (a glob also narrows the store's query).
    listed = store.chart_lines(envs, ("line",), matches, None if regex else pattern)
    plan = [(i, line) for i, env in enumerate(envs) for line in listed.get(env, [])]
    if len(plan) > MAX_MATCH_LINES:
        raise ApiError(400, f"pattern matches {len(plan)} lines, more than {MAX_MATCH_LINES}: narrow it")
    series = store.read_series_many([(line.trace, None, "minmax") for _i, line in plan], per)
    cols: dict[str, list[Any]] = {"env": [i for i, _ in plan], "win": [line.win for _, line in plan],
                                  "name": [line.trace.name for _, line in plan],
                                  "title": [line.title for _, line in plan], "total": [s.total for s in series],
                                  "n": [len(s.x) for s in series]}
    cat = (lambda parts: np.concatenate(parts) if parts else np.empty(0))  # noqa: E731
    return json_response({"pattern": pattern, "kind": "line", "envs": envs, "per_series": per, "series": cols,
                          "x": _compact(cat([s.x for s in series])), "y": _compact_y(cat([s.y for s in series]))})

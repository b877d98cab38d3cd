"""HParams rows across envs (add_hparams sessions, else the run's own config) and the stats of each column."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .. import jsonio
from ..commands.hparams import readable_sessions, value_type
from ..runs.series import infer_best, summaries_by_env
from ..store import Store

LINE_KINDS = ("line",)
MAX_DEFAULT_AXES = 12          # varying hparams drawn by default; the rest wait in the picker
MAX_FALLBACK_AXES = 6          # hparams drawn when none varies (one run): a few well-known ones
MAX_DEFAULT_METRICS = 4        # metric axes drawn by default (besides the chosen metric)
LOG_DECADES = 2.0              # positive values spanning this many decades get a log axis
MIN_IDENTIFIER_ROWS = 10      # text with a distinct value in each of at least this many rows is an identifier
MAX_FLAT_DEPTH = 8             # nested configs deeper than this are kept as JSON text
# Names of keys that live on a log scale whatever their spread (leaf name, so "args/learning_rate" counts).
_LOG_NAME = re.compile(r"(?:^|[_\-])(lr|learning_rate|weight_decay|wd|eps|epsilon)(?:$|[_\-])", re.I)
_WELL_KNOWN = re.compile(r"lr|learning_rate|batch_size|epoch|weight_decay|warmup|seed|dropout|optim", re.I)


@dataclass
class Table:
    """rows: {env, session, hparams, metrics, wall, source}; hparams: name -> every value seen; metric names."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    values: dict[str, list[Any]] = field(default_factory=dict)
    domains: dict[str, list[Any]] = field(default_factory=dict)
    session_metrics: dict[str, None] = field(default_factory=dict)
    series_metrics: dict[str, None] = field(default_factory=dict)

    @property
    def metrics(self) -> list[str]:
        return list({**self.session_metrics, **self.series_metrics})


def flat_config(config: dict[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """A run's config as hparams: nested dicts joined with "." (as the runs query names them), lists as JSON text,
    nulls left out (a missing value)."""
    out: dict[str, Any] = {}
    for k, v in config.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v and depth < MAX_FLAT_DEPTH:
            out.update(flat_config(v, f"{name}.", depth + 1))
        elif v is None or (isinstance(v, float) and not math.isfinite(v)):
            continue
        elif isinstance(v, (bool, int, float, str)):
            out[name] = v
        else:
            out[name] = jsonio.dumps(v).decode()
    return out


def _last_by_title(store: Store, env: str, wanted: set[str]) -> dict[str, float]:
    """The last stored point of line panes titled with a wanted metric (TensorBoard reads each tag's last value)."""
    found: dict[str, float] = {}
    for pane in store.list_panes(env):
        if pane.kind not in LINE_KINDS or pane.title not in wanted or pane.title in found:
            continue
        traces = store.list_traces(pane)
        if not traces:
            continue
        # A tiny budget still keeps the last stored point (WIRE §3: first and last are always kept).
        series = store.read_series(traces[0], 4)
        if len(series.y) and math.isfinite(float(series.y[-1])):
            found[pane.title] = float(series.y[-1])
    return found


def collect(store: Store, envs: list[str] | None, visible: Any) -> Table:
    """Every session of the envs (None: every visible env with sessions or a config). An env without sessions
    is one row of its flattened config (Client(config=...), set_config, imports); metrics are the op's values,
    else the last value of the env's series of that name, else of a line pane titled so."""
    table = Table()
    runs = [r for r in store.list_runs(envs) if envs is not None or visible(r.env)]
    names = [r.env for r in runs]
    summaries = summaries_by_env(store.list_series(names if envs is not None else None),
                                 {r.env: r.best for r in runs if r.best})
    order = {n: i for i, n in enumerate(envs)} if envs is not None else None
    if order is not None:
        runs.sort(key=lambda r: order.get(r.env, 0))
    for run in runs:
        last = {name: s["last"] for name, s in summaries.get(run.env, {}).items()
                if isinstance(s.get("last"), (int, float)) and math.isfinite(s["last"])}
        # The listing carries them (no read per env); a malformed stored session is left out, not a 500 for all.
        sessions = readable_sessions(run.hparams)
        if sessions:
            _add_sessions(table, run.env, sessions, last)
        elif run.config:
            hp = flat_config(run.config)
            table.series_metrics.update(dict.fromkeys(last))
            table.rows.append({"env": run.env, "session": ".", "hparams": hp, "metrics": {}, "last": last,
                               "wall": run.updated, "source": "config"})
            for k, v in hp.items():
                table.values.setdefault(k, []).append(v)
    _fill_metrics(store, table)
    return table


def _add_sessions(table: Table, env: str, sessions: dict[str, dict], last: dict[str, float]) -> None:
    for session, s in sorted(sessions.items()):
        hp = s.get("hparams") or {}
        for k, v in hp.items():
            table.values.setdefault(k, []).append(v)
        for k, values in (s.get("domains") or {}).items():
            seen = table.domains.setdefault(k, [])
            keys = {(value_type(x), x) for x in seen}  # True == 1 in Python: keep bools apart from numbers
            seen += [v for v in values if (value_type(v), v) not in keys]
        table.session_metrics.update(dict.fromkeys(s.get("metrics") or {}))
        # The env's series do not become metric names here (add_hparams names its metrics), but they give values
        # to the names other runs bring.
        table.rows.append({"env": env, "session": session, "hparams": hp, "metrics": dict(s.get("metrics") or {}),
                           "last": last, "wall": s.get("wall"), "source": "hparams"})


def _fill_metrics(store: Store, table: Table) -> None:
    """Every row gets every metric name (null where it has no value): the op's value, else the env's series of
    that name, else (add_hparams metrics) a line pane titled with it, read once per env."""
    wanted = set(table.session_metrics)
    fallback: dict[str, dict[str, float]] = {}
    for row in table.rows:
        last = row.pop("last")
        for m in table.metrics:
            if row["metrics"].get(m) is None and m in last:
                row["metrics"][m] = last[m]
        missing = {m for m in wanted if row["metrics"].get(m) is None}
        if missing:
            if row["env"] not in fallback:
                fallback[row["env"]] = _last_by_title(store, row["env"], wanted)
            for m in missing:
                row["metrics"][m] = fallback[row["env"]].get(m)
        row["metrics"] = {m: row["metrics"].get(m) for m in table.metrics}


def _is_log(name: str, nums: list[float]) -> bool:
    if not nums or min(nums) <= 0:
        return False
    # A learning rate by its name is on a log axis even alone: its sweep would be, and ticks read 5e-5, not 0.
    return math.log10(max(nums) / min(nums)) >= LOG_DECADES or bool(_LOG_NAME.search(name.replace(".", "/")
                                                                                       .rsplit("/", 1)[-1]))


def columns(table: Table) -> list[dict[str, Any]]:
    """One column per hparam: type, domain, how many rows have it, distinct values, varying, log, identifier."""
    out = []
    n = len(table.rows)
    for name, values in table.values.items():
        domain = table.domains.get(name)
        types = {value_type(v) for v in values + (domain or [])}
        typ = types.pop() if len(types) == 1 else "string"
        distinct = {(value_type(v), v if typ != "string" else str(v)) for v in values}
        # A key some rows lack varies too: the gap tells those runs apart.
        varying = len(distinct) > 1 or len(values) < n
        nums = [float(v) for v in values] if typ == "number" else []
        # Text unique to every run (a run name, an output dir) names runs rather than setting them: not drawn by
        # default, and never ranked (sorted by the metric, unique values would "explain" it perfectly).
        identifier = typ == "string" and len(values) >= MIN_IDENTIFIER_ROWS and len(distinct) == len(values)
        out.append({"name": name, "type": typ, "domain": domain, "count": len(values), "distinct": len(distinct),
                    "varying": varying, "log": _is_log(name, nums), "identifier": identifier})
    return out


def default_metric(table: Table) -> str | None:
    """The metric importance is computed against by default: the one most runs have (two imported runs' add_hparams
    metric must not win over a sweep's loss); among those, an add_hparams metric, then a series whose name says
    which way is better (a loss or an accuracy), then the first."""
    names = table.metrics
    if not names:
        return None
    have = {m: 0 for m in names}
    for row in table.rows:
        for m, v in (row.get("metrics") or {}).items():
            if m in have and isinstance(v, (int, float)) and math.isfinite(v):
                have[m] += 1

    def rank(i_m: tuple[int, str]) -> tuple[int, int, int, int]:
        i, m = i_m
        return (-have[m], m not in table.session_metrics, not infer_best(m), i)
    return min(enumerate(names), key=rank)[1]


def default_axes(cols: list[dict[str, Any]], table: Table, metric: str | None) -> list[str]:
    """Column keys drawn by default: varying hparams (capped), or a few well-known ones when none varies; then the
    add_hparams metrics (capped) or the chosen metric."""
    varying = [c["name"] for c in cols if c["varying"] and not c["identifier"]]
    if varying:
        hps = varying[:MAX_DEFAULT_AXES]
    else:
        names = [c["name"] for c in cols]
        known = [k for k in names if _WELL_KNOWN.search(k.rsplit("/", 1)[-1])]
        hps = (known + [k for k in names if k not in known])[:MAX_FALLBACK_AXES]
    metrics = list(table.session_metrics)[:MAX_DEFAULT_METRICS]
    if metric and metric not in metrics:
        metrics.append(metric)
    return [f"h:{k}" for k in hps] + [f"m:{m}" for m in metrics]

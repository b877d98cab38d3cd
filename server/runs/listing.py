"""The runs listing: every env as a run dict (status, tags, config, summaries, light provenance), filtered."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from ..store import RunRow, Store
from .budget import select
from .query import compile_query, config_value
from .record import run_json
from .series import STATS, summaries_by_env

# Provenance keys the listing carries (the rest, argv and paths included, is one GET .../run away); "source" names
# the tracker an imported run came from (wandb, mlflow, neptune), which the table's status says.
LISTED_PROVENANCE = ("host", "user", "pid", "python", "torch", "cuda", "gpus", "git", "source")


def run_dict(row: RunRow, summaries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    record = run_json(row.run, full=False)
    record.pop("notes")  # the listing carries whether there are notes, not their text
    prov = record["provenance"]
    if prov is not None:
        record["provenance"] = {k: prov[k] for k in LISTED_PROVENANCE if k in prov}
    return {"env": row.env, **record, "has_notes": bool(row.run and row.run.notes), "config": row.config,
            "summaries": summaries, "best": row.best, "color": row.color, "created": row.created,
            "updated": row.updated}


def list_runs(store: Store, query: str | None = None,
              visible: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
    """Runs `visible` lets the caller read that match `query` (QueryError if malformed or over its time
    budget), most recently updated first."""
    predicate = compile_query(query or "")  # first: a bad query costs no database read
    rows = store.list_runs()
    summaries = summaries_by_env(store.list_series(), {r.env: r.best for r in rows if r.best})
    runs = (run_dict(r, summaries.get(r.env, {})) for r in rows)
    return select(runs, predicate, visible)


SORT_FIELDS = ("env", "status", "tags", "updated", "created", "started", "ended", "duration", "host", "commit")
_STATUS_ORDER = {"running": 0, "active": 0, "stalled": 1, "crashed": 2, "failed": 3, "finished": 4, "idle": 5}


def sort_value(key: str) -> Callable[[dict[str, Any]], Any]:
    """The value a column sorts by: a run field, "config:<key>" or "series:<name>.<stat>" (ValueError if unknown)."""
    if key.startswith("config:"):
        name = key[len("config:"):]
        return lambda r: config_value(r["config"], name)
    if key.startswith("series:"):
        series, _, stat = key[len("series:"):].rpartition(".")
        if not series or stat not in STATS:
            raise ValueError(f"sort: series columns are series:<name>.<{'|'.join(STATS)}>")
        return lambda r: (r["summaries"].get(series) or {}).get(stat)
    if key not in SORT_FIELDS:
        raise ValueError(f"sort must be one of {', '.join(SORT_FIELDS)}, config:<key> or series:<name>.<stat>")
    if key == "status":
        return lambda r: _STATUS_ORDER.get(r["status"])
    if key == "tags":
        return lambda r: " ".join(r["tags"]) or None
    if key == "duration":
        return lambda r: None if r["started"] is None else (r["ended"] or time.time()) - r["started"]
    if key in ("host", "commit"):
        return lambda r: (r["provenance"] or {}).get("host") if key == "host" else \
            ((r["provenance"] or {}).get("git") or {}).get("commit")
    return lambda r: r[key]


def sort_runs(runs: list[dict[str, Any]], key: str, descending: bool) -> list[dict[str, Any]]:
    """Runs ordered by a column; runs without a value last either way; numbers before text."""
    get = sort_value(key)
    have: list[tuple[Any, dict[str, Any]]] = []
    blank: list[tuple[Any, dict[str, Any]]] = []
    for r in runs:
        v = get(r)
        (blank if v is None or v == "" else have).append((v, r))

    def order(item: tuple[Any, dict[str, Any]]) -> tuple[int, Any]:
        v = item[0]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return (1, str(v).lower())
        return (0, v)
    have.sort(key=order, reverse=descending)
    return [r for _, r in have] + [r for _, r in blank]


MAX_COLUMN_DEPTH = 8  # nesting levels a config key is split into columns; deeper dicts show as one JSON cell


def config_columns(config: dict[str, Any], prefix: str = "", depth: int = 0) -> Iterator[str]:
    """A config's leaf keys, nested dicts joined with "." as the runs query names them (`model.depth = 4`): a
    column each, not one column of JSON text per top-level key."""
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and depth < MAX_COLUMN_DEPTH:
            yield from config_columns(value, f"{name}.", depth + 1)
        else:
            yield name


def columns_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Config keys (nested ones as dotted paths) and series (with their directions) that any of the runs has: the
    table's optional columns."""
    config: dict[str, None] = {}
    series: dict[str, str | None] = {}
    for r in runs:
        config.update(dict.fromkeys(config_columns(r["config"])))
        for name, s in r["summaries"].items():
            series.setdefault(name, s.get("direction"))
    return {"config": sorted(config), "series": dict(sorted(series.items()))}

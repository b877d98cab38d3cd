"""The runs table's flat form, one row per run, shared by paneboard.Api and the server's runs.parquet."""

from __future__ import annotations

import json
from typing import Any

# Summary stats of each series that become columns ("<series>.<stat>"); the steps are one GET .../run away.
SERIES_STATS = ("last", "min", "max", "count", "best")
PROVENANCE = ("host", "user")


def flatten_run(run: dict[str, Any]) -> dict[str, Any]:
    """A run of GET /api/v1/runs as one flat row: fields, config.<key> (nested keys joined by ".") and stats."""
    prov = run.get("provenance") or {}
    row: dict[str, Any] = {"env": run["env"], "name": run["env"].rsplit("/", 1)[-1], "status": run.get("status"),
                           "started": run.get("started"), "ended": run.get("ended"), "created": run.get("created"),
                           "updated": run.get("updated"), "tags": list(run.get("tags") or [])}
    for key in PROVENANCE:
        row[key] = prov.get(key)
    row["commit"] = (prov.get("git") or {}).get("commit")
    _flat_config(run.get("config") or {}, "config.", row)
    for series, stats in sorted((run.get("summaries") or {}).items()):
        for stat in SERIES_STATS:
            row[f"{series}.{stat}"] = stats.get(stat)
    return row


def _flat_config(config: dict[str, Any], prefix: str, out: dict[str, Any]) -> None:
    for key, value in config.items():
        if isinstance(value, dict) and value:
            _flat_config(value, f"{prefix}{key}.", out)
        else:
            out[prefix + key] = value


def columns(rows: list[dict[str, Any]], wanted: list[str] | None = None) -> dict[str, list[Any]]:
    """Rows as typed columns: a column mixing kinds (numbers and text, say) becomes text, so that Arrow and
    pandas get one type per column; lists of text stay lists, other lists and dicts become JSON."""
    names: dict[str, None] = {}
    for r in rows:
        names.update(dict.fromkeys(r))
    order = [n for n in (wanted or names) if n in names or n == "env"]
    out: dict[str, list[Any]] = {}
    for name in order:
        values = [r.get(name) for r in rows]
        kinds = {_kind(v) for v in values if v is not None}
        if name == "tags":
            out[name] = [list(v or []) for v in values]
        elif len(kinds) <= 1 and kinds <= {"num", "bool", "str"}:
            out[name] = [float(v) if k == "num" and v is not None else v
                         for v, k in zip(values, [_kind(v) for v in values], strict=True)]
        else:
            out[name] = [None if v is None else v if isinstance(v, str) else json.dumps(v) for v in values]
    return out


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "num"
    return "str" if isinstance(v, str) else "json"

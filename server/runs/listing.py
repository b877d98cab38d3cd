"""The runs listing: every env as a run dict (status, tags, config, summaries, light provenance), filtered."""

from __future__ import annotations

from typing import Any

from ..store import RunRow, Store
from .query import compile_query
from .record import run_json
from .series import summaries_by_env


def run_dict(row: RunRow, summaries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    record = run_json(row.run, full=False)
    record.pop("notes")  # the listing carries whether there are notes, not their text
    return {"env": row.env, **record, "has_notes": bool(row.run and row.run.notes), "config": row.config,
            "summaries": summaries, "best": row.best, "created": row.created, "updated": row.updated}


def list_runs(store: Store, query: str | None = None) -> list[dict[str, Any]]:
    """Runs matching `query` (QueryError if malformed), most recently updated first."""
    predicate = compile_query(query or "")  # first: a bad query costs no database read
    rows = store.list_runs()
    summaries = summaries_by_env(store.list_series(), {r.env: r.best for r in rows if r.best})
    runs = (run_dict(r, summaries.get(r.env, {})) for r in rows)
    return [run for run in runs if predicate(run)]

"""A runs query's fields checked against the runs there are: a typo (`loss.mean`, `status:banana`) is an error
naming it, not a silent 0 runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .query import RUN_FIELDS, STATUSES, FieldRef, QueryError
from .series import STATS

MAX_DEPTH = 8  # nested config levels named as paths (`optim.adam.beta1`)


def _paths(config: dict[str, Any], prefix: str, out: set[str], depth: int = 0) -> None:
    for key, value in config.items():
        path = f"{prefix}{key}"
        out.add(path)
        if isinstance(value, dict) and depth < MAX_DEPTH:
            _paths(value, f"{path}.", out, depth + 1)


def check_fields(refs: Iterable[FieldRef], runs: Iterable[dict[str, Any]]) -> None:
    """QueryError (at the field's position) for a field no run has, a statistic that does not exist or a status
    no run can have. A field some runs lack is fine: those runs just do not match."""
    refs = list(refs)
    if not refs:
        return
    config: set[str] = set()
    series: set[str] = set()
    for run in runs:
        _paths(run.get("config") or {}, "", config)
        series.update((run.get("summaries") or {}).keys())
    for ref in refs:
        low = ref.field.lower()
        if low == "status" and ref.op in (":", "=", "==", "!=") and ref.literal is not None \
                and str(ref.literal).lower() not in STATUSES:
            raise QueryError(f"unknown status {ref.literal!r}: a run is {', '.join(STATUSES)} (or null)", ref.value_pos)
        if low in RUN_FIELDS or ref.field in config or ref.field in series:
            continue
        if low.startswith("config."):
            if ref.field[len("config."):] in config:
                continue
            raise QueryError(f"unknown config key {ref.field[len('config.'):]!r}: no run has it", ref.pos)
        name, _, stat = ref.field.rpartition(".")
        if name in series:
            if stat in STATS:
                continue
            raise QueryError(f"unknown statistic {stat!r} of series {name!r}: one of {', '.join(STATS)}", ref.pos)
        raise QueryError(f"unknown field {ref.field!r}: not a run field ({', '.join(sorted(RUN_FIELDS))}), "
                         "a config key or a series of any run", ref.pos)

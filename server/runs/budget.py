"""Query evaluation with a time budget, over only the runs the caller may read."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from .query import Predicate, QueryError

QUERY_BUDGET_S = 2.0  # one query's evaluation; RE2 keeps each match linear, this bounds the sum


class QueryBudgetError(QueryError):
    def __init__(self, budget_s: float) -> None:
        super().__init__(f"the query took longer than its {budget_s:g} s budget; narrow it", 0)


def select(runs: Iterable[dict[str, Any]], predicate: Predicate, visible: Callable[[str], bool] | None = None,
           budget_s: float = QUERY_BUDGET_S) -> list[dict[str, Any]]:
    """The runs `predicate` keeps; a run `visible` refuses is never evaluated (a share token's query cannot
    probe, or time, envs it may not read); QueryBudgetError once evaluation runs past `budget_s`."""
    deadline = time.monotonic() + budget_s
    out = []
    for run in runs:
        if visible is not None and not visible(run["env"]):
            continue
        if predicate(run):
            out.append(run)
        if time.monotonic() > deadline:
            raise QueryBudgetError(budget_s)
    return out

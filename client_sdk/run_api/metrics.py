"""W&B's define_metric semantics, one mapping for paneboard.Run and the W&B importer: which declaration a key
follows, the x axis it is drawn against, its summary and its best direction."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, fields, replace
from typing import Any

GOALS = {"minimize": "min", "min": "min", "maximize": "max", "max": "max"}
AGGREGATES = ("min", "max", "mean")  # summaries other than the last value


@dataclass(frozen=True)
class MetricSpec:
    """One define_metric call; None is "not said" (a name matched by an earlier glob keeps what it said)."""

    step_metric: str | None = None
    step_sync: bool | None = None
    hidden: bool | None = None
    summary: tuple[str, ...] | None = None  # "min", "max", "mean", "last", "first", "best", "none", "copy"
    goal: str | None = None  # "min" or "max"

    @property
    def aggregate(self) -> str | None:
        """The summary shown for the metric when it is not its last value (the first one declared)."""
        first = (self.summary or ("last",))[0]
        return first if first in AGGREGATES else None

    @property
    def direction(self) -> str | None:
        """Which way is better: the goal, else a min or max summary."""
        return self.goal or next((a for a in self.summary or () if a in ("min", "max")), None)

    def over(self, earlier: MetricSpec) -> MetricSpec:
        """This declaration, with what it leaves unsaid taken from `earlier`."""
        return replace(earlier, **{f.name: getattr(self, f.name) for f in fields(self)
                                   if getattr(self, f.name) is not None})


def spec_of(step_metric: Any = None, step_sync: bool | None = None, hidden: bool | None = None,
            summary: Any = None, goal: Any = None) -> MetricSpec:
    """A MetricSpec from define_metric's arguments (summary "min,last" or a list; goal "minimize"/"maximize")."""
    if summary is None:
        aggs = None
    else:
        parts = summary.split(",") if isinstance(summary, str) else [str(s) for s in summary]
        aggs = tuple(a.strip().lower() for a in parts if a.strip())
    direction = GOALS.get(str(goal).lower()) if goal else None
    if goal and direction is None:
        raise ValueError(f'goal must be "minimize" or "maximize", got {goal!r}')
    return MetricSpec(str(step_metric) if step_metric else None, step_sync, hidden, aggs, direction)


def is_glob(name: str) -> bool:
    return any(c in name for c in "*?[")


class MetricRules:
    """The declarations of one run, in order: a key follows its own name's, else the first glob matching it."""

    def __init__(self) -> None:
        self.names: dict[str, MetricSpec] = {}
        self.globs: list[tuple[str, MetricSpec]] = []

    def define(self, name: str, spec: MetricSpec) -> None:
        if is_glob(name):
            self.globs.append((name, spec))
            return
        for pattern, earlier in self.globs:
            if fnmatch.fnmatchcase(name, pattern):
                spec = spec.over(earlier)
                break
        self.names[name] = spec

    def spec(self, key: str) -> MetricSpec | None:
        found = self.names.get(key)
        if found is not None:
            return found
        return next((s for pattern, s in self.globs if fnmatch.fnmatchcase(key, pattern)), None)

    def step_metrics(self) -> set[str]:
        return {s.step_metric for s in [*self.names.values(), *(s for _, s in self.globs)] if s.step_metric}

    def x_of(self, key: str) -> str | None:
        """The key whose value is `key`'s x, or None for the run's step. A step metric itself is drawn against
        the run's step, as W&B draws it (HF's define_metric("*", step_metric=...) matches its own step key)."""
        spec = self.spec(key)
        if spec is None or not spec.step_metric or key in self.step_metrics():
            return None
        return spec.step_metric

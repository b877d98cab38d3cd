"""A W&B run's define_metric declarations (its MetricRecords) applied to its history: each metric drawn against
its declared step metric, its best direction and summary as declared, by the SDK's own rules."""

from __future__ import annotations

from typing import Any

import numpy as np

from paneboard.run_api.metrics import MetricRules, MetricSpec

SUMMARY_FLAGS = ("min", "max", "mean", "best", "last", "none", "copy", "first")  # MetricSummary's fields
GOALS = {1: "min", 2: "max"}  # MetricRecord.MetricGoal: GOAL_MINIMIZE, GOAL_MAXIMIZE

Columns = tuple[list[float], list[float], list[float]]  # (_step, value, wall) of one history key


def define(rules: MetricRules, m: Any) -> None:
    """Add one MetricRecord to the run's rules (a copy wandb expanded from a glob adds nothing: the glob says it)."""
    name = m.name or m.glob_name
    if not name or m.expanded_from_glob:
        return
    summary = tuple(f for f in SUMMARY_FLAGS if getattr(m.summary, f)) or None
    rules.define(name, MetricSpec(step_metric=m.step_metric or None, step_sync=bool(m.options.step_sync),
                                  hidden=bool(m.options.hidden) or None, summary=summary, goal=GOALS.get(m.goal)))


def on_axis(cols: Columns, axis: Columns, sync: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(x, y, wall, points dropped) of a key drawn against a step metric: x is the metric's value in the same
    row (W&B's _step), else with step_sync its last value before; a point with neither is dropped, as W&B does."""
    steps, values, walls = (np.asarray(c, np.float64) for c in cols)
    axis_steps, axis_values = np.asarray(axis[0], np.float64), np.asarray(axis[1], np.float64)
    if not len(axis_steps):
        return np.zeros(0), np.zeros(0), np.zeros(0), len(steps)
    at = np.searchsorted(axis_steps, steps, side="right") - 1
    found = at >= 0
    if not sync:
        found &= axis_steps[np.maximum(at, 0)] == steps
    x = axis_values[at[found]]
    return x, values[found], walls[found], int((~found).sum())


def best_events(env: str, rules: MetricRules, keys: list[str]) -> list[dict[str, Any]]:
    """run_best events for the keys whose declaration says which way is better (goal, or a min/max summary)."""
    out = []
    for key in keys:
        spec = rules.spec(key)
        if spec is not None and spec.direction is not None:
            out.append({"op": "run_best", "env": env, "win": None, "series": key, "direction": spec.direction})
    return out


def hidden(rules: MetricRules, keys: list[str]) -> list[str]:
    return [k for k in keys if (s := rules.spec(k)) is not None and s.hidden]

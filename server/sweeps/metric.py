"""A trial's metric as its run logged it: the points of the run's line pane named after the metric."""

from __future__ import annotations

from ..store import Store

MAX_POINTS = 200_000  # read_series' budget: a trial reports every logged value up to this many


def metric_values(store: Store, env: str, name: str) -> list[float]:
    """The metric's values in the order they were logged ([] before the first one)."""
    pane = store.get_pane(env, name)
    if pane is None or pane.kind != "line":
        return []
    traces = store.list_traces(pane)
    trace = next((t for t in traces if t.name == name), traces[0] if traces else None)
    if trace is None:
        return []
    return [float(v) for v in store.read_series(trace, MAX_POINTS).y]

"""Line and scatter panes: named traces of (x, y) points in chunks, Visdom's update semantics."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx, TraceRecord
from .common import merged_opts, no_steps, title_of
from .contract import ReadOptions, StoredStep

KINDS = ("line", "scatter")
READ_OPTIONS = ("walls",)
UPDATE_MODES = ("append", "replace", "remove")
render_record = None  # not a stepped kind: no records for the /steps API
MAX_POINTS_PER_EVENT = 20_000_000


@dataclass(slots=True)  # no per-instance __dict__: half the objects the garbage collector tracks per event
class TraceData:
    name: str | None
    x: np.ndarray
    y: np.ndarray
    style: dict
    wall: np.ndarray | None = None  # per-point wall times once several events were merged


def _numbers(values: object, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64)  # None -> NaN: a gap, as in Plotly
    except (TypeError, ValueError):
        raise EventError(f"{what} must be a list of numbers") from None
    except OverflowError:  # an integer beyond float64 (the ingest decoder refuses these; HTTP bodies reach here)
        raise EventError(f"{what} holds a number beyond float64 range") from None
    if arr.ndim != 1:
        raise EventError(f"{what} must be a flat list of numbers, got shape {arr.shape}")
    return arr


def validate(cmd: PaneCommand, raw: dict) -> list[TraceData]:
    traces = raw.get("traces")
    if cmd.op == "update" and cmd.mode == "remove":
        if cmd.name is None:
            raise EventError("remove needs the name of the trace to delete")
        return []
    if not isinstance(traces, list) or not traces:
        raise EventError(f"{cmd.kind}: traces must be a non-empty list")
    out, total = [], 0
    for i, tr in enumerate(traces):
        if not isinstance(tr, dict):
            raise EventError(f"{cmd.kind}: traces[{i}] must be an object")
        y = _numbers(tr.get("y"), f"traces[{i}].y")
        x = _numbers(tr["x"], f"traces[{i}].x") if tr.get("x") is not None else np.arange(len(y), dtype=np.float64)
        if len(x) != len(y):
            raise EventError(f"traces[{i}]: x has {len(x)} values but y has {len(y)}")
        style = tr.get("style") or {}
        if not isinstance(style, dict):
            raise EventError(f"traces[{i}].style must be an object")
        name = tr.get("name")
        wall = None
        if tr.get("wall") is not None:  # per-point wall times (an importer's many points from many calls)
            wall = _numbers(tr["wall"], f"traces[{i}].wall")
            if len(wall) != len(x):
                raise EventError(f"traces[{i}]: wall has {len(wall)} values but x has {len(x)}")
        total += len(x)
        out.append(TraceData(None if name is None else str(name), x, y, style, wall))
    if total > MAX_POINTS_PER_EVENT:
        raise EventError(f"{cmd.kind}: more than {MAX_POINTS_PER_EVENT} points in one event")
    if cmd.op == "update" and cmd.name is not None and len(out) != 1:
        raise EventError("an update of a named trace takes exactly one trace")
    return out


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    """Points live in traces, never in the content (an archive's traces are checked by its reader)."""
    no_steps("line", steps)
    if content is not None:
        raise EventError("line/scatter: content must be null (the points are in traces)")
    return None


def check_range(cmd: PaneCommand, calls: int) -> None:
    """A coalesced append (WIRE.md §1 `s0`): one trace holding one point per call it stands for."""
    traces = cmd.payload
    if not (cmd.op == "update" and cmd.mode == "append" and len(traces) == 1):
        raise EventError("s0 is only for an append of one line/scatter trace")
    if len(traces[0].x) != calls:
        raise EventError(f"s0..s covers {calls} calls but the trace holds {len(traces[0].x)} points")


def drop_first(cmd: PaneCommand, k: int) -> PaneCommand:
    """A coalesced append without the points of its first k calls (already stored by an earlier delivery)."""
    assert cmd.first_seq is not None
    td = cmd.payload[0]
    rest = TraceData(td.name, td.x[k:], td.y[k:], td.style, None if td.wall is None else td.wall[k:])
    return dataclasses.replace(cmd, payload=[rest], first_seq=cmd.first_seq + k)


def _walls(cmd: PaneCommand, td: TraceData) -> np.ndarray:
    return td.wall if td.wall is not None else np.full(len(td.x), cmd.wall, dtype=np.float64)


def mergeable(a: PaneCommand, b: PaneCommand) -> bool:
    """Two appends that a single append of their concatenated points reproduces exactly."""
    if not (a.op == b.op == "update" and a.mode == b.mode == "append" and a.kind == b.kind
            and a.env == b.env and a.win == b.win and a.name == b.name and a.opts == b.opts):
        return False
    pa, pb = a.payload, b.payload
    if len(pa) == len(pb) == 1:  # the common case, without a generator per pair (the writer calls this per event)
        return pa[0].name == pb[0].name and pa[0].style == pb[0].style
    return len(pa) == len(pb) and all(ta.name == tb.name and ta.style == tb.style for ta, tb in zip(pa, pb, strict=True))


def merge(run: list[PaneCommand]) -> PaneCommand:
    """One command for a run of mergeable appends: the writer does one pane update instead of many."""
    first = run[0]
    traces = []
    for i, td in enumerate(first.payload):
        parts = [c.payload[i] for c in run]
        if all(p.wall is None for p in parts):  # each call's wall time repeated over its points, in one go
            wall = np.repeat(np.fromiter((c.wall for c in run), np.float64, len(run)), [len(p.x) for p in parts])
        else:
            wall = np.concatenate([_walls(c, p) for c, p in zip(run, parts, strict=True)])
        traces.append(TraceData(td.name, np.concatenate([p.x for p in parts]), np.concatenate([p.y for p in parts]),
                                td.style, wall))
    return PaneCommand(op=first.op, env=first.env, win=first.win, kind=first.kind, seq=run[-1].seq, wall=run[-1].wall,
                   mode=first.mode, name=first.name, opts=first.opts, payload=traces)


def _create(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.put_pane(cmd.env, cmd.win, cmd.kind, title_of(cmd.opts), cmd.opts, None)
    for i, td in enumerate(cmd.payload):
        name = cmd.name if cmd.name is not None and len(cmd.payload) == 1 else td.name
        trace = tx.add_trace(pane, name if name is not None else str(i + 1), td.style)
        tx.append_points(trace, td.x, td.y, _walls(cmd, td))
    deltas.pane(pane.env, pane.win, pane.version)


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    if cmd.op == "set" or (pane is None and cmd.mode == "append"):
        _create(tx, cmd, deltas)
        return
    if pane is None:
        raise EventError(f"pane {cmd.win!r} does not exist in env {cmd.env!r}")
    if pane.kind not in KINDS:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not line/scatter")
    renamed = _rename_by_legend(tx, tx.traces(pane), cmd.opts.get("legend"))
    traces = tx.traces(pane)
    pairs = _pair(traces, cmd)
    opts = merged_opts(pane, cmd)
    refetch = renamed or opts != pane.opts
    if refetch:
        pane = tx.update_pane(pane, opts=opts, title=title_of(opts))
    if cmd.mode == "remove":
        removed = pairs[0][0]
        assert removed is not None  # _pair raises for a remove of a trace the pane does not have
        tx.delete_trace(removed)
        version = tx.touch_pane(pane)
        deltas.pane(pane.env, pane.win, version)
        return
    extends = []
    for trace, td in pairs:
        if trace is None:
            assert td.name is not None  # _pair names every trace it does not match to a stored one
            trace = tx.add_trace(pane, td.name, td.style)
            refetch = True
        if cmd.mode == "replace":
            tx.replace_points(trace, td.x, td.y, _walls(cmd, td))
            refetch = True
        else:
            tx.append_points(trace, td.x, td.y, _walls(cmd, td))
            extends.append((trace, td))
    version = tx.touch_pane(pane)
    if refetch:
        deltas.pane(pane.env, pane.win, version)
        return
    for trace, td in extends:
        deltas.extend(pane.env, pane.win, version, trace.idx, trace.name, td.x, td.y)


def _rename_by_legend(tx: StoreTx, traces: list[TraceRecord], legend: object) -> bool:
    """Visdom's update_window: opts.legend renames the stored traces by position (before name pairing)."""
    if not isinstance(legend, list):
        return False
    changed = False
    for trace, name in zip(traces, legend, strict=False):
        if name is not None and str(name) != trace.name:
            tx.rename_trace(trace, str(name))
            changed = True
    return changed


def _pair(traces: list[TraceRecord], cmd: PaneCommand) -> list[tuple[TraceRecord | None, TraceData]]:
    """Match sent traces to stored ones: by name, else positionally (extra ones become new traces)."""
    if cmd.name is not None:
        found = next((t for t in traces if t.name == cmd.name), None)
        if cmd.mode == "remove":
            if found is None:
                raise EventError(f"pane {cmd.win!r} has no trace named {cmd.name!r}")
            return [(found, TraceData(cmd.name, np.empty(0), np.empty(0), {}))]
        td = cmd.payload[0]
        td.name = cmd.name
        return [(found, td)]
    pairs: list[tuple[TraceRecord | None, TraceData]] = []
    for i, td in enumerate(cmd.payload):
        if i < len(traces):
            # Visdom skips a trace whose x values are all missing: that is how its users mask traces.
            if len(td.x) and np.isnan(td.x).all():
                continue
            pairs.append((traces[i], td))
        else:
            if td.name is None or any(t.name == td.name for t in traces):
                td.name = str(i + 1)
            pairs.append((None, td))
    return pairs


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    method = "stride" if pane.kind == "scatter" else "minmax"
    walls = (options or {}).get("walls") in ("1", "true")
    out = []
    for trace in store.list_traces(pane):
        series = store.read_series(trace, budget, x0, x1, method=method)
        t = {"idx": trace.idx, "name": trace.name, "style": trace.style, "x": series.x, "y": series.y,
             "total": series.total, "downsampled": series.downsampled}
        if walls:  # TensorBoard's RELATIVE / WALL axes: the wall time of each returned point
            t["wall"] = store.read_walls(trace, series.x)
        out.append(t)
    return {"traces": out}

"""The plain records the store returns (ORM rows never leave the store): envs, panes, traces, runs, tokens..."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_GENERATED_WIN = re.compile(r"window_[0-9a-f]{8,32}")


@dataclass(frozen=True)
class EnvSummary:
    name: str
    panes: int
    points: int
    created: float
    updated: float
    forked_from: str | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "panes": self.panes, "points": self.points, "created": self.created,
                "updated": self.updated, "forked_from": self.forked_from}


@dataclass(frozen=True)
class PaneRecord:
    id: int
    env: str
    win: str
    kind: str
    title: str
    opts: dict
    content: dict | None
    position: int
    version: int
    created: float
    updated: float
    layout: dict | None = None  # {"x", "y", "w", "h"} grid cell set in the browser; None: automatic placement

    def label(self) -> str:
        """What a card shows: the title, else the win id, unless that is a generated `window_<hex>` id (Visdom's
        default): then kind and place, e.g. "line 3", which a reader can match to the page."""
        if self.title:
            return self.title
        return f"{self.kind} {self.position + 1}" if _GENERATED_WIN.fullmatch(self.win) else self.win

    def summary(self) -> dict[str, Any]:
        return {"env": self.env, "win": self.win, "kind": self.kind, "title": self.title, "label": self.label(),
                "opts": self.opts, "version": self.version, "created": self.created, "updated": self.updated,
                "layout": self.layout}


@dataclass(frozen=True)
class TraceRecord:
    id: int
    pane_id: int
    idx: int
    name: str
    style: dict
    total: int


@dataclass(frozen=True, slots=True)
class ChartLine:
    """One trace of a chart pane as a multi-metric chart lists it: its pane's win and chart title (the title, else
    the win), and the trace."""

    win: str
    title: str
    trace: TraceRecord


@dataclass(frozen=True)
class Series:
    x: np.ndarray
    y: np.ndarray
    total: int          # points stored in the trace (all of them, not only those in range)
    downsampled: bool


@dataclass(frozen=True)
class StepRow:
    """One step of a stepped pane (histogram, media, pr_curve); `idx` is its place in arrival order."""

    idx: int
    step: float
    wall: float
    data: dict | None
    blob: str | None = None


@dataclass(frozen=True)
class RunRecord:
    """An env's run record: what its job reported (status, times, provenance) and what users added."""

    env: str
    status: str | None = None       # running | finished | failed | crashed | stalled | stopped; None: no job reported (an import)
    started: float | None = None
    ended: float | None = None
    clients: tuple[str, ...] = ()   # SDK client ids still running it (the run ends when the last one does)
    tags: tuple[str, ...] = ()
    notes: str = ""
    provenance: dict | None = None
    error: str | None = None        # a failed run's traceback
    fork_from: str | None = None    # a fork: the run whose history it shares ...
    fork_step: float | None = None  # ... up to this step


@dataclass(frozen=True)
class RunRow:
    """One row of the runs listing: the env, its run record (None: never a job's) and the meta keys runs read."""

    env: str
    created: float
    updated: float
    run: RunRecord | None
    config: dict
    best: dict                      # series name -> "min" | "max": directions a user set (meta key "best")
    hparams: dict = field(default_factory=dict)  # add_hparams sessions (meta key "hparams"), for the HParams view
    color: str | None = None        # a user's colour for the run (meta key "color", "#rrggbb")


@dataclass(frozen=True)
class SeriesRow:
    """The ingest-time summary of one trace of a line pane (series.Summary's fields)."""

    env: str
    win: str
    trace: str
    ntraces: int                    # traces in its pane (names a lone trace by its pane)
    count: int
    last_x: float | None
    last_y: float | None
    min_x: float | None
    min_y: float | None
    max_x: float | None
    max_y: float | None


@dataclass(frozen=True)
class ShareTokenRecord:
    """A stored read-only token: the sha256 of the token, never the token itself."""

    id: int
    name: str
    envs: tuple[str, ...] | None  # None: every env
    created: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "envs": list(self.envs) if self.envs is not None else None,
                "created": self.created}


@dataclass(frozen=True)
class ConsoleLine:
    """One console line of a run's rank; `open`: still being written (a progress bar), may change."""

    rank: int
    n: int
    t: float
    stream: str
    text: str
    open: bool = False

    def to_json(self) -> dict[str, Any]:
        out = {"n": self.n, "t": self.t, "stream": self.stream, "text": self.text, "rank": self.rank}
        return {**out, "open": True} if self.open else out


@dataclass(frozen=True)
class OutboxRecord:
    """A notification not delivered yet: POST `payload` (an event, formatted per receiver) to `url`."""

    id: int
    key: str
    url: str
    payload: dict
    created: float
    attempts: int
    next_try: float = 0.0


@dataclass(frozen=True)
class AlertRuleRecord:
    id: int
    name: str
    query: str
    scope: str
    cooldown_s: float
    fired: dict[str, float]  # env -> when the rule last fired for it
    created: float

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))  # id, name, query, scope, cooldown_s, fired, created


@dataclass(frozen=True)
class SpaceState:
    """What the database holds and could give back (SQLite pages; zeros elsewhere)."""

    page_size: int = 0
    pages: int = 0
    free_pages: int = 0
    incremental: bool = False  # free pages can be given back a step at a time (auto_vacuum=INCREMENTAL)


@dataclass(frozen=True)
class CompactReport:
    bytes_before: int
    bytes_after: int
    seconds: float

"""What an env archive holds once parsed and checked: envs with their panes, traces, blobs, console, run record
and the artifact versions to add; shared by the archive reader and its artifact part."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..store import RunRecord


@dataclass
class ArtifactImport:
    """One version to add on import, and the archive's envs that used it."""

    name: str
    uid: str
    type: str
    files: list[dict]
    metadata: dict
    step: float | None
    producer: str | None
    aliases: list[str]
    used_by: list[str] = field(default_factory=list)



@dataclass
class TraceData:
    name: str
    style: dict
    points: np.ndarray  # (n, 3): x, y, wall


@dataclass
class PaneData:
    win: str
    kind: str
    title: str
    opts: dict
    content: dict | None
    layout: dict | None
    traces: list[TraceData] = field(default_factory=list)
    steps: list[tuple[float, float, dict | None, str | None]] = field(default_factory=list)


@dataclass
class EnvData:
    name: str
    meta: dict
    panes: list[PaneData] = field(default_factory=list)
    blobs: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # sha256 -> (mime, bytes) its panes use
    console: list[tuple[int, list[tuple[int, float, str, str, bool]]]] = field(default_factory=list)  # per rank
    artifacts: list[ArtifactImport] = field(default_factory=list)  # added with this env
    run: RunRecord | None = None  # status, times, tags, notes, provenance, error (archive_run)

    def points(self) -> int:
        return sum(len(t.points) for p in self.panes for t in p.traces)

"""Where peer importers send a run: events parsed and submitted as jobs of one importing client per series,
whose sequence numbers make a second import of the same source add nothing."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..commands.clients import IMPORTER_PREFIX
from ..commands.jobs import Submit
from .target import LocalTarget, PeerImportError, Target

__all__ = ["PeerImportError", "Sink", "Stats", "client_id", "need", "number_or_text", "tag_text"]

MAX_POINTS_PER_EVENT = 200_000  # one append stays a bounded command however long the series
MAX_RECORDS_PER_EVENT = 100     # histogram and media steps (images are the big ones)
MAX_EVENT_DATA = 16 << 20       # base64 bytes of media per event, past its first record
_TAG_BAD = re.compile(r"[\s,\x00-\x1f\x7f\"']+")


def need(module: str, extra: str) -> Any:
    """Import a peer's library, or fail with the pip line of the extra that brings it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise PeerImportError(f'reading this source needs the {extra} extra: pip install "paneboard[{extra}]"') from None


def client_id(*parts: str) -> str:
    """The importing client of one source object (a run's series, its record): stable across imports."""
    return IMPORTER_PREFIX + hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def tag_text(text: str) -> str | None:
    """A peer's tag as a paneboard tag (no spaces, commas or quotes; ≤ 64 chars); None if nothing is left."""
    out = _TAG_BAD.sub("_", text).strip("_")[:64]
    return out or None


def number_or_text(value: str) -> Any:
    """An MLflow param or a text value: a number where the text is one (so `lr < 0.01` works), else the text."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        return value
    if not math.isfinite(f) and value.strip().lower() not in ("nan", "inf", "-inf", "infinity", "-infinity"):
        return value
    return int(f) if f.is_integer() and re.fullmatch(r"[+-]?\d+", value.strip()) else f


@dataclass
class Stats:
    runs: int = 0
    points: int = 0
    skipped: int = 0       # points already imported by an earlier import
    records: int = 0       # histogram and media steps
    artifacts: int = 0     # artifact versions (MLflow runs' artifacts)
    problems: list[str] = field(default_factory=list)


class Sink:
    """Submits a run's series and record to a Target: this process's writer and store (Sink(writer, store)),
    or a running server (Sink(target=HttpTarget(url))), waiting for each job."""

    def __init__(self, writer: Submit | None = None, store: Any = None, *, target: Target | None = None,
                 blobs: Any = None) -> None:
        if target is None:
            target = LocalTarget(writer, store, blobs)  # type: ignore[arg-type]  # both given without a target
        self.writer, self.store, self.target = writer, store, target
        self.stats = Stats()

    def env_for(self, name: str, peer: str) -> str:
        """The env of a peer's run: its name, unless another run holds that name (MLflow and W&B allow two
        runs of one name), then the name and the start of the run's id. `peer` is stored in provenance."""
        for env in (name, f"{name}-{peer.rsplit(':', 1)[-1][:8]}", f"{name}-{client_id(peer)[7:19]}"):
            exists, held = self.target.env_state(env)
            if held == peer or not exists:
                return env
        raise PeerImportError(f"{name}: no free env name for run {peer}")

    def imported(self, cid: str) -> int:
        """How many items of this client an earlier import stored (its last sequence number)."""
        return self.target.stored(cid)

    def series(self, env: str, key: str, cid: str, step: np.ndarray, value: np.ndarray, wall: np.ndarray,
               xlabel: str) -> None:
        """Append the points past what an earlier import of `cid` stored; all of them are the source's, in
        order, so the count stored is where the next import resumes."""
        done = self.imported(cid)
        self.stats.skipped += min(done, len(step))
        for k in range(done, len(step), MAX_POINTS_PER_EVENT):
            end = min(k + MAX_POINTS_PER_EVENT, len(step))
            raw = {"op": "update", "mode": "append", "kind": "line", "env": env, "win": key,
                   "t": float(wall[end - 1]) if np.isfinite(wall[end - 1]) else 0.0,
                   "opts": {"title": key, "xlabel": xlabel},
                   "traces": [{"name": key, "x": np.asarray(step[k:end], np.float64),
                               "y": np.asarray(value[k:end], np.float64), "wall": np.asarray(wall[k:end], np.float64)}]}
            self._job(cid, end, [raw])
            self.stats.points += end - k

    def records(self, env: str, win: str, kind: str, cid: str, recs: list[dict[str, Any]]) -> None:
        """Append a stepped pane's records (histograms, media) past those an earlier import stored."""
        done = self.imported(cid)
        k = done
        while k < len(recs):
            chunk = _chunk(recs, k)
            wall = chunk[-1]["wall"]
            self._job(cid, k + len(chunk), [{"op": "update", "mode": "append", "kind": kind, "env": env, "win": win,
                                             "t": wall if wall == wall else 0.0, "opts": {"title": win},
                                             "records": chunk}])
            self.stats.records += len(chunk)
            k += len(chunk)

    def events(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> None:
        """Events stored once per `seq` of `cid` (a run's record: a later import with more to say bumps seq)."""
        if self.imported(cid) < seq:
            self._job(cid, seq, raws)

    def _job(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> None:
        self.stats.problems += self.target.write(cid, seq, raws)


def _chunk(recs: list[dict[str, Any]], start: int) -> list[dict[str, Any]]:
    """The records from `start` that one event carries: at most MAX_RECORDS_PER_EVENT, and past the first, no
    more than MAX_EVENT_DATA bytes of base64 (audio clips and pictures; a server takes 64 MB per request)."""
    end, size = start, 0
    while end < len(recs) and end - start < MAX_RECORDS_PER_EVENT:
        size += len(recs[end].get("data") or "")
        if size > MAX_EVENT_DATA and end > start:
            break
        end += 1
    return recs[start:end]


Progress = Callable[[int, int, str], None]

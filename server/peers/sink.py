"""Where peer importers send a run: events parsed and submitted as jobs of one importing client per series,
whose sequence numbers make a second import of the same source add nothing."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..commands.envelope import EventError
from ..commands.jobs import Job, JobResult, Submit
from ..dispatch.parse import parse_event

MAX_POINTS_PER_EVENT = 200_000  # one append stays a bounded command however long the series
MAX_RECORDS_PER_EVENT = 100     # histogram and media steps (images are the big ones)
_TAG_BAD = re.compile(r"[\s,\x00-\x1f\x7f\"']+")


class PeerImportError(RuntimeError):
    """The source cannot be imported (the message says why); also a missing optional extra."""


def need(module: str, extra: str) -> Any:
    """Import a peer's library, or fail with the pip line of the extra that brings it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise PeerImportError(f'reading this source needs the {extra} extra: pip install "paneboard[{extra}]"') from None


def client_id(*parts: str) -> str:
    """The importing client of one source object (a run's series, its record): stable across imports."""
    return "import-" + hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


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
    problems: list[str] = field(default_factory=list)


class Sink:
    """Submits a run's series and record through the writer (Submit), waiting for each job."""

    def __init__(self, writer: Submit, store: Any) -> None:
        self.writer, self.store = writer, store
        self.stats = Stats()

    def env_for(self, name: str, peer: str) -> str:
        """The env of a peer's run: its name, unless another run holds that name (MLflow and W&B allow two
        runs of one name), then the name and the start of the run's id. `peer` is stored in provenance."""
        for env in (name, f"{name}-{peer.rsplit(':', 1)[-1][:8]}", f"{name}-{client_id(peer)[7:19]}"):
            run = self.store.get_run(env)
            held = (run.provenance or {}).get("import") if run is not None else None
            if held == peer or (run is None and self.store.get_env(env) is None):
                return env
        raise PeerImportError(f"{name}: no free env name for run {peer}")

    def imported(self, cid: str) -> int:
        """How many items of this client an earlier import stored (its last sequence number)."""
        return int(self.store.client_last_seq(cid))

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
        for k in range(done, len(recs), MAX_RECORDS_PER_EVENT):
            chunk = recs[k:k + MAX_RECORDS_PER_EVENT]
            wall = chunk[-1]["wall"]
            self._job(cid, k + len(chunk), [{"op": "update", "mode": "append", "kind": kind, "env": env, "win": win,
                                             "t": wall if wall == wall else 0.0, "opts": {"title": win},
                                             "records": chunk}])
            self.stats.records += len(chunk)

    def events(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> None:
        """Events stored once per `seq` of `cid` (a run's record: a later import with more to say bumps seq)."""
        if self.imported(cid) < seq:
            self._job(cid, seq, raws)

    def _job(self, cid: str, seq: int, raws: list[dict[str, Any]]) -> None:
        commands = []
        for raw in raws:
            try:
                cmd = parse_event(raw)
            except EventError as exc:
                self.stats.problems.append(f"{raw.get('env')}: {raw.get('op')} {raw.get('win') or ''}: {exc}")
                continue
            cmd.seq = seq
            commands.append(cmd)
        box: list[JobResult] = []
        ready = threading.Event()

        def done(result: JobResult) -> None:
            box.append(result)
            ready.set()

        self.writer.submit(Job(commands, client_id=cid, ack_seq=seq, done=done))
        ready.wait()
        result = box[0]
        if result.failed:
            raise PeerImportError(f"the store failed: {result.failed}")
        self.stats.problems += [f"not stored: {e['error']}" for e in result.errors]


Progress = Callable[[int, int, str], None]

"""The store interface (StoreTx for the writer's transaction, Store for reads); its records are in records.py."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from .artifact_records import ArtifactRecord, RewindRecord
from .records import (
    AlertRuleRecord,
    ChartLine,
    CompactReport,
    ConsoleLine,
    EnvSummary,
    OutboxRecord,
    PaneRecord,
    RunRecord,
    RunRow,
    Series,
    SeriesRow,
    ShareTokenRecord,
    SpaceState,
    StepRow,
    TraceRecord,
)
from .sweep_records import MetricTrace, SweepRecord, SweepSession, TrialCounts, TrialRecord

# Env meta key of a fork: {rank (as text): the last line number copied from its source}; the fork's own job
# numbers its lines from 1 again, so they are stored after these (runs/console.py).
CONSOLE_BASE = "console_base"
# Env meta key of the colour a user chose for the env's run (runs/color.py); a fork does not copy it, so that it
# is drawn apart from its source on the charts that show both.
RUN_COLOR = "color"


class StoreError(Exception):
    """A store operation that cannot be done (missing env, wrong kind...): reported to the producer."""


class StoreTx(ABC):
    """One write transaction. Only the writer thread opens these."""

    @abstractmethod
    def client_last_seq(self, client_id: str) -> int: ...
    @abstractmethod
    def set_client_last_seq(self, client_id: str, seq: int) -> None: ...

    @abstractmethod
    def ensure_env(self, name: str) -> bool:
        """Create the env if missing; True if it was created."""
    @abstractmethod
    def delete_env(self, name: str) -> bool: ...

    @abstractmethod
    def fork_env(self, source: str, target: str) -> None:
        """A new env `target` with copies of every pane, trace, point and console line of `source` (StoreError if
        impossible); the target's meta CONSOLE_BASE holds the last copied line number of each rank, and its meta
        has no RUN_COLOR."""
    @abstractmethod
    def rename_env(self, old: str, new: str) -> None: ...
    @abstractmethod
    def env_meta(self, name: str) -> dict | None:
        """The env's meta dict (config, views), None if the env is missing."""
    @abstractmethod
    def set_env_meta(self, name: str, meta: dict) -> None: ...
    @abstractmethod
    def get_run(self, env: str) -> RunRecord | None:
        """The env's run record, None if it has none (or the env is missing)."""
    @abstractmethod
    def put_run(self, run: RunRecord) -> None:
        """Create or overwrite the run record of `run.env` (StoreError if the env is missing)."""
    @abstractmethod
    def runs_of_client(self, client_id: str) -> list[RunRecord]:
        """The runs this SDK client is still running (its id is in their `clients`)."""
    @abstractmethod
    def set_pane_layout(self, pane: PaneRecord, layout: dict | None) -> PaneRecord:
        """Store the pane's grid layout; not a data change, so the version stays."""
    @abstractmethod
    def rewind_env(self, env: str, step: float, keep: bool = True) -> list[PaneRecord]:
        """Hide every point of the env's line panes with x > step; `keep`: keep them in a rewind record (else
        they are gone: a fork's copy of history it does not share, and with them the console lines printed after
        the first of them was logged). Returns the panes changed (versions bumped)."""

    @abstractmethod
    def add_artifact(self, name: str, uid: str, type: str, files: list[dict], metadata: dict, step: float | None,
                     env: str | None, aliases: list[str]) -> ArtifactRecord:
        """A new version of `name` (numbered after its newest); "latest" and `aliases` move to it. Logging the
        same `uid` again (a replayed event) returns the version it made."""
    @abstractmethod
    def use_artifact(self, name: str, version: int, env: str) -> bool:
        """Record that the run `env` used this version; False if there is no such version."""
    @abstractmethod
    def delete_artifact(self, name: str, version: int) -> bool:
        """Drop a version, its aliases and uses ("latest" moves to the newest left); False if there is none.
        Its files' bytes stay until a cleanup finds no version naming them (artifacts/cleanup.py)."""

    @abstractmethod
    def get_pane(self, env: str, win: str) -> PaneRecord | None: ...
    @abstractmethod
    def put_pane(self, env: str, win: str, kind: str, title: str, opts: dict, content: dict | None) -> PaneRecord:
        """Create or overwrite a pane (its traces and points are dropped); bumps its version."""
    @abstractmethod
    def update_pane(self, pane: PaneRecord, *, title: str | None = None, opts: dict | None = None,
                    content: dict | None = None) -> PaneRecord:
        """Change the given fields; bumps the version."""
    @abstractmethod
    def touch_pane(self, pane: PaneRecord) -> int:
        """Bump the version (points changed); returns the new version."""
    @abstractmethod
    def delete_pane(self, env: str, win: str) -> bool: ...
    @abstractmethod
    def pane_wins(self, env: str) -> list[str]: ...

    @abstractmethod
    def traces(self, pane: PaneRecord) -> list[TraceRecord]: ...
    @abstractmethod
    def add_trace(self, pane: PaneRecord, name: str, style: dict) -> TraceRecord: ...
    @abstractmethod
    def delete_trace(self, trace: TraceRecord) -> None:
        """Delete a trace; later traces move down one index so indices stay dense."""
    @abstractmethod
    def set_trace_style(self, trace: TraceRecord, style: dict) -> None: ...
    @abstractmethod
    def rename_trace(self, trace: TraceRecord, name: str) -> None: ...
    @abstractmethod
    def append_points(self, trace: TraceRecord, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> None:
        """Cost O(len(x)) amortized, whatever the trace already holds."""
    @abstractmethod
    def replace_points(self, trace: TraceRecord, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> None: ...

    @abstractmethod
    def append_steps(self, pane: PaneRecord, first_idx: int, rows: list[tuple[float, float, dict | None, str | None]]
                     ) -> None:
        """Store (step, wall, data, blob) rows as indices first_idx, first_idx+1, ... of the pane."""

    @abstractmethod
    def clear_steps(self, pane: PaneRecord) -> None: ...

    @abstractmethod
    def put_blob(self, data: bytes, mime: str) -> str:
        """Store content-addressed bytes; returns the sha256 hex."""

    @abstractmethod
    def sweep_blobs(self) -> int:
        """Delete every blob no pane and no step record refers to any more; returns how many went."""

    @abstractmethod
    def put_console(self, env: str, rank: int, rows: list[tuple[int, float, str, str, bool]]) -> None:
        """Write console lines (n, t, stream, text, open) of the env's rank; a line already there is replaced."""

    @abstractmethod
    def console_last_lines(self, env: str) -> dict[int, int]:
        """The highest console line number stored for each rank of the env ({} for none)."""

    @property
    @abstractmethod
    def touched_envs(self) -> set[str]:
        """Envs changed in this transaction (their env-list summary is due for a refresh)."""


class Store(ABC):
    """Durable storage of envs, panes, traces, points and blobs."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[StoreTx]:
        """Commit on normal exit, roll back on an exception."""

    @abstractmethod
    def list_envs(self) -> list[EnvSummary]: ...
    @abstractmethod
    def get_env(self, name: str) -> EnvSummary | None: ...
    @abstractmethod
    def get_env_meta(self, name: str) -> dict | None:
        """The env's meta dict (config, views), None if the env is missing."""
    @abstractmethod
    def list_panes(self, env: str) -> list[PaneRecord]: ...
    @abstractmethod
    def get_pane(self, env: str, win: str) -> PaneRecord | None: ...
    @abstractmethod
    def get_run(self, env: str) -> RunRecord | None:
        """The env's run record, None if it has none (or the env is missing)."""
    @abstractmethod
    def list_runs(self, envs: list[str] | None = None) -> list[RunRow]:
        """Every env (of the given ones; None: all) with its run record (if any), config and best directions,
        newest update first."""
    @abstractmethod
    def list_series(self, envs: list[str] | None = None) -> list[SeriesRow]:
        """The summary of every trace of every line pane (of the given envs; None: all), in pane order."""
    @abstractmethod
    def active_run_clients(self) -> dict[str, list[str]]:
        """client id -> envs it is still running, for runs whose status is running or stalled."""
    @abstractmethod
    def crashed_run_clients(self, client_ids: set[str]) -> dict[str, list[str]]:
        """client id -> envs of its runs shown crashed, for the given clients (a job that came back)."""
    @abstractmethod
    def list_traces(self, pane: PaneRecord) -> list[TraceRecord]: ...
    @abstractmethod
    def read_series(self, trace: TraceRecord, budget: int, x0: float | None = None, x1: float | None = None,
                    method: str = "minmax") -> Series:
        """At most about `budget` points of the trace in [x0, x1]."""
    def read_series_many(self, reads: list[tuple[TraceRecord, float | None, str]], budget: int) -> list[Series]:
        """read_series for many traces at once ((trace, x0, method) each, x1 open), each with `budget` points:
        a chart of a sweep. A backend overrides it to read in a few queries rather than a few per trace."""
        return [self.read_series(t, budget, x0, None, method=method) for t, x0, method in reads]

    def chart_panes(self, envs: list[str], kinds: tuple[str, ...], title: str | None = None,
                    traces: bool = True, bare: bool = False) -> dict[str, list[tuple[PaneRecord, list[TraceRecord]]]]:
        """env -> its panes of these kinds (titled `title`, or untitled with that win, when given) in position
        order, each with its traces unless `traces` is false (content not read). `bare`: a backend may leave out
        the panes' opts and layout and the traces' style (a multi-metric chart of thousands of tags needs none)."""
        out = {}
        for env in envs:
            panes = [p for p in self.list_panes(env) if p.kind in kinds and (title is None or (p.title or p.win) == title)]
            out[env] = [(p, self.list_traces(p) if traces else []) for p in panes]
        return out

    def chart_lines(self, envs: list[str], kinds: tuple[str, ...], match: Callable[[str], bool],
                    glob: str | None = None) -> dict[str, list[ChartLine]]:
        """env -> every trace of its panes of these kinds whose chart title (the title, else the win) passes
        `match`: panes in position order, traces in order (as chart_panes lists them). `glob`, when `match` is
        fnmatchcase against it, lets a backend narrow what it reads."""
        listed = self.chart_panes(envs, kinds, bare=True)
        return {env: [ChartLine(pane.win, pane.title or pane.win, trace) for pane, traces in listed.get(env, [])
                      if match(pane.title or pane.win) for trace in traces] for env in envs}

    def env_metas(self, envs: list[str]) -> dict[str, dict]:
        """env -> its meta dict, for the envs that exist."""
        return {e: m for e in envs if (m := self.get_env_meta(e)) is not None}

    @abstractmethod
    def export_series(self, trace: TraceRecord) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Every stored point as (x, y, wall) blocks, in storage order."""
    @abstractmethod
    def read_walls(self, trace: TraceRecord, x: np.ndarray) -> np.ndarray:
        """The wall time of a stored point at each given x (the first one stored with that x; NaN if none)."""

    @abstractmethod
    def step_index(self, pane: PaneRecord) -> tuple[np.ndarray, np.ndarray]:
        """Step and wall of every record of a stepped pane, in arrival order."""

    @abstractmethod
    def read_steps(self, pane: PaneRecord, indices: list[int]) -> list[StepRow]: ...

    @abstractmethod
    def get_blob(self, sha256: str) -> tuple[str, bytes] | None: ...
    @abstractmethod
    def blob_envs(self, sha256: str) -> set[str]:
        """The envs whose panes or step records refer to the blob (what a share token may see it through)."""
    @abstractmethod
    def artifact_blob_envs(self, sha256: str) -> set[str]:
        """The envs that logged or used an artifact version holding a file with this sha256."""

    @abstractmethod
    def list_rewinds(self, env: str) -> list[RewindRecord]:
        """The env's rewinds, oldest first."""
    @abstractmethod
    def rewound_points(self, rewind_id: int) -> list[dict] | None:
        """The points a rewind hid: [{"win", "trace", "x", "y", "wall"}] (None: no such rewind)."""
    @abstractmethod
    def find_artifact(self, name: str, ref: str) -> ArtifactRecord | None:
        """The version of `name` that `ref` names: "vN", an alias, or "@<uid>" (the SDK's id of it)."""
    @abstractmethod
    def list_artifacts(self, *, env: str | None = None, name: str | None = None, used_by: str | None = None
                       ) -> list[ArtifactRecord]:
        """Versions logged by the run `env`, of the artifact `name`, or used by the run `used_by`; in order."""
    @abstractmethod
    def artifact_blob_refs(self) -> set[str]:
        """The sha256 of every file of every artifact version (what a cleanup must keep)."""
    @abstractmethod
    def client_last_seq(self, client_id: str) -> int: ...

    @abstractmethod
    def read_console(self, env: str, rank: int, after: int = 0, limit: int = 1000, tail: int | None = None,
                     contains: str | None = None) -> list[ConsoleLine]:
        """The rank's lines numbered above `after`, in order, at most `limit` (`tail`: the last that many);
        `contains`: only lines holding that text (any case)."""
    @abstractmethod
    def console_ranks(self, env: str) -> list[int]: ...

    # Share tokens are access records, not data: they are written in short transactions of their own, outside
    # the writer thread, so that `dash-server token create` can add one beside a running server.
    @abstractmethod
    def add_share_token(self, token_hash: str, name: str, envs: list[str] | None) -> ShareTokenRecord: ...
    @abstractmethod
    def find_share_token(self, token_hash: str) -> ShareTokenRecord | None: ...
    @abstractmethod
    def list_share_tokens(self) -> list[ShareTokenRecord]: ...
    @abstractmethod
    def delete_share_token(self, token_id: int) -> bool: ...

    # Notifications: an outbox all servers on the database share (a key goes in once) and the alert rules.
    @abstractmethod
    def enqueue_notifications(self, rows: list[tuple[str, str, dict]], now: float) -> int:
        """Add (key, url, payload) rows whose key is new; returns how many were new."""
    @abstractmethod
    def due_notifications(self, now: float, limit: int = 100, url: str | None = None) -> list[OutboxRecord]:
        """The rows due by `now`, oldest first (only `url`'s when given)."""
    @abstractmethod
    def due_notification_urls(self, now: float) -> list[str]:
        """The receivers that have a row due by `now`."""
    @abstractmethod
    def notification_counts(self) -> dict[str, int]:
        """{"pending": rows not delivered yet, "settled": delivered or given up, kept to dedup their keys}."""
    @abstractmethod
    def prune_notifications(self, settled_before: float, max_pending: int, batch: int = 10_000) -> dict[str, int]:
        """Delete the rows settled before `settled_before`, and the oldest pending beyond `max_pending` (at most
        `batch` a call); returns how many pending rows were dropped per env."""
    @abstractmethod
    def next_notification_due(self) -> float | None: ...
    @abstractmethod
    def claim_notification(self, row: OutboxRecord, until: float) -> bool:
        """Take the row for one delivery attempt (no other server on the database sends it until `until`)."""
    @abstractmethod
    def settle_notification(self, row_id: int, delivered: float | None, attempts: int, next_try: float) -> None:
        """Delivered (at `delivered`), or to retry at `next_try`."""
    @abstractmethod
    def add_alert_rule(self, name: str, query: str, scope: str, cooldown_s: float, now: float) -> AlertRuleRecord: ...
    @abstractmethod
    def list_alert_rules(self) -> list[AlertRuleRecord]: ...
    @abstractmethod
    def set_rule_fired(self, rule_id: int, fired: dict[str, float]) -> None: ...
    @abstractmethod
    def delete_alert_rule(self, rule_id: int) -> bool: ...

    # Settings shared by every server on the database, each read or written in a short transaction of its own.
    @abstractmethod
    def get_setting(self, key: str) -> Any:
        """The shared setting's value, None if unset."""
    @abstractmethod
    def put_setting(self, key: str, value: Any) -> None: ...

    # Disk space: run by the writer thread between its transactions (or by `dash-server db compact`).
    @abstractmethod
    def space_state(self) -> SpaceState: ...
    @abstractmethod
    def reclaim_space(self, max_pages: int) -> int:
        """Give up to `max_pages` free pages back to the file system; returns the free pages left to give back
        this way (0: none, or the backend gives space back on its own)."""
    @abstractmethod
    def compact(self) -> CompactReport:
        """Rewrite the database without free space (a full VACUUM); not while the server writes."""

    # Sweeps, each call a short transaction of its own outside the writer thread (sweeps/ drives them).
    @abstractmethod
    def add_sweep(self, sweep: SweepRecord) -> SweepRecord: ...
    @abstractmethod
    def get_sweep(self, sweep_id: str) -> SweepRecord | None: ...
    @abstractmethod
    def list_sweeps(self) -> list[SweepRecord]:
        """Every sweep, newest first."""
    @abstractmethod
    def sweep_trials(self, sweep_id: str, limit: int | None = None, offset: int = 0, newest: bool = False,
                     state: str | None = None) -> list[TrialRecord]:
        """The sweep's trials by number (newest first with `newest`), `limit` of them from `offset`, of one
        `state` when given (a read: nothing waits on it)."""
    @abstractmethod
    def sweep_runs(self, sweep_id: str | None = None) -> dict[str, set[str]]:
        """sweep id -> the runs (envs) of its trials, of every sweep (or of one); a sweep without runs is absent."""
    @abstractmethod
    def sweep_points(self, sweep_id: str) -> list[tuple[int, float, str]]:
        """(number, value, state) of every trial with a value, by number: a sweep's chart without its rows."""
    @abstractmethod
    def sweep_counts(self, sweep_id: str, now: float | None = None) -> TrialCounts:
        """The sweep's trials counted by state (aggregate queries, no rows read); with `now`, the agents alive."""
    @abstractmethod
    def sweep_best(self, sweep_id: str, maximize: bool) -> TrialRecord | None:
        """The finished trial with the best value (the lowest number of equals)."""
    @abstractmethod
    def sweep_trial_values(self, sweep_id: str, number: int) -> list[float]:
        """The metric values one trial reported, in step order."""
    @abstractmethod
    def metric_trace(self, env: str, win: str, name: str) -> MetricTrace | None:
        """The trace named `name` (else the first) of the env's line pane `win`, in one query; None if none."""
    @abstractmethod
    def metric_chunks(self, trace_id: int, from_seq: int) -> list[tuple[int, np.ndarray]]:
        """(seq, y values) of the trace's chunk rows from `from_seq` on, by seq, in one query: a report reads
        only the rows after the full ones it read before (full rows are never rewritten, the tail's may be)."""
    @abstractmethod
    def sweep_session(self, sweep_id: str, durable: bool = True) -> AbstractContextManager[SweepSession | None]:
        """A transaction on one sweep (None if there is no such sweep): sessions on one sweep run one at a time,
        on every server of the database; its `sweep.version` is one more than the last session's. Not durable:
        its commit does not wait for the disk (a power cut may lose it, a crash of the server does not)."""

    @abstractmethod
    def close(self) -> None: ...

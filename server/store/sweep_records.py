"""The plain records of sweeps and their trials that the store returns, and the sweep session's interface."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .records import TraceRecord

# Trial states: queued (waiting for an agent), running, finished (the program exited 0), stopped (the pruner or a
# user stopped it), failed (the program exited non-zero), crashed (its agent stopped answering).
TRIAL_STATES = ("queued", "running", "finished", "stopped", "failed", "crashed")
SWEEP_STATES = ("running", "paused", "stopping", "finished", "cancelled")


@dataclass(frozen=True)
class SweepRecord:
    """One sweep: its parsed W&B configuration and where it stands."""

    id: str
    project: str | None
    name: str
    config: dict
    state: str
    created: float
    updated: float
    version: int = 0                # bumped by every sweep session: tells a cached study it is out of date

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "project": self.project, "name": self.name, "config": self.config,
                "state": self.state, "created": self.created, "updated": self.updated,
                "method": self.config.get("method"), "metric": self.config.get("metric")}


@dataclass(frozen=True)
class TrialRecord:
    """One trial of a sweep; `number` is also its Optuna trial number, and `run` the env its program logs to."""

    sweep_id: str
    number: int
    state: str
    params: dict                    # Optuna's values (what its samplers see)
    config: dict                    # what the program gets as its config
    run: str | None = None
    agent: str | None = None
    value: float | None = None
    steps: int = 0                  # metric values reported, as the run logged them (the last one's Optuna step)
    last: float | None = None       # the last of them (all of them: SweepSession.values)
    system_attrs: dict = field(default_factory=dict)  # Optuna's own bookkeeping (samplers', pruners')
    reason: str | None = None
    retry_of: int | None = None
    created: float = 0.0
    started: float | None = None
    ended: float | None = None
    deadline: float | None = None   # a running trial whose agent has not been heard of by then is crashed

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "state": self.state, "config": self.config, "run": self.run,
                "agent": self.agent, "value": self.value, "steps": self.steps,
                "reason": self.reason, "retry_of": self.retry_of, "created": self.created,
                "started": self.started, "ended": self.ended}


@dataclass(frozen=True)
class TrialCounts:
    """A sweep's trials counted by state, in one aggregate query; `fresh` leaves out crashed trials' retries."""

    by_state: dict[str, int]
    fresh: int = 0                  # trials that are not a crashed trial's second chance
    fresh_running: int = 0          # of those, the ones running now (their agent may still die)
    agents_alive: int = 0           # agents running a trial whose deadline has not passed (when asked with `now`)

    @property
    def total(self) -> int:
        return sum(self.by_state.values())

    def of(self, state: str) -> int:
        return self.by_state.get(state, 0)

    def to_json(self) -> dict[str, int]:
        return {s: self.by_state.get(s, 0) for s in TRIAL_STATES}


@dataclass(frozen=True)
class MetricTrace:
    """A trial's run's metric trace, with what changes when the run logs a point: its count and last step."""

    trace: TraceRecord
    last_x: float | None
    last_y: float | None

    @property
    def mark(self) -> tuple[int, int, float | None, float | None]:
        """Equal marks of one trace: no point was logged in between (a report need not read the series)."""
        return (self.trace.id, self.trace.total, self.last_x, self.last_y)


class SweepSession(ABC):
    """One transaction on one sweep: every server's sessions on the same sweep run one at a time."""

    sweep: SweepRecord

    @abstractmethod
    def trials(self) -> list[TrialRecord]:
        """Every trial of the sweep, by number (only to rebuild a study: the other calls read less)."""
    @abstractmethod
    def trial(self, number: int) -> TrialRecord | None:
        """One trial's row."""
    @abstractmethod
    def counts(self) -> TrialCounts: ...
    @abstractmethod
    def first_queued(self) -> TrialRecord | None:
        """The oldest trial waiting for an agent."""
    @abstractmethod
    def expired(self, now: float) -> list[TrialRecord]:
        """Running trials whose agent has not been heard of by their deadline, by number."""
    @abstractmethod
    def put_trial(self, trial: TrialRecord) -> None:
        """Insert the trial, or overwrite the one with its number."""
    @abstractmethod
    def values(self) -> dict[int, list[float]]:
        """Every trial's metric values by number, in step order (only to rebuild a study)."""
    @abstractmethod
    def add_values(self, number: int, first_step: int, values: list[float]) -> None:
        """Append a trial's new metric values, values[i] as step first_step + i: the ones before stay unread."""
    @abstractmethod
    def put_progress(self, trial: TrialRecord) -> None:
        """Write only what a report changes of a running trial: its count and last value, Optuna's attrs, deadline."""
    @abstractmethod
    def put_deadline(self, trial: TrialRecord) -> None:
        """Write only a running trial's deadline: a report that read no new metric value."""
    @abstractmethod
    def metric_trace(self, env: str, name: str) -> MetricTrace | None:
        """Store.metric_trace of the run `env`'s pane `name`, in this session (its connection, its snapshot)."""
    @abstractmethod
    def metric_chunks(self, trace_id: int, from_seq: int) -> list[tuple[int, np.ndarray]]:
        """Store.metric_chunks, in this session."""
    @abstractmethod
    def set_state(self, state: str) -> None: ...

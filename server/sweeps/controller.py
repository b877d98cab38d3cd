"""The sweep controller: hands trials to agents, hears their reports, prunes and ends trials, one session each."""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..store import Store
from ..store.sweep_records import SweepRecord, SweepSession, TrialCounts, TrialRecord
from .config import Spec, parse
from .metric import MetricCursor, read_values
from .search import SweepStudy, program_values

ACTIONS = {"pause": "paused", "resume": "running", "stop": "stopping", "cancel": "cancelled"}
RETRY_S = 1.0  # what a paused (or for now exhausted) sweep tells its agents to wait before asking again


class SweepError(Exception):
    """A request the controller refuses: `status` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _deadline(now: float, heartbeat_s: float) -> float:
    """An agent that misses three heartbeats (and at least two seconds) is taken for dead."""
    return now + max(3 * heartbeat_s, 2.0)


class SweepController:
    """One per server. `set_run_status(env, status, reason)` marks a trial's run (its writer's command)."""

    def __init__(self, store: Store, set_run_status: Callable[[str, str, str], None] | None = None) -> None:
        self.store = store
        self.set_run_status = set_run_status
        self._studies: dict[str, SweepStudy] = {}
        self._lock = threading.Lock()  # Optuna studies are not thread-safe; sessions are short
        # (sweep, trial) -> where its last report read the metric and the values reported by then: a heartbeat
        # whose run logged nothing since reads no points, and one whose run did reads only the new chunk rows.
        self._seen: dict[tuple[str, int], tuple[MetricCursor, int]] = {}

    def warm(self) -> int:
        """Build the study of every sweep that may still hand out trials, from its rows (at the server's start,
        so the first agent's suggestion does not pay for it); the number built."""
        built = 0
        for sweep in self.store.list_sweeps():
            if sweep.state in ("running", "paused", "stopping"):
                with self._session(sweep.id):
                    built += 1
        return built

    # -- creating and reading ------------------------------------------------------------------------
    def create(self, raw: Any, project: str | None = None) -> SweepRecord:
        parse(raw)  # SweepConfigError names what is wrong (a config that is not even a mapping too), storing nothing
        project = project or raw.get("project") or "sweeps"
        if not isinstance(project, str) or not project or "/" in project or len(project) > 128:
            raise SweepError(400, "project must be a name of at most 128 characters without '/'")
        now = time.time()
        name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        return self.store.add_sweep(SweepRecord(id=secrets.token_hex(4), project=project, name=name or "",
                                                config=raw, state="running", created=now, updated=now))

    def describe(self, sweep_id: str, limit: int | None = None, offset: int = 0, newest: bool = False
                 ) -> dict[str, Any]:
        """The sweep with its counts and best trial (aggregate queries), its agents, every trial's value (for the
        chart) and one page of its trials: `limit` rows from `offset`, by number (newest first with `newest`)."""
        now = time.time()
        running = self.store.sweep_trials(sweep_id, state="running")  # as many as agents at work
        if any((t.deadline or 0) < now for t in running):
            with self._session(sweep_id) as (session, study):
                self._reap(session, study, now)
            running = self.store.sweep_trials(sweep_id, state="running")
        sweep = self.store.get_sweep(sweep_id)
        if sweep is None:
            raise SweepError(404, f"no sweep {sweep_id!r}")
        trials = self.store.sweep_trials(sweep_id, limit, offset, newest)
        return {**sweep.to_json(), **overview(self.store, sweep, now),
                "agents": [{"agent": t.agent, "trial": t.number, "deadline": t.deadline} for t in running],
                "points": [{"number": n, "value": v, "state": s} for n, v, s in self.store.sweep_points(sweep_id)],
                "offset": offset, "trials": [t.to_json() for t in trials]}

    # -- agents --------------------------------------------------------------------------------------
    def next_trial(self, sweep_id: str, agent: str, heartbeat_s: float) -> dict[str, Any]:
        """Claim the next trial for `agent`: {"trial": {...}} or {"trial": None, "state", "retry_s"}."""
        with self._session(sweep_id) as (session, study):
            now = time.time()
            self._reap(session, study, now)
            state = session.sweep.state
            if state == "paused":
                return {"trial": None, "state": state, "retry_s": RETRY_S}
            if state != "running":
                return {"trial": None, "state": state}
            base = session.first_queued()
            counts = session.counts()
            if base is None and self._exhausted(study.spec, counts):
                if counts.fresh_running:
                    # A running trial whose agent dies is queued again: this agent may be the one to run it.
                    return {"trial": None, "state": state, "retry_s": RETRY_S}
                if not counts.of("running"):
                    session.set_state("finished")
                return {"trial": None, "state": session.sweep.state}
            number, params = study.ask()
            if base is not None and base.number != number:  # Optuna pops the oldest waiting trial: ours too
                raise SweepError(500, f"sweep {sweep_id}: Optuna gave trial {number}, queued was {base.number}")
            run = f"{session.sweep.project}/{sweep_id}-{number}"
            trial = TrialRecord(sweep_id=sweep_id, number=number, state="running", params=params,
                                config=program_values(study.spec, params), run=run, agent=agent,
                                system_attrs=study.system_attrs(number), retry_of=base.retry_of if base else None,
                                created=base.created if base else now, started=now,
                                deadline=_deadline(now, heartbeat_s))
            session.put_trial(trial)
            spec = study.spec
            return {"trial": {**trial.to_json(), "project": session.sweep.project, "program": spec.program,
                              "command": list(spec.command), "metric": spec.metric}}

    def heartbeat(self, sweep_id: str, number: int, agent: str, heartbeat_s: float) -> dict[str, Any]:
        """The agent's trial is alive: report the metric's new values; {"action": "continue" | "stop", ...}."""
        # Not durable: a heartbeat writes a deadline and metric values that the next one reads again from the
        # run (stored durably by the writer); a prune lost to a power cut leaves a trial that is reaped and retried.
        with self._session(sweep_id, durable=False) as (session, study):
            trial = self._own(session, number, agent)
            if trial.state != "running":
                return {"action": "stop", "state": trial.state, "reason": trial.reason or f"trial is {trial.state}"}
            now = time.time()
            if session.sweep.state == "cancelled":
                self._end(session, study, trial, "stopped", f"sweep {sweep_id} was cancelled", now)
                return {"action": "stop", "state": "stopped", "reason": f"sweep {sweep_id} was cancelled"}
            running = trial
            trial, pruned = self._report(session, study, running)
            trial = dataclasses.replace(trial, deadline=_deadline(now, heartbeat_s))
            if pruned:
                reason = f"pruned by hyperband at step {trial.steps}: {study.spec.metric}={trial.last:.6g}"
                self._end(session, study, trial, "stopped", reason, now)
                return {"action": "stop", "state": "stopped", "reason": reason}
            if trial.steps == running.steps:
                session.put_deadline(trial)  # no new value: the row's values and Optuna's attrs stand
            else:
                session.put_progress(trial)
            return {"action": "continue", "state": "running", "steps": trial.steps}

    def finish(self, sweep_id: str, number: int, agent: str, exit_code: int | None) -> dict[str, Any]:
        """The trial's program ended (exit_code None: the agent stopped it as told)."""
        with self._session(sweep_id) as (session, study):
            trial = self._own(session, number, agent)
            now = time.time()
            if trial.state != "running":  # stopped by the pruner or a user: it keeps that end
                if trial.ended is None:
                    session.put_trial(dataclasses.replace(trial, ended=now))
                return trial.to_json()
            trial, _ = self._report(session, study, trial, prune=False)
            if exit_code == 0:
                value = trial.last if trial.steps else None
                trial = dataclasses.replace(trial, value=value)
                reason = None if value is not None or study.spec.metric is None else \
                    f"the run logged no {study.spec.metric}"
                trial = self._end(session, study, trial, "finished", reason, now)
            else:
                trial = self._end(session, study, trial, "failed", f"the program exited with {exit_code}", now)
            self._maybe_done(session)
            return trial.to_json()

    def set_state(self, sweep_id: str, action: Any) -> dict[str, Any]:
        if not isinstance(action, str) or action not in ACTIONS:
            raise SweepError(400, f"action must be one of {', '.join(ACTIONS)}; got {action!r}")
        with self._session(sweep_id) as (session, _study):
            state = session.sweep.state
            if state in ("finished", "cancelled"):
                raise SweepError(409, f"sweep {sweep_id} is {state}: it cannot {action}")
            if action == "resume" and state != "paused":
                raise SweepError(409, f"sweep {sweep_id} is {state}, not paused")
            session.set_state(ACTIONS[action])
            if action == "stop":
                self._maybe_done(session)
            return session.sweep.to_json()

    # -- the pieces ----------------------------------------------------------------------------------
    @contextmanager
    def _session(self, sweep_id: str, durable: bool = True) -> Iterator[tuple[SweepSession, SweepStudy]]:
        """The sweep's session and its warm study. The study holds every trial's values in memory (what the
        samplers and the pruner read), so a session reads only the rows it changes; it is rebuilt from the rows
        on the first call after a start, or when another server (or a rolled-back session) changed the sweep."""
        with self._lock, self.store.sweep_session(sweep_id, durable) as session:
            if session is None:
                raise SweepError(404, f"no sweep {sweep_id!r}")
            study = self._studies.get(sweep_id)
            if study is None or study.version != session.sweep.version - 1:
                study = SweepStudy(sweep_id, parse(session.sweep.config), session.trials(), session.values(),
                                   session.sweep.version)
            self._studies.pop(sweep_id, None)
            yield session, study
            study.version = session.sweep.version
            self._studies[sweep_id] = study  # kept only once the session went through without an error

    def _own(self, session: SweepSession, number: int, agent: str) -> TrialRecord:
        trial = session.trial(number)
        if trial is None:
            raise SweepError(404, f"no trial {number}")
        if trial.agent != agent:
            raise SweepError(409, f"trial {number} belongs to agent {trial.agent!r}, not {agent!r}")
        return trial

    def _report(self, session: SweepSession, study: SweepStudy, trial: TrialRecord, prune: bool = True
                ) -> tuple[TrialRecord, bool]:
        """The trial with the metric values its run logged since the last report; whether the pruner stops it.
        The trial comes back unchanged (the same object) when the run logged nothing since."""
        metric = study.spec.metric
        if metric is None or trial.run is None:
            return trial, False
        key, had = (trial.sweep_id, trial.number), trial.steps
        seen = self._seen.get(key)
        # The stored count too: a session rolled back after the last read (or another server's report) reads all.
        cursor = seen[0] if seen is not None and seen[1] == had else None
        found = session.metric_trace(trial.run, metric)  # in the session: one connection for the whole report
        if found is None or (cursor is not None and cursor.mark == found.mark):
            return trial, False
        # The mark was taken first: a point logged meanwhile changes the next report's mark, and is read then.
        first, values, cursor = read_values(session, found, cursor)
        new = values[had - first:] if had >= first else read_values(session, found)[1][had:]
        self._seen[key] = (cursor, had + len(new))
        if not new:
            return trial, False
        session.add_values(trial.number, had + 1, new)  # appended: the values before stay where they are
        pruned = study.report(trial.number, new, had)
        attrs = study.system_attrs(trial.number) if study.prunes else trial.system_attrs
        trial = dataclasses.replace(trial, steps=had + len(new), last=new[-1], system_attrs=attrs)
        return trial, pruned and prune

    def _end(self, session: SweepSession, study: SweepStudy, trial: TrialRecord, state: str, reason: str | None,
             now: float) -> TrialRecord:
        study.tell(trial.number, state, trial.value)
        self._seen.pop((trial.sweep_id, trial.number), None)
        trial = dataclasses.replace(trial, state=state, reason=reason, ended=now,
                                    system_attrs=study.system_attrs(trial.number))
        session.put_trial(trial)
        if state == "stopped" and trial.run and self.set_run_status is not None:
            self.set_run_status(trial.run, state, reason or "")
        return trial

    def _reap(self, session: SweepSession, study: SweepStudy, now: float) -> None:
        """Running trials whose agent went silent are crashed; each is queued again once."""
        for t in session.expired(now):
            self._end(session, study, t, "crashed", f"agent {t.agent} stopped answering", now)
            if t.retry_of is None:
                number = study.enqueue(t.params)
                session.put_trial(TrialRecord(sweep_id=t.sweep_id, number=number, state="queued", params=t.params,
                                              config=t.config, retry_of=t.number, created=now,
                                              system_attrs=study.system_attrs(number)))

    def _exhausted(self, spec: Spec, counts: TrialCounts) -> bool:
        fresh = counts.fresh  # a crashed trial's second chance is not a new one
        if spec.run_cap is not None and fresh >= spec.run_cap:
            return True
        return spec.method == "grid" and fresh >= spec.grid_size

    def _maybe_done(self, session: SweepSession) -> None:
        if session.sweep.state == "stopping" and not session.counts().of("running"):
            session.set_state("finished")


def overview(store: Store, sweep: SweepRecord, now: float) -> dict[str, Any]:
    """What the list of sweeps shows of one, from aggregate queries: counts, best trial, agents alive."""
    spec = parse(sweep.config)
    counts = store.sweep_counts(sweep.id, now)
    best = None
    if spec.metric is not None and counts.of("finished"):
        b = store.sweep_best(sweep.id, spec.goal == "maximize")
        if b is not None:
            best = {"number": b.number, "run": b.run, "value": b.value, "config": b.config}
    return {"counts": counts.to_json(), "total": counts.total, "best": best, "agents_alive": counts.agents_alive,
            "runs_query": f"tags:sweep-{sweep.id}"}

"""The notifier thread: committed changes and alert rules become outbox rows, POSTed until each receiver took them.

At least once: a row stays in the outbox (a table, so a restart resumes it) until its receiver answered 2xx,
retried with backoff while it is down (at most a second apart for the first minutes, so a receiver that comes
back hears within about a second). Once per event: each row has a key (event + receiver) enqueued only once,
whichever server on the database saw the event and however often; a settled row is kept KEEP_SETTLED_S for that,
then deleted. Each receiver has a delivery thread of its own (a hung one delays no other), and the outbox holds at
most MAX_PENDING undelivered rows: beyond that the oldest are dropped and counted in their run's alerts pane.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..commands.envelope import Command
from ..commands.jobs import Job, Submit
from ..store import AlertRuleRecord, OutboxRecord, Store
from . import payload
from .delivery import Workers, post
from .events import Links, dropped_row, events_of, interesting

log = logging.getLogger("paneboard.server.notify")
TICK = 0.2             # seconds between looks at the outbox while rows wait
RULES_EVERY = 1.0      # seconds between evaluations of the alert rules
FAST_RETRY_FOR = 300.0  # a row younger than this is retried at most a second apart; then every 30 s
GIVE_UP_AFTER = 3 * 86400.0
POST_TIMEOUT = 5.0
# A delivered row's key still dedups an event seen again (another server, a late replay) this long.
KEEP_SETTLED_S = float(os.environ.get("PANEBOARD_NOTIFY_KEEP_SETTLED_S") or 3600.0)
# Undelivered rows kept while receivers are down; the oldest beyond are dropped (the variable: tests, benches).
MAX_PENDING = int(os.environ.get("PANEBOARD_NOTIFY_MAX_PENDING") or 10_000)
PRUNE_EVERY = float(os.environ.get("PANEBOARD_NOTIFY_PRUNE_EVERY_S") or 10.0)


def backoff(attempts: int, age: float) -> float:
    return min(1.0, 0.25 * 2 ** max(0, attempts - 1)) if age < FAST_RETRY_FOR else 30.0


class Notifier:
    def __init__(self, store: Store, targets: list[str], public_url: str,
                 runs: Callable[[str], list[dict[str, Any]]], writer: Submit | None = None) -> None:
        self.store = store
        self.targets = [payload.split_target(t) for t in targets]
        self.links = Links(public_url)
        self.runs = runs  # a run query -> the matching runs (the runs index)
        self.inbox: deque[dict[str, Any]] = deque(maxlen=100_000)
        self.wake = threading.Event()
        self.stopping = False
        self.thread: threading.Thread | None = None
        self.last_rules = 0.0
        self.delivered = 0  # rows delivered by this process (diagnostics, tests)
        self.panes_seen: set[tuple[str, str]] = set()  # new panes already looked through for a NaN
        self.last_status: dict[str, str] = {}  # env -> the run status last heard (a stall is told once per stall)
        self.alert_rows: dict[str, int] = {}  # env -> rows of its alerts pane already turned into events
        self.writer = writer  # where the count of dropped rows goes (the env's alerts pane)
        self.workers = Workers()
        self.max_pending, self.keep_settled_s, self.prune_every = MAX_PENDING, KEEP_SETTLED_S, PRUNE_EVERY
        self.last_prune = 0.0
        self.dropped = 0  # pending rows dropped by this process for the cap

    # -- writer thread --------------------------------------------------------------------------------
    def note(self, messages: list[dict[str, Any]]) -> None:
        picked = [m for m in messages if interesting(m)]
        if picked:
            self.inbox.extend(picked)
            self.wake.set()

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="paneboard-notifier", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopping = True
        self.wake.set()
        if self.thread is not None:
            self.thread.join(POST_TIMEOUT + 2)
            self.thread = None
        self.workers.join(POST_TIMEOUT + 2)

    def _run(self) -> None:
        while not self.stopping:
            try:
                self._enqueue_noted()
                now = time.time()
                if now - self.last_rules >= RULES_EVERY:
                    self.last_rules = now
                    self.check_rules(now)
                if now - self.last_prune >= self.prune_every:
                    self.last_prune = now
                    self.prune(now)
                self._deliver_due()
            except Exception:  # a bad row or a database hiccup: log it, keep the thread
                log.exception("notifier pass failed")
            self.wake.wait(TICK)
            self.wake.clear()

    # -- events -> outbox -----------------------------------------------------------------------------
    def _enqueue_noted(self) -> None:
        rows = []
        while self.inbox:
            m = self.inbox.popleft()
            for ev in events_of(m, self.store, self.links, self.panes_seen, self.last_status, self.alert_rows):
                rows += [(f"{ev['key']}>{url}"[:255], url, {**ev, "format": fmt}) for fmt, url in self.targets]
        if rows:
            self.store.enqueue_notifications(rows, time.time())

    def check_rules(self, now: float) -> None:
        """Each rule's matching runs notify, once per cool-down per run (its last firing is kept per run)."""
        for rule in self.store.list_alert_rules():
            query = f"({rule.scope}) and ({rule.query})" if rule.scope else rule.query
            try:
                matched = self.runs(query)
            except ValueError as exc:  # stored before the language changed: say so, keep the others going
                log.warning("alert rule %d: %s", rule.id, exc)
                continue
            fired = dict(rule.fired)
            rows = []
            for run in matched:
                env = run["env"]
                if now - fired.get(env, 0.0) < rule.cooldown_s:
                    continue
                fired[env] = now
                ev = self._rule_event(rule, env, run, now)
                rows += [(f"{ev['key']}>{url}"[:255], url, {**ev, "format": fmt}) for fmt, url in self.targets]
            if fired != rule.fired:
                self.store.enqueue_notifications(rows, now)
                self.store.set_rule_fired(rule.id, fired)

    def _rule_event(self, rule: AlertRuleRecord, env: str, run: dict[str, Any], now: float) -> dict[str, Any]:
        name = rule.name or rule.query
        fields = {"rule": rule.query, "status": str(run.get("status") or "-")}
        if rule.scope:
            fields["scope"] = rule.scope
        for series, s in list((run.get("summaries") or {}).items())[:8]:
            if series in rule.query:
                fields[series] = f"last {s.get('last')}, min {s.get('min')}, max {s.get('max')}"
        return payload.event("rule", env, f"Run {env} matched alert rule {name}", fields, self.links.run(env),
                             f"rule:{rule.id}:{env}:{now:.3f}")

    # -- outbox -> receivers --------------------------------------------------------------------------
    def _deliver_due(self) -> None:
        now = time.time()
        for url in self.store.due_notification_urls(now):
            if self.stopping:
                return
            if not self.workers.busy(url):  # still sending earlier rows (or hung): its rows wait, no one else
                rows = self.store.due_notifications(now, url=url)
                self.workers.start(url, functools.partial(self._deliver, rows))

    def _deliver(self, rows: list[OutboxRecord]) -> None:
        """One receiver's due rows in order; the first that fails ends the pass (the rest wait for the next)."""
        try:
            for row in rows:
                if self.stopping or not self._deliver_one(row):
                    return
        except Exception:  # a database hiccup: the rows stay due
            log.exception("notification delivery failed")

    def _deliver_one(self, row: OutboxRecord) -> bool:
        if not self.store.claim_notification(row, time.time() + POST_TIMEOUT + 5):
            return True  # another server on the database is sending it
        body, headers = payload.request(row.payload.get("format", "json"), row.payload)
        status = post(row.url, body, headers, POST_TIMEOUT)
        now = time.time()
        attempts = row.attempts + 1
        if status is not None and 200 <= status < 300:
            self.delivered += 1
            self.store.settle_notification(row.id, now, attempts, now)
            return True
        if status is not None and 300 <= status < 400 and attempts == 1:
            log.warning("notification receiver %s answered a redirect (%d): not followed", _host(row.url), status)
        if (status is not None and 300 <= status < 500 and status not in (408, 425, 429) and attempts >= 3) \
                or now - row.created > GIVE_UP_AFTER:
            log.warning("notification %s to %s given up after %d attempts (last answer: %s)", row.key,
                        _host(row.url), attempts, status)
            self.store.settle_notification(row.id, -now, attempts, now)  # negative: given up
            return True
        if row.attempts == 0:
            log.warning("cannot notify %s (%s); retrying", _host(row.url), status or "unreachable")
        self.store.settle_notification(row.id, None, attempts, now + backoff(attempts, now - row.created))
        return False

    # -- outbox size ----------------------------------------------------------------------------------
    def prune(self, now: float) -> dict[str, int]:
        """Delete settled rows past their dedup time; drop the oldest pending beyond the cap, counted per env."""
        dropped = self.store.prune_notifications(now - self.keep_settled_s, self.max_pending)
        if dropped:
            total = sum(dropped.values())
            self.dropped += total
            log.warning("notification outbox over %d rows (receivers down?): dropped the %d oldest",
                        self.max_pending, total)
            if self.writer is not None:
                commands: list[Command] = [dropped_row(self.store, env, n, self.max_pending) for env, n in sorted(dropped.items()) if env]
                try:
                    self.writer.submit(Job(commands))
                except Exception:  # the writer is stopping: the log line above still says it
                    log.debug("dropped-notification counts not written", exc_info=True)
        return dropped


def _host(url: str) -> str:
    return urlsplit(url).netloc or url[:40]

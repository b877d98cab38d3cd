"""The notifier thread: committed changes and alert rules become outbox rows, POSTed until each receiver took them.

At least once: a row stays in the outbox (a table, so a restart resumes it) until its receiver answered 2xx,
retried with backoff while it is down (at most a second apart for the first minutes, so a receiver that comes
back hears within about a second). Once per event: each row has a key (event + receiver) enqueued only once,
whichever server on the database saw the event and however often.
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..store import AlertRuleRecord, Store
from . import payload
from .events import Links, events_of, interesting

log = logging.getLogger("paneboard.server.notify")
TICK = 0.2             # seconds between looks at the outbox while rows wait
RULES_EVERY = 1.0      # seconds between evaluations of the alert rules
FAST_RETRY_FOR = 300.0  # a row younger than this is retried at most a second apart; then every 30 s
GIVE_UP_AFTER = 3 * 86400.0
POST_TIMEOUT = 5.0


def backoff(attempts: int, age: float) -> float:
    return min(1.0, 0.25 * 2 ** max(0, attempts - 1)) if age < FAST_RETRY_FOR else 30.0


class Notifier:
    def __init__(self, store: Store, targets: list[str], public_url: str,
                 runs: Callable[[str], list[dict[str, Any]]]) -> None:
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

    def _run(self) -> None:
        while not self.stopping:
            try:
                self._enqueue_noted()
                now = time.time()
                if now - self.last_rules >= RULES_EVERY:
                    self.last_rules = now
                    self.check_rules(now)
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
            for ev in events_of(m, self.store, self.links, self.panes_seen, self.last_status):
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
        for row in self.store.due_notifications(time.time()):
            if self.stopping:
                return
            if not self.store.claim_notification(row, time.time() + POST_TIMEOUT + 5):
                continue  # another server on the database is sending it
            body, headers = payload.request(row.payload.get("format", "json"), row.payload)
            status = self._post(row.url, body, headers)
            now = time.time()
            attempts = row.attempts + 1
            if status is not None and 200 <= status < 300:
                self.delivered += 1
                self.store.settle_notification(row.id, now, attempts, now)
            elif (status is not None and 400 <= status < 500 and status not in (408, 425, 429) and attempts >= 3) \
                    or now - row.created > GIVE_UP_AFTER:
                log.warning("notification %s to %s given up after %d attempts (last answer: %s)", row.key,
                            _host(row.url), attempts, status)
                self.store.settle_notification(row.id, -now, attempts, now)  # negative: given up
            else:
                if row.attempts == 0:
                    log.warning("cannot notify %s (%s); retrying", _host(row.url), status or "unreachable")
                self.store.settle_notification(row.id, None, attempts, now + backoff(attempts, now - row.created))

    @staticmethod
    def _post(url: str, body: bytes, headers: dict[str, str]) -> int | None:
        req = urllib.request.Request(url, data=body, method="POST", headers={"User-Agent": "paneboard", **headers})
        host = urlsplit(url).hostname or ""
        handlers = [urllib.request.ProxyHandler({})] if host in ("localhost", "::1") or host.startswith("127.") else []
        try:
            with urllib.request.build_opener(*handlers).open(req, timeout=POST_TIMEOUT) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except (OSError, ValueError):
            return None


def _host(url: str) -> str:
    return urlsplit(url).netloc or url[:40]

"""Crash watch: a run whose SDK connection dropped without a clean end, and did not come back, is crashed.

A job that exits cleanly sends run_end (Client.close_connection or atexit) before its socket closes. A job
killed with SIGKILL, or a machine that went away, just drops the connection; the SDK reconnects within seconds
when only the network or the server blinked, so a run is called crashed only after `grace` seconds without any
connection of its client. After a server restart every running run gets the same grace to reconnect.

Several servers on one PostgreSQL database see each other's clients: each one says which clients it holds
(a `clients_seen` message through the peers' LISTEN/NOTIFY, on every hello and every grace/3 seconds), and a
client seen anywhere within the grace is not crashed. They all use one grace, the database's (the setting
`crash_grace_s`): a server given --crash-grace stores it there, and every watch re-reads it every few seconds.

A crashed run's client that connects again (its job was only cut off longer than the grace) makes it running.
A crashed run ends at its client's last contact (when its connection dropped), not when the grace ran out, so a
job killed after 7 s shows 7 s, not 7 s plus the grace.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from ..commands.jobs import Job, Submit
from ..store import Store
from .ops import status_command

log = logging.getLogger("paneboard.runs")

CHECK_EVERY = 0.5  # seconds
GRACE_KEY = "crash_grace_s"  # the shared setting every server on the database takes its grace from
DEFAULT_GRACE = 30.0
REREAD_EVERY = 2.0  # seconds between reads of the shared grace
SEEN_TYPE = "clients_seen"  # the peer message naming the clients a server holds (browsers never get it)
SEEN_BATCH = 100            # client ids per message: NOTIFY payloads stay under PostgreSQL's 8000 bytes


def valid_grace(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e9


class RunWatch:
    def __init__(self, writer: Submit, store: Store, grace: float | None = None,
                 announce: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        if grace is not None and not valid_grace(grace):
            raise ValueError(f"the crash grace must be a positive number of seconds, got {grace!r}")
        self.writer, self.store = writer, store
        self.wanted = grace                    # this server's --crash-grace (None: the database's)
        self.grace = grace if grace is not None else DEFAULT_GRACE  # until the database's is read
        self.announce = announce               # publishes to the other servers (None: this one is alone)
        self._live: dict[str, int] = {}        # client id -> open ingest connections
        self._due: dict[str, float] = {}       # client id -> when it counts as gone (monotonic)
        self._left: dict[str, float] = {}      # client id -> wall time its last connection dropped (its run's end)
        self._elsewhere: dict[str, float] = {}  # client id -> when another server last said it holds it
        self._fresh: set[str] = set()           # connected since the last announcement
        self._back: set[str] = set()            # connected since the last check for crashed runs they ran
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="paneboard-run-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def connected(self, client_id: str) -> None:
        with self._lock:
            self._live[client_id] = self._live.get(client_id, 0) + 1
            self._due.pop(client_id, None)
            self._left.pop(client_id, None)
            self._fresh.add(client_id)  # announced by the watch thread: a NOTIFY would block the event loop
            self._back.add(client_id)

    def note(self, messages: list[dict[str, Any]]) -> None:
        """Hub listener: other servers' clients_seen messages (our own come back too: they change nothing)."""
        now = time.monotonic()
        for m in messages:
            if m.get("type") == SEEN_TYPE and isinstance(m.get("clients"), list):
                with self._lock:
                    for cid in m["clients"]:
                        if isinstance(cid, str) and cid not in self._live:
                            self._elsewhere[cid] = now
                            self._due.pop(cid, None)

    def _announce(self, clients: list[str]) -> None:
        if self.announce is None or not clients:
            return
        try:
            for i in range(0, len(clients), SEEN_BATCH):
                self.announce([{"type": SEEN_TYPE, "clients": clients[i:i + SEEN_BATCH]}])
        except Exception:
            log.exception("could not tell the other servers which clients this one holds")

    def disconnected(self, client_id: str) -> None:
        with self._lock:
            left = self._live.get(client_id, 0) - 1
            if left > 0:
                self._live[client_id] = left
                return
            self._live.pop(client_id, None)
            self._due[client_id] = time.monotonic() + self.grace
            self._left[client_id] = time.time()

    def _agree_grace(self) -> float:
        """Store this server's grace as everyone's, or take the stored one; returns the grace runs left running
        were promised (the larger of the old and the new: a job another server holds keeps the old one's)."""
        try:
            stored = self.store.get_setting(GRACE_KEY)
            if self.wanted is not None and stored != self.wanted:
                self.store.put_setting(GRACE_KEY, self.wanted)
                if valid_grace(stored):
                    log.warning("crash grace of every server on this database: %g s (was %g s)", self.wanted, stored)
        except Exception:
            log.exception("could not read or store the shared crash grace")
            return self.grace
        if self.wanted is None and valid_grace(stored):
            self.grace = float(stored)
        return max(self.grace, float(stored)) if valid_grace(stored) else self.grace

    def _reread_grace(self) -> None:
        try:
            stored = self.store.get_setting(GRACE_KEY)
        except Exception:
            log.debug("could not read the shared crash grace", exc_info=True)
            return
        if valid_grace(stored) and float(stored) != self.grace:
            log.info("crash grace: %g s, the database's (set by the last server given --crash-grace)", stored)
            self.grace = float(stored)

    def _run(self) -> None:
        promised = self._agree_grace()
        try:  # runs left running by the last server: their clients get the grace to reconnect
            orphans = self.store.active_run_clients()
        except Exception:
            log.exception("could not read the running runs")
            orphans = {}
        with self._lock:
            for cid in orphans:
                if cid not in self._live:
                    self._due.setdefault(cid, time.monotonic() + promised)
                    self._left.setdefault(cid, time.time())  # the last contact this server can vouch for
        said = read = time.monotonic()
        while not self._stop.wait(CHECK_EVERY):
            now = time.monotonic()
            if now - read >= REREAD_EVERY:
                self._reread_grace()
                read = now
            every = now - said >= self.grace / 3
            if every:
                said = now
            self.check(now, announce_all=every)

    def check(self, now: float, announce_all: bool = False) -> None:
        """One round of the watch (`now`: monotonic): crash the runs of clients gone longer than the grace,
        make running the crashed runs of clients connected now, and announce the clients held here."""
        with self._lock:
            expired = [cid for cid, at in self._due.items() if at <= now]
            for cid in expired:
                del self._due[cid]
            # A client another server holds (or held within the grace) is alive there.
            gone = [cid for cid in expired if now - self._elsewhere.get(cid, -1e18) > self.grace]
            left = {cid: self._left.pop(cid, None) for cid in expired}
            self._elsewhere = {c: t for c, t in self._elsewhere.items() if now - t <= 2 * self.grace}
            tell, self._fresh = (list(self._live) if announce_all else list(self._fresh)), set()
            # Only a client still connected is back: one that came and went again between two rounds has not
            # come back, and reviving its run would undo the crash its drop is due.
            back, self._back = {cid for cid in self._back if cid in self._live}, set()
        if gone:
            self._crash({cid: left.get(cid) or time.time() for cid in gone})
        if back:
            self._revive(back)
        if self.announce is not None and tell:
            self._announce(tell)

    def _revive(self, clients: set[str]) -> None:
        try:
            crashed = self.store.crashed_run_clients(clients)
        except Exception:
            log.exception("could not read the crashed runs")
            return
        commands = [status_command(env, "running", cid, time.time()) for cid, envs in crashed.items() for env in envs]
        if commands:
            log.info("run(s) %s running again: their job reconnected", ", ".join(sorted({c.env for c in commands})))
            self.writer.submit(Job(list(commands)))

    def _crash(self, clients: dict[str, float]) -> None:
        """Crash the runs of `clients` (client id -> wall time of its last contact, the runs' end)."""
        try:
            running = self.store.active_run_clients()
        except Exception:
            log.exception("could not read the running runs")
            return
        commands = [status_command(env, "crashed", cid, left) for cid, left in clients.items()
                    for env in running.get(cid, ())]
        if commands:
            log.warning("run(s) %s crashed: their job's connection dropped without a clean end",
                        ", ".join(sorted({c.env for c in commands})))
            self.writer.submit(Job(list(commands)))

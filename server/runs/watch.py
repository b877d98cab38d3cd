"""Crash watch: a run whose SDK connection dropped without a clean end, and did not come back, is crashed.

A job that exits cleanly sends run_end (Client.close_connection or atexit) before its socket closes. A job
killed with SIGKILL, or a machine that went away, just drops the connection; the SDK reconnects within seconds
when only the network or the server blinked, so a run is called crashed only after `grace` seconds without any
connection of its client. After a server restart every running run gets the same grace to reconnect.

Several servers on one PostgreSQL database see each other's clients: each one says which clients it holds
(a `clients_seen` message through the peers' LISTEN/NOTIFY, on every hello and every grace/3 seconds), and a
client seen anywhere within the grace is not crashed.
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
SEEN_TYPE = "clients_seen"  # the peer message naming the clients a server holds (browsers never get it)
SEEN_BATCH = 100            # client ids per message: NOTIFY payloads stay under PostgreSQL's 8000 bytes


class RunWatch:
    def __init__(self, writer: Submit, store: Store, grace: float = 30.0,
                 announce: Callable[[list[dict[str, Any]]], None] | None = None) -> None:
        self.writer, self.store, self.grace = writer, store, grace
        self.announce = announce               # publishes to the other servers (None: this one is alone)
        self._live: dict[str, int] = {}        # client id -> open ingest connections
        self._due: dict[str, float] = {}       # client id -> when it counts as gone (monotonic)
        self._elsewhere: dict[str, float] = {}  # client id -> when another server last said it holds it
        self._fresh: set[str] = set()           # connected since the last announcement
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
            self._fresh.add(client_id)  # announced by the watch thread: a NOTIFY would block the event loop

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

    def _run(self) -> None:
        try:  # runs left running by the last server: their clients get the grace to reconnect
            orphans = self.store.active_run_clients()
        except Exception:
            log.exception("could not read the running runs")
            orphans = {}
        with self._lock:
            for cid in orphans:
                if cid not in self._live:
                    self._due.setdefault(cid, time.monotonic() + self.grace)
        said = time.monotonic()
        while not self._stop.wait(CHECK_EVERY):
            now = time.monotonic()
            with self._lock:
                expired = [cid for cid, at in self._due.items() if at <= now]
                for cid in expired:
                    del self._due[cid]
                # A client another server holds (or held within the grace) is alive there.
                gone = [cid for cid in expired if now - self._elsewhere.get(cid, -1e18) > self.grace]
                self._elsewhere = {c: t for c, t in self._elsewhere.items() if now - t <= 2 * self.grace}
                every = now - said >= self.grace / 3
                tell, self._fresh = (list(self._live) if every else list(self._fresh)), set()
            if gone:
                self._crash(gone)
            if every:
                said = now
            if self.announce is not None and tell:
                self._announce(tell)

    def _crash(self, clients: list[str]) -> None:
        try:
            running = self.store.active_run_clients()
        except Exception:
            log.exception("could not read the running runs")
            return
        commands = [status_command(env, "crashed", cid, time.time()) for cid in clients for env in running.get(cid, ())]
        if commands:
            log.warning("run(s) %s crashed: their job's connection dropped without a clean end",
                        ", ".join(sorted({c.env for c in commands})))
            self.writer.submit(Job(list(commands)))

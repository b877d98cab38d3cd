"""Crash watch: a run whose SDK connection dropped without a clean end, and did not come back, is crashed.

A job that exits cleanly sends run_end (Client.close_connection or atexit) before its socket closes. A job
killed with SIGKILL, or a machine that went away, just drops the connection; the SDK reconnects within seconds
when only the network or the server blinked, so a run is called crashed only after `grace` seconds without any
connection of its client. After a server restart every running run gets the same grace to reconnect.
"""

from __future__ import annotations

import logging
import threading
import time

from ..ingest.writer import Job, Writer
from ..store import Store
from .ops import status_command

log = logging.getLogger("paneboard.runs")

CHECK_EVERY = 0.5  # seconds


class RunWatch:
    def __init__(self, writer: Writer, store: Store, grace: float = 30.0) -> None:
        self.writer, self.store, self.grace = writer, store, grace
        self._live: dict[str, int] = {}        # client id -> open ingest connections
        self._due: dict[str, float] = {}       # client id -> when it counts as gone (monotonic)
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
        while not self._stop.wait(CHECK_EVERY):
            now = time.monotonic()
            with self._lock:
                gone = [cid for cid, at in self._due.items() if at <= now]
                for cid in gone:
                    del self._due[cid]
            if gone:
                self._crash(gone)

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

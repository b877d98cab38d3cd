"""Server-side stall alert: an SDK connection that stays open but goes silent for N× its usual interval.

The SDK's own watchdog (client_sdk/hooks/alerts.py) catches a training loop that stops stepping while the
process still runs. It cannot speak for a process that is frozen whole (SIGSTOP, a C call holding the GIL, a
hung NFS read): then nothing at all arrives while the socket stays open. Only the server can see that. A socket
that closes is a job that ended (or died), which is not a stall.
"""

from __future__ import annotations

import html
import logging
import statistics
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from ..commands.jobs import Job, Submit
from ..dispatch.parse import parse_event
from ..runs.ops import status_command
from ..store import Store

log = logging.getLogger("paneboard.stall")

ALERTS_WIN = "alerts"   # the pane the SDK's alerts write to (the env page's banner reads it)
MIN_INTERVALS = 10      # batches seen before a connection's rhythm is trusted
CHECK_EVERY = 0.5       # seconds between checks


@dataclass
class _Conn:
    envs: set[str] = field(default_factory=set)
    last: float = 0.0
    intervals: deque[float] = field(default_factory=lambda: deque(maxlen=50))
    alerted: bool = False


class StallWatch:
    """Fed by the ingest socket: batch() for every batch received, closed() when the socket closes."""

    def __init__(self, writer: Submit, store: Store, factor: float = 10.0, min_s: float = 60.0) -> None:
        self.writer, self.store, self.factor, self.min_s = writer, store, factor, min_s
        self._conns: dict[object, _Conn] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="paneboard-stall-watch", daemon=True)

    @property
    def enabled(self) -> bool:
        return self.min_s > 0

    def start(self) -> None:
        if self.enabled:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def batch(self, conn: object, envs: set[str]) -> None:
        envs = {e for e in envs if e}
        if not self.enabled or not envs:
            return
        now = time.monotonic()
        with self._lock:
            c = self._conns.setdefault(conn, _Conn())
            if c.last:
                c.intervals.append(now - c.last)
            c.last = now
            c.envs |= envs
            resumed, c.alerted = c.alerted, False
        if resumed:  # the run that was called stalled sends again
            self.writer.submit(Job([status_command(env, "running", None, time.time()) for env in sorted(envs)]))

    def closed(self, conn: object) -> None:
        with self._lock:
            self._conns.pop(conn, None)

    def threshold(self, c: _Conn) -> float | None:
        """Seconds of silence that count as a stall for this connection (None until its rhythm is known)."""
        if len(c.intervals) < MIN_INTERVALS:
            return None
        return max(self.min_s, self.factor * statistics.median(c.intervals))

    def _run(self) -> None:
        while not self._stop.wait(CHECK_EVERY):
            now = time.monotonic()
            due: list[tuple[set[str], float, float]] = []
            with self._lock:
                for c in self._conns.values():
                    limit = self.threshold(c)
                    if limit is not None and not c.alerted and now - c.last > limit:
                        c.alerted = True  # once per silence: the next batch re-arms it
                        due.append((set(c.envs), now - c.last, statistics.median(c.intervals)))
            for envs, silent, usual in due:
                self._alert(envs, silent, usual)

    def _alert(self, envs: set[str], silent: float, usual: float) -> None:
        message = (f"no data for {silent:.0f} s while the job's connection stays open (usually every "
                   f"{usual:.3g} s): the training process may be hung or frozen")
        log.warning("stall alert for %s: %s", ", ".join(sorted(envs)), message)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        row = f"{stamp} · server · <b>stalled</b>: {html.escape(message)}"
        commands = []
        for env in sorted(envs):
            try:
                fresh = self.store.get_pane(env, ALERTS_WIN) is None
            except Exception:  # the alert matters more than its header
                fresh = False
            head = "<b>alerts</b> (time · step · rule: message)<br>" if fresh else ""
            commands.append(parse_event({"op": "update", "kind": "text", "mode": "append", "env": env,
                                         "win": ALERTS_WIN, "opts": {"title": "alerts"}, "content": head + row}))
            commands.append(status_command(env, "stalled", None, time.time()))
        self.writer.submit(Job(commands))

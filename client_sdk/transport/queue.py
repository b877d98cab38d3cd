"""Background delivery of SDK events: the bounded queue, sequence numbers, flush and close (callers' side)."""

from __future__ import annotations

import atexit
import json
import logging
import os
import sys
import threading
import time
import uuid
import weakref
from collections import deque
from pathlib import Path
from typing import Any

from ..convert import dumps, fast_dumps
from .sender import SenderMixin, _Batch
from .spool import Spool
from .spool import default_dir as default_spool_dir
from .spooling import SpoolingMixin

log = logging.getLogger("paneboard")


_LIVE: weakref.WeakSet[Transport] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for t in list(_LIVE):
        t._reinit_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Transport(SenderMixin, SpoolingMixin):
    """One background sender thread + one websocket per Client; callers only encode and append to a deque.

    Events are JSON-encoded in the caller (orjson: ~0.4 µs) and queued as bytes: a backlog of dicts and lists
    would be scanned by every full garbage collection (measured: 3-4x slower calls during a backlog).
    """

    def __init__(self, url: str, *, max_queue: int = 100_000, exit_timeout: float = 10.0,
                 batch_events: int = 2000, batch_bytes: int = 4 << 20, window: int = 8,
                 max_event_bytes: int = 32 << 20, linger: float = 0.002, client_id: str | None = None,
                 spool_dir: str | os.PathLike | bool | None = None, spool_path: str | os.PathLike | None = None,
                 spool_max_bytes: int = 512 << 20, token: str | None = None) -> None:
        if int(max_queue) < 1:
            raise ValueError(f"max_queue must be >= 1, got {max_queue!r}")
        self.url = url
        self.token = token  # dash-server --token / PANEBOARD_TOKEN; sent as a bearer header
        # Spool: None -> the default folder, False -> off; spool_path + client_id resume a given spool (sync).
        self._given_client_id = client_id
        self._spool_dir = spool_dir
        self._spool_path = spool_path
        self.spool_max_bytes = int(spool_max_bytes)
        self.max_queue = int(max_queue)
        self.exit_timeout = float(exit_timeout)
        self.batch_events = batch_events
        self.batch_bytes = batch_bytes
        self.window = window  # unacked batches allowed in flight (pipelining bound)
        self.max_event_bytes = max_event_bytes
        self.linger = linger
        self._local = threading.local()  # .deferred: this thread's puts do not wake the sender (see deferred())
        self._init_state()
        _LIVE.add(self)
        self._start()

    def _init_state(self) -> None:
        self._exiting = False  # set by the atexit flush: no sender thread is started after it
        self.client_id = self._given_client_id or uuid.uuid4().hex
        path = self._spool_path
        if path is None and self._spool_dir is not False:
            path = Path(self._spool_dir or default_spool_dir()) / f"{self.client_id}.spool"
        self._spool = Spool(Path(path), self.url, self.client_id, self.spool_max_bytes) if path else None
        self._spilling_first: int | None = None  # oldest seq being written to the spool right now
        self._to_spill: deque[tuple[int, bytes]] = deque()  # overflow handed to the sender for the spool
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)  # flush() waits on it; acks/drops notify it
        self._wake = threading.Event()  # wakes the sender; set by callers only when it is idle
        self._idle = False
        self._queue: deque[tuple[int, bytes]] = deque()  # enqueued, not yet taken into a batch
        self._inflight: deque[_Batch] = deque()  # sent (or being sent), not yet acked
        self._seq = 0
        self._dropped = 0  # overflow drops since the last report
        self._dropped_total = 0
        self._drop_warned = False
        self._gen = 0  # connection generation: a stale ack reader must not mark a newer socket dead
        self._conn_ok = False  # a websocket is up and welcomed
        self._server_error = False  # the server reported an error with batches in flight
        self._ever_connected = False
        self._warned = False  # warned about this outage already
        self._stop = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        self._stop = self._closed = False
        if self._exiting or sys.is_finalizing():
            # After our exit flush (e.g. a suspended watched-DataLoader loop finalized during shutdown logs its
            # last window): Thread.start() would block forever there, so the events stay queued, unsent.
            self._closed = True
            return
        atexit.register(self._atexit)
        if self._thread is not None and self._thread.is_alive():
            return  # a closing sender that has not exited yet simply carries on
        try:
            self._thread = threading.Thread(target=self._run, name="paneboard-sender", daemon=True)
            self._thread.start()
        except RuntimeError:  # interpreter shutdown: no new threads; the events stay queued, unsent
            self._closed = True

    def _reinit_after_fork(self) -> None:
        # A forked child (e.g. a DataLoader worker) inherits locks possibly held by the parent's sender
        # thread and the parent's client id: reusing either would deadlock or get its events deduplicated.
        self._given_client_id = self._spool_path = None
        self._init_state()

    # ------------------------------------------------------------------------------------ caller side

    def put(self, event: dict[str, Any]) -> int:
        """Encode, assign the next seq and enqueue (dropping the oldest when full); returns the seq."""
        try:
            data = fast_dumps(event)
        except TypeError:
            try:
                data = dumps(event)
            except (TypeError, ValueError) as e:
                raise TypeError(f"paneboard: cannot encode this call as JSON: {e}") from None
        # orjson's result keeps its whole oversized output buffer (about a page): queued as it is, every event
        # would cost a fresh page (a 100k backlog: ~400 MB RSS, and a page fault per call that made calls 2x
        # slower). A right-sized copy frees that buffer at once for the next call to reuse.
        data = bytes(memoryview(data))
        if len(data) > self.max_event_bytes:
            raise ValueError(f"paneboard: event of {len(data) / 1e6:.1f} MB exceeds the "
                             f"{self.max_event_bytes / 1e6:.0f} MB limit")
        if self._thread is None or self._closed:
            self._start()  # first use after a fork, or use after close_connection()
        with self._lock:
            s = self._seq + 1
            self._seq = s
            q = self._queue
            if len(q) >= self.max_queue and self._spool is not None and not self._conn_ok \
                    and len(self._to_spill) < 4 * self.max_queue:
                self._to_spill.append(q.popleft())  # the sender writes it to disk within ~50 ms
            elif len(q) >= self.max_queue:
                q.popleft()
                self._dropped += 1
                self._dropped_total += 1
                self._cond.notify_all()
            q.append((s, data))
            wake = self._idle and not getattr(self._local, "deferred", False)
            if wake:
                self._idle = False
        if wake:
            self._wake.set()
        return s

    def deferred(self) -> _Deferred:
        """Context: events put inside it ride the next batch instead of waking the sender (sent within ~1 s).

        For the training hooks' telemetry: each wake-up costs the training thread a few GIL hand-offs and thread
        switches (~0.5 ms per send on a small VM, 1.6% of a 0.75 ms step when a window was sent every 50 steps).
        """
        return _Deferred(self._local)

    def pending_events(self) -> list[dict[str, Any]]:
        """Decoded copies of every event not yet acknowledged, oldest first (for tests and diagnostics)."""
        with self._lock:
            items = list(self._to_spill) + [it for b in self._inflight for it in b.items] + list(self._queue)
        return [{"s": s, **json.loads(d)} for s, d in items]

    def pending_count(self) -> int:
        with self._lock:
            return self._pending_locked()

    @property
    def connected(self) -> bool:
        return self._conn_ok

    @property
    def dropped(self) -> int:
        """Events dropped so far because the buffer was full."""
        return self._dropped_total

    def _pending_locked(self) -> int:
        return len(self._to_spill) + len(self._queue) + sum(len(b.items) for b in self._inflight)

    def _done_locked(self, target: int) -> bool:
        # Everything with s <= target has been acked (or dropped): the oldest outstanding event is newer.
        to_spill = self._to_spill[0][0] if self._to_spill else None
        for first in (self._spilling_first, to_spill, self._spool.first_s if self._spool else None):
            if first is not None and first <= target:
                return False
        if self._inflight and self._inflight[0].items[0][0] <= target:
            return False
        return not (self._queue and self._queue[0][0] <= target)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every event enqueued before this call is acked; False on timeout. Never raises."""
        try:
            self._wake.set()  # deferred events wait for no timer now
            with self._cond:
                target = self._seq
                if self._done_locked(target):
                    return True
                if self._closed:
                    return False
                return self._cond.wait_for(lambda: self._done_locked(target) or self._closed, timeout) \
                    and self._done_locked(target)
        except Exception:  # flush must never raise into a training loop
            log.debug("paneboard: flush failed", exc_info=True)
            return False

    def close(self, timeout: float | None = None, unreachable_grace: float = 1.0) -> bool:
        """Flush (bounded; gives up after `unreachable_grace` s without a connection), then stop the thread."""
        if self._closed:
            return True
        timeout = self.exit_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        self._wake.set()  # cut a backoff sleep short: try to connect right now
        with self._cond:
            target = self._seq
            down_since: float | None = None
            while not self._done_locked(target):
                now = time.monotonic()
                if now >= deadline:
                    break
                if self._conn_ok:
                    down_since = None
                elif down_since is None:
                    down_since = now
                elif now - down_since >= unreachable_grace:
                    break
                self._cond.wait(min(0.05, deadline - now))
            ok = self._done_locked(target)
            left = self._pending_locked()
            self._stop = self._closed = True
            self._cond.notify_all()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            # Connected: give it time to send a close frame; otherwise it may sit in connect() (daemon anyway).
            self._thread.join(timeout=1.5 if ok else 0.2)
        try:
            atexit.unregister(self._atexit)
        except Exception:  # interpreter shutdown
            pass
        if not ok and not self.spool_pending():
            log.warning("paneboard: %d event(s) were not delivered to %s", left, self.url)
        if self._dropped_total:
            log.warning("paneboard: %d event(s) in total were dropped because the buffer was full "
                        "(max_queue=%d)", self._dropped_total, self.max_queue)
        return ok

    def _atexit(self) -> None:
        self._exiting = True
        try:
            self.close(self.exit_timeout)
        except Exception:  # never fail the interpreter's exit
            pass


class _Deferred:
    """Transport.deferred(): marks the calling thread's puts as not urgent (re-entrant)."""

    __slots__ = ("_local", "_prev")

    def __init__(self, local: threading.local) -> None:
        self._local = local
        self._prev = False

    def __enter__(self) -> None:
        self._prev = getattr(self._local, "deferred", False)
        self._local.deferred = True

    def __exit__(self, *exc: object) -> None:
        self._local.deferred = self._prev

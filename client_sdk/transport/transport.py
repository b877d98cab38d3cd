"""The callers' side of delivery: encode and enqueue without blocking, flush, close, fork and exit handling."""

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..convert import dumps, fast_dumps
from ..protocol import MAX_BATCH_EVENTS
from .outbox import Outbox
from .points import Data, encoded
from .rows import RowSchema
from .sender import Sender
from .spool import Spool
from .spool import default_dir as default_spool_dir

log = logging.getLogger("paneboard")

_LIVE: weakref.WeakSet[Transport] = weakref.WeakSet()


def live_transports() -> list[Transport]:
    """Every Transport of this process not yet garbage-collected, closed or not."""
    return list(_LIVE)


def _after_fork_in_child() -> None:
    for t in live_transports():
        t._reinit_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# The most a close without a timeout (interpreter exit, close_connection()) waits while the server keeps making
# progress: a busy server still storing a short job's run is waited for, a hung one is not waited on forever.
EXIT_CAP_S = 120.0
PING_EVERY_S = 0.5  # how often such a close asks a connected server whether it is still there


class Transport:
    """One background sender thread + one websocket per Client; callers only encode and append to a deque.

    Events are JSON-encoded in the caller and queued as bytes: a backlog of dicts and lists would be scanned by
    every full garbage collection. Nothing a caller passes raises here: an event that cannot be encoded, or is
    too big, is rejected with a warning and counted in `rejected`, like the events the server refuses.
    """

    def __init__(self, url: str, *, max_queue: int = 100_000, exit_timeout: float = 10.0,
                 batch_events: int = 2000, batch_bytes: int = 4 << 20, window: int = 8,
                 max_event_bytes: int = 32 << 20, linger: float = 0.002, client_id: str | None = None,
                 spool_dir: str | os.PathLike | bool | None = None, spool_path: str | os.PathLike | None = None,
                 spool_max_bytes: int = 512 << 20, token: str | None = None, offline: bool = False) -> None:
        if int(max_queue) < 1:
            raise ValueError(f"max_queue must be >= 1, got {max_queue!r}")
        self.url = url
        self.token = token
        # Spool: None -> the default folder, False -> off; spool_path + client_id resume a given spool (sync).
        self._given_client_id = client_id
        self._spool_dir = spool_dir
        self._spool_path = spool_path
        self.spool_max_bytes = int(spool_max_bytes)
        self.max_queue = int(max_queue)
        self.exit_timeout = float(exit_timeout)
        self.batch_events = min(batch_events, MAX_BATCH_EVENTS)  # the server refuses bigger batches whole
        self.batch_bytes = batch_bytes
        self.window = window
        self.max_event_bytes = max_event_bytes
        self.linger = linger
        self.offline = offline  # never connect: every event goes to the spool, for `paneboard sync` later
        self._local = threading.local()  # .deferred: this thread's puts do not wake the sender (see deferred())
        self._local_rejected = 0
        self.on_drop: Callable[[int], None] | None = None  # set by Client: drops become an alert in the env
        # Producers the sender thread polls for events (console capture): they buffer in memory, it ships.
        self.sources: list[Callable[[bool], None]] = []
        self._init_state()
        _LIVE.add(self)
        self._start()

    def _init_state(self) -> None:
        self._exiting = False  # set by the atexit flush: no sender thread is started after it
        self.client_id = self._given_client_id or uuid.uuid4().hex
        path = self._spool_path
        if path is None and self._spool_dir is not False:
            given = self._spool_dir
            folder = Path(given) if isinstance(given, (str, os.PathLike)) else default_spool_dir()
            path = folder / f"{self.client_id}.spool"
        spool = Spool(Path(path), self.url, self.client_id, self.spool_max_bytes) if path else None
        self.outbox = Outbox(self.max_queue, spool, batch_events=self.batch_events, batch_bytes=self.batch_bytes,
                             window=self.window)
        if spool is not None and len(spool):
            self.outbox.seq = spool.last_s  # a resumed spool (sync): new events, if any, come after it
        self.sender = Sender(self.outbox, self.url, self.client_id, self.token, self.linger, self._dropped_report)
        self.sender.collect = self.collect
        self.sender.offline = self.offline
        self._closed = False

    @property
    def spool_folder(self) -> Path | None:
        """The folder spools go to (None: spooling is off)."""
        if self._spool_dir is False:
            return None
        given = self._spool_dir
        return Path(given) if isinstance(given, (str, os.PathLike)) else default_spool_dir()

    def _start(self) -> None:
        self.sender.stop = self._closed = False
        if self._exiting or sys.is_finalizing():
            # After our exit flush (e.g. a suspended watched-DataLoader loop finalized during shutdown logs its
            # last window): Thread.start() would block forever there, so the events stay queued, unsent.
            self._closed = True
            return
        atexit.register(self._atexit)
        thread = self.sender.thread
        if thread is not None and thread.is_alive():
            return  # a closing sender that has not exited yet simply carries on
        try:
            self.sender.start()
        except RuntimeError:  # interpreter shutdown: no new threads; the events stay queued, unsent
            self._closed = True

    def _dropped_report(self, n: int) -> None:
        if self.on_drop is not None:
            self.on_drop(n)

    def _reinit_after_fork(self) -> None:
        # A forked child (e.g. a DataLoader worker) inherits locks possibly held by the parent's sender
        # thread and the parent's client id: reusing either would deadlock or get its events deduplicated.
        self._given_client_id = self._spool_path = None
        self.sources = []  # the parent's console stays the parent's: a child's lines would reuse its numbers
        self._init_state()

    # ------------------------------------------------------------------------------------ caller side

    def put(self, event: dict[str, Any]) -> int:
        """Encode, assign the next seq and enqueue; returns the seq (0: rejected here, with a warning)."""
        try:
            # orjson's result keeps its whole oversized output buffer (about a page): a right-sized copy frees
            # that buffer at once for the next call to reuse, so a backlog costs what its events weigh.
            data = bytes(memoryview(fast_dumps(event)))
        except TypeError:  # numpy scalars and other objects orjson does not take: the general encoder
            data = b""
        sender = self.sender
        if not data or len(data) > self.max_event_bytes or len(data) > sender.server_max_event_bytes:
            try:
                data = self._encode(event) if not data else self._checked(data)
            except Exception as e:  # nothing a caller logs may raise into the training loop
                self._reject_locally(str(e))
                return 0
        return self._enqueue(data)

    def put_point(self, prefix: bytes, x: float, y: float, wall: float) -> int:
        """Enqueue one point appended to one trace (`prefix`: points.prefix of its event); returns the seq.

        Kept unencoded until sent: a run of them goes out as one columnar event (points.py)."""
        return self._enqueue((prefix, x, y, wall))

    def put_row(self, schema: RowSchema, x: float, values: tuple, wall: float) -> int:
        """Enqueue one log() row: one value per pane of `schema`, all at `x`; it takes schema.k sequence numbers
        (returns the last). Split into its panes' points on the sender thread (rows.py)."""
        return self._enqueue((schema, x, values, wall), schema.k)

    def _enqueue(self, data: Data, seqs: int = 1) -> int:
        sender = self.sender
        if sender.thread is None or self._closed:
            self._start()  # first use after a fork, or use after close_connection()
        ob = self.outbox
        with ob.lock:
            s, spill = ob.put_locked(data, seqs)
            wake = spill or (sender.idle and not getattr(self._local, "deferred", False))
            if wake:
                sender.idle = False
        if wake:
            sender.wake.set()
        return s

    def _encode(self, event: dict[str, Any]) -> bytes:
        try:
            data = dumps(event)
        except (TypeError, ValueError, OverflowError) as e:
            raise ValueError(f"cannot encode this call as JSON: {e}") from None
        return self._checked(bytes(memoryview(data)))

    def _checked(self, data: bytes) -> bytes:
        limit = min(self.max_event_bytes, self.sender.server_max_event_bytes)
        if len(data) > limit:
            raise ValueError(f"event of {len(data) / 1e6:.1f} MB exceeds the {limit / 1e6:.1f} MB limit per event")
        return data

    def reject(self, why: str) -> None:
        """Count a call whose input cannot be stored (client.rejected) and warn once, instead of raising."""
        self._reject_locally(why)

    def _reject_locally(self, why: str) -> None:
        with self.outbox.lock:
            self._local_rejected += 1
            first = self._local_rejected == 1
            self.outbox.rejected_total += 1
            self.outbox.rejected_unreported.append(self.outbox.seq)  # the next flush() reports it
        if first:
            log.warning("paneboard: event not sent: %s (further ones are only counted: client.rejected)", why)
        else:
            log.debug("paneboard: event not sent: %s", why)

    def add_source(self, source: Callable[[bool], None]) -> None:
        """Poll `source(final)` on the sender thread (every ~0.1 s) and before each flush() and close()."""
        self.sources.append(source)
        self.sender.poll = 0.1
        self.sender.wake.set()

    def remove_source(self, source: Callable[[bool], None]) -> None:
        if source in self.sources:
            self.sources.remove(source)

    def collect(self, final: bool = False) -> None:
        for source in list(self.sources):
            try:
                source(final)
            except Exception:  # a producer's failure must not stop delivery
                log.debug("paneboard: event source failed", exc_info=True)

    def deferred(self) -> _Deferred:
        """Context: events put inside it ride the next batch instead of waking the sender (sent within ~1 s).

        For the training hooks' telemetry: each wake-up costs the training thread a few GIL hand-offs and
        thread switches.
        """
        return _Deferred(self._local)

    def pending_events(self) -> list[dict[str, Any]]:
        """Decoded copies of every event not yet acknowledged, oldest first (for tests and diagnostics)."""
        with self.outbox.lock:
            items = self.outbox.items_locked()
        return [{"s": s, **json.loads(encoded(d, s))} for s, d in items]

    def pending_count(self) -> int:
        with self.outbox.lock:
            return self.outbox.pending_locked()

    @property
    def connected(self) -> bool:
        return self.sender.conn_ok

    @property
    def dropped(self) -> int:
        """Events dropped so far because the memory buffer and the spool were full (or the spool off)."""
        return self.outbox.dropped_total

    @property
    def rejected(self) -> int:
        """Events that can never be stored: refused by the server, or not encodable here."""
        return self.outbox.rejected_total

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every event enqueued before this call is stored; False on timeout, or if any of them
        was rejected or dropped since the last flush. Never raises."""
        self.collect()
        ob, sender = self.outbox, self.sender
        with ob.lock:
            sender.flushing += 1  # set before `wake`: a sender about to pace sees one or the other
        try:
            sender.wake.set()  # deferred events wait for no timer now
            with ob.cond:
                target = ob.seq
                if not ob.done_locked(target):
                    if self._closed:
                        return False
                    if not ob.cond.wait_for(lambda: ob.done_locked(target) or self._closed, timeout) \
                            or not ob.done_locked(target):
                        return False
                lost = ob.take_rejected_locked(target) + ob.dropped_total - ob.dropped_reported
                ob.dropped_reported = ob.dropped_total
                return lost == 0
        except Exception:  # flush must never raise into a training loop
            log.debug("paneboard: flush failed", exc_info=True)
            return False
        finally:
            with ob.lock:
                sender.flushing -= 1

    def outcome(self, seq: int, timeout: float | None = None) -> tuple[bool, str | None]:
        """(stored or refused, the server's reason if refused) of the event `put` numbered `seq`; (False, None) on
        timeout. Unlike flush() it leaves the rejection for the next flush() to report."""
        ob = self.outbox
        with ob.cond:
            done = ob.cond.wait_for(lambda: ob.done_locked(seq) or self._closed, timeout) and ob.done_locked(seq)
            return done, ob.reject_reasons.get(seq) if done else None

    def drain_spool(self, timeout: float | None = None) -> bool:
        """Upload what this transport's spool holds (`paneboard sync`) and wait for the server's acks."""
        self.sender.wake.set()
        return self.flush(timeout)

    def close(self, timeout: float | None = None, unreachable_grace: float = 1.0) -> bool:
        """Flush, then stop the thread. Gives up after `unreachable_grace` s without a connection (or an attempt
        under way), and after `timeout` s; with no `timeout` (at exit, close_connection()) it waits as long as
        the server makes progress (connects, acknowledges), until exit_timeout s pass without any, or EXIT_CAP_S
        in all. What is left goes to the spool, for `paneboard sync`."""
        if self._closed:
            return True
        start = time.monotonic()
        progressive = timeout is None
        deadline = start + (self.exit_timeout if timeout is None else timeout)
        cap = start + max(EXIT_CAP_S, self.exit_timeout)
        self.collect(True)  # the console's last lines (an uncaught traceback) go out with the run's end
        sender, ob = self.sender, self.outbox
        with ob.cond:
            sender.flushing += 1  # no pacing while closing (see flush)
        sender.wake.set()  # cut a backoff sleep short: try to connect right now
        with ob.cond:
            target = ob.seq
            down_since: float | None = None
            seen = (ob.acked, sender.gen)
            pong: threading.Event | None = None
            pinged = 0.0
            while not ob.done_locked(target):
                now = time.monotonic()
                # An ack, a (re)connection or a pong (a server whose writer commits a long group of batches
                # acks them at once, but answers pings meanwhile): keep waiting.
                if progressive and ((ob.acked, sender.gen) != seen or (pong is not None and pong.is_set())):
                    seen, pong = (ob.acked, sender.gen), None
                    deadline = min(cap, now + self.exit_timeout)
                if progressive and pong is None and now - pinged >= PING_EVERY_S:
                    pinged = now
                    ob.cond.release()  # a ping may wait for the socket: never while holding what acks need
                    try:
                        pong = sender.ping()
                    finally:
                        ob.cond.acquire()
                if now >= deadline:
                    break
                if sender.conn_ok or sender.opening:  # a slow handshake on a busy machine is not an outage
                    down_since = None
                elif down_since is None:
                    down_since = now
                elif now - down_since >= unreachable_grace:
                    break
                ob.cond.wait(min(0.05, deadline - now))
            ok = ob.done_locked(target)
            left = ob.pending_locked()
            waited = time.monotonic() - start
            sender.stop = self._closed = True
            sender.flushing -= 1
            ob.cond.notify_all()
        sender.wake.set()
        thread = sender.thread
        if thread is not None and thread is not threading.current_thread():
            # Connected: give it time to send a close frame; otherwise it may sit in connect() (daemon anyway).
            thread.join(timeout=1.5 if ok else 0.2)
        try:
            atexit.unregister(self._atexit)
        except Exception:  # interpreter shutdown
            pass
        if not ok and not self.spool_pending(waited):
            log.warning("paneboard: %d event(s) were not delivered to %s", left, self.url)
        if ob.dropped_total:
            log.warning("paneboard: %d event(s) in total were dropped because the buffer and the spool were full "
                        "(max_queue=%d)", ob.dropped_total, self.max_queue)
        return ok

    def spool_pending(self, waited: float | None = None) -> bool:
        """Save every unacknowledged event to the spool (at exit while the server is away, or slow: it stored
        nothing for the `waited` seconds); says so in one line naming the spool and `paneboard sync`."""
        ob = self.outbox
        written, total = ob.save_all()
        spooled = ob.spool is not None and len(ob.spool) > 0
        if ob.spool is not None and spooled:
            with ob.spool_lock:
                left = ob.spool.count_after(ob.acked)
            why = "" if waited is None else f"not stored by the server after {waited:.0f} s; "
            log.warning("paneboard: %d event(s) %ssaved to %s; they are sent when this client reconnects, or run: "
                        "paneboard sync %s", left, why, ob.spool.path, ob.spool.path)
        return spooled and written == total

    def _atexit(self) -> None:
        self._exiting = True
        try:
            self.close()  # as long as the server makes progress (EXIT_CAP_S at most)
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

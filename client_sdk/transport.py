"""Background delivery of SDK events: bounded queue, batching, the /ingest websocket, acks and reconnects."""

from __future__ import annotations

import atexit
import inspect
import json
import logging
import os
import random
import threading
import time
import uuid
import weakref
from collections import deque
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .convert import dumps, fast_dumps
from .spool import Spool
from .spool import default_dir as default_spool_dir

log = logging.getLogger("paneboard")

SDK_VERSION = "0.1.0"


def _connect_kwargs(url: str, token: str | None = None) -> dict[str, Any]:
    from websockets.sync.client import connect

    kw: dict[str, Any] = {"compression": None, "open_timeout": 5.0, "close_timeout": 1.0,
                          "max_size": 2**22, "user_agent_header": f"paneboard-sdk/{SDK_VERSION}"}
    if token:
        kw["additional_headers"] = {"Authorization": f"Bearer {token}"}
    host = urlsplit(url).hostname or ""
    if "proxy" in inspect.signature(connect).parameters and (
            host in ("localhost", "::1") or host.startswith("127.")):
        kw["proxy"] = None  # websockets >= 15 honours *_PROXY env vars; loopback must never go through one
    return kw


class _Batch:
    """(s, encoded event) pairs taken from the queue for one frame, kept until acked or requeued."""

    __slots__ = ("items", "last_s")

    def __init__(self, items: list[tuple[int, bytes]]) -> None:
        self.items = items
        self.last_s = items[-1][0]


_LIVE: weakref.WeakSet[Transport] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for t in list(_LIVE):
        t._reinit_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Transport:
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
        self._init_state()
        _LIVE.add(self)
        self._start()

    def _init_state(self) -> None:
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
            wake = self._idle
            self._idle = False
        if wake:
            self._wake.set()
        return s

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

    def drain_spool(self, timeout: float | None = None) -> bool:
        """Upload what this transport's spool holds (`paneboard sync`) and wait for the server's acks."""
        with self._cond:
            if self._spool is not None and self._spool.last_s:
                self._seq = max(self._seq, self._spool.last_s)
        self._wake.set()
        return self.flush(timeout)

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
        try:
            self.close(self.exit_timeout)
        except Exception:  # never fail the interpreter's exit
            pass

    # ------------------------------------------------------------------------------------ sender thread

    def _run(self) -> None:
        delay = 0.2
        while not self._stop:
            ws = self._open()
            if ws is None:
                self._maybe_report_drops()
                # Exponential backoff with jitter; close() sets _wake to retry at once. Meanwhile the
                # overflow goes to the spool every 50 ms, so memory stays bounded during an outage.
                until = time.monotonic() + delay * random.uniform(0.75, 1.25)
                while not self._stop and (left := until - time.monotonic()) > 0:
                    self._spill()
                    if self._wake.wait(min(left, 0.05)):
                        break
                self._spill()
                self._wake.clear()
                delay = min(delay * 2, 5.0)
                continue
            if not self._server_error:
                delay = 0.2
            self._server_error = False
            try:
                self._pump(ws)
            except Exception as e:  # any socket failure means reconnect
                log.debug("paneboard: connection error: %r", e)
            finally:
                self._disconnect()
            if self._server_error and not self._stop:
                self._wake.wait(delay * random.uniform(0.75, 1.25))
                self._wake.clear()
                delay = min(delay * 2, 5.0)

    def _open(self) -> Any:
        """Connect + hello/welcome; None on failure (warns once per outage)."""
        try:
            from websockets.sync.client import connect

            # websockets >= 16 wants connect() used as a context manager; entering it by hand keeps
            # the connection open across our own reconnect loop (older versions return the connection).
            ws = connect(self.url, **_connect_kwargs(self.url, self.token)).__enter__()
        except Exception as e:
            where = f" (spooling to {self._spool.path} beyond {self.max_queue // 2} events)" if self._spool else ""
            self._warn_down(f"cannot connect to {self.url} ({e}); buffering events{where} and retrying")
            return None
        try:
            ws.send(json.dumps({"hello": {"client": self.client_id, "sdk": SDK_VERSION}}))
            welcome = json.loads(ws.recv(timeout=10.0))["welcome"]
            last_seq = int(welcome.get("last_seq") or 0)
        except Exception as e:
            self._warn_down(f"handshake with {self.url} failed ({e!r}); retrying")
            try:
                ws.close()
            except Exception:
                pass
            return None
        spooled = self._spool.read() if self._spool and self._spool.first_s is not None else []
        with self._cond:
            self._queue.extendleft(reversed(self._to_spill))  # not yet on disk, older than the queue
            self._to_spill.clear()
            if spooled:
                # Spooled events are older than everything queued: they go first, in order. The file is
                # dropped now; if this connection fails again they are requeued and spilled like the rest.
                self._queue.extendleft(reversed(spooled))
                self._seq = max(self._seq, spooled[-1][0])
                self._spool.clear()
            # Events the server already committed (acks lost with the previous socket) are not resent.
            q = self._queue
            while q and q[0][0] <= last_seq:
                q.popleft()
            self._conn_ok = True
            self._gen += 1
            self._cond.notify_all()
            more, self._dropped = self._dropped, 0
            self._drop_warned = False
        if self._ever_connected:
            log.info("paneboard: reconnected to %s", self.url)
        elif self._warned:
            log.info("paneboard: connected to %s", self.url)
        if more:
            log.warning("paneboard: %d oldest event(s) were dropped while the buffer was full (max_queue=%d)",
                        more, self.max_queue)
        self._warned = False
        self._ever_connected = True
        return ws

    def _spill(self) -> None:
        """While the server is away, keep memory bounded: the oldest queued events move to the spool."""
        sp = self._spool
        keep = self.max_queue // 2
        if sp is None or (len(self._queue) <= keep and not self._to_spill):
            return
        with self._lock:
            items = list(self._to_spill)
            self._to_spill.clear()
            items += [self._queue.popleft() for _ in range(max(0, len(self._queue) - keep))]
            if not items:
                return
            self._spilling_first = items[0][0]
        try:
            written = sp.append(items)
        except OSError as e:
            written = 0
            log.warning("paneboard: cannot write the spool %s (%s)", sp.path, e)
        with self._cond:
            self._spilling_first = None
            lost = len(items) - written
            if lost:
                self._dropped += lost
                self._dropped_total += lost
                log.warning("paneboard: spool %s is full (%d MB): %d event(s) dropped", sp.path,
                            self.spool_max_bytes >> 20, lost)
            self._cond.notify_all()

    def spool_pending(self) -> bool:
        """Save every unacknowledged event to the spool (at exit while the server is away)."""
        sp = self._spool
        with self._cond:
            items = list(self._to_spill) + [it for b in self._inflight for it in b.items] + list(self._queue)
            if sp is None or not items:
                return False
            self._to_spill.clear()
            self._inflight.clear()
            self._queue.clear()
            self._spilling_first = items[0][0]
        try:
            written = sp.append(items)
        except OSError as e:
            written = 0
            log.warning("paneboard: cannot write the spool %s (%s)", sp.path, e)
        with self._cond:
            self._spilling_first = None
            self._cond.notify_all()
        if written:
            log.warning("paneboard: %d event(s) saved to %s; they are sent when this client reconnects, or run: "
                        "paneboard sync %s", written, sp.path, sp.path)
        return written == len(items)

    def _warn_down(self, msg: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning("paneboard: %s", msg)
        else:
            log.debug("paneboard: %s", msg)

    def _maybe_report_drops(self) -> None:
        """First overflow: one warning with the count so far; the rest is summed up on (re)connect/close."""
        if not self._dropped or self._drop_warned:
            return
        with self._lock:
            n, self._dropped = self._dropped, 0
            self._drop_warned = True
        log.warning("paneboard: buffer full (max_queue=%d): dropping the oldest events (%d so far)",
                    self.max_queue, n)

    def _pump(self, ws: Any) -> None:
        reader = threading.Thread(target=self._read_loop, args=(ws, self._gen), name="paneboard-acks",
                                  daemon=True)
        reader.start()
        send_text = "text" in inspect.signature(ws.send).parameters  # websockets >= 14: no decode copy
        try:
            while True:
                if self._dropped:
                    self._maybe_report_drops()
                with self._lock:
                    if self._stop or not self._conn_ok:
                        return
                    self._wake.clear()
                    batch = self._take_batch_locked()
                    if batch is None:
                        self._idle = True
                if batch is None:
                    woke = self._wake.wait(1.0)
                    self._idle = False
                    if woke and self.linger and not self._stop:
                        # Let a burst of calls pile up into one batch: fewer frames, acks and GIL hand-offs.
                        time.sleep(self.linger)
                    continue
                frame = self.frame(batch.items)
                if send_text:
                    ws.send(frame, text=True)
                else:
                    ws.send(frame.decode())
        finally:
            try:
                ws.close()
            except Exception:
                pass
            reader.join(timeout=2.0)

    def _take_batch_locked(self) -> _Batch | None:
        """Whatever is queued, up to batch_events / batch_bytes (one oversized event goes alone)."""
        q = self._queue
        if not q or len(self._inflight) >= self.window:
            return None
        items: list[tuple[int, bytes]] = []
        size = 0
        while q and len(items) < self.batch_events:
            size += len(q[0][1]) + 16
            if items and size > self.batch_bytes:
                break
            items.append(q.popleft())
        batch = _Batch(items)
        self._inflight.append(batch)
        return batch

    @staticmethod
    def frame(items: list[tuple[int, bytes]]) -> bytes:
        """`{"batch":[...]}` with each event's `s` spliced in front of its pre-encoded fields."""
        return b'{"batch":[' + b",".join(b'{"s":%d,%s' % (s, d[1:]) for s, d in items) + b"]}"

    def _read_loop(self, ws: Any, gen: int) -> None:
        try:
            for msg in ws:
                self._on_message(msg)
        except Exception as e:  # closed socket ends the connection
            log.debug("paneboard: receive loop ended: %r", e)
        finally:
            with self._lock:
                if self._gen == gen:
                    self._conn_ok = False
            self._wake.set()

    def _on_message(self, msg: str | bytes) -> None:
        try:
            m = json.loads(msg)
        except ValueError:
            log.warning("paneboard: server sent a frame that is not JSON: %.200r", msg)
            return
        if not isinstance(m, dict):
            log.warning("paneboard: unexpected server frame: %.200r", m)
        elif "ack" in m:
            try:
                s = int(m["ack"])
            except (TypeError, ValueError):
                log.warning("paneboard: bad ack frame: %.200r", m)
                return
            with self._cond:
                infl = self._inflight
                while infl and infl[0].last_s <= s:
                    infl.popleft()
                self._cond.notify_all()
                wake, self._idle = self._idle, False
            if wake:
                self._wake.set()  # a window slot opened
            for err in m.get("errors") or ():
                if isinstance(err, dict):
                    log.warning("paneboard: server rejected event s=%s: %s", err.get("s"), err.get("error"))
                else:
                    log.warning("paneboard: server rejected an event: %s", err)
        elif "error" in m:
            log.warning("paneboard: server error: %s", m["error"])
            with self._lock:
                if self._inflight:
                    # A batch failed to commit and will not be acked: reconnect, learn last_seq from the
                    # welcome and resend what is missing (after a backoff, in case the failure repeats).
                    self._server_error = True
                    self._conn_ok = False
            self._wake.set()
        else:
            log.debug("paneboard: ignored server frame %.200r", m)

    def _disconnect(self) -> None:
        with self._cond:
            self._conn_ok = False
            # Unacked batches go back in front of the queue, in order, to be resent after the next welcome.
            for b in reversed(self._inflight):
                self._queue.extendleft(reversed(b.items))
            self._inflight.clear()
            while len(self._queue) > self.max_queue:
                self._queue.popleft()
                self._dropped += 1
                self._dropped_total += 1
            self._cond.notify_all()
        if not self._stop:
            self._warned = False
            self._warn_down(f"lost the connection to {self.url}; buffering events and reconnecting")

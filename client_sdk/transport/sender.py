"""The Transport's sender thread and ack reader: connect, hello/welcome, batches over one websocket, acks."""

from __future__ import annotations

import inspect
import json
import logging
import random
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from .spool import Spool

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


class SenderMixin:
    """Methods of Transport that run on its sender and ack-reader threads (state lives on Transport)."""

    url: str
    token: str | None
    client_id: str
    _spool: Spool | None
    _lock: threading.Lock
    _cond: threading.Condition
    _wake: threading.Event
    _queue: deque
    _inflight: deque
    _to_spill: deque

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
                # Wake an idle sender only for queued events that waited for this window slot; with nothing
                # queued the next put() wakes it (a wake per ack cost a thread switch and GIL hand-off each).
                wake = self._idle and bool(self._queue)
                if wake:
                    self._idle = False
            if wake:
                self._wake.set()
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

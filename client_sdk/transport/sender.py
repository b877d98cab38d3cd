"""The sender thread and its ack reader: connect, hello/welcome, batches over one websocket, acks."""

from __future__ import annotations

import inspect
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ..protocol import BINARY_FORMAT
from .outbox import Batch, Outbox
from .points import binary_frame, frame, size

log = logging.getLogger("paneboard")

SDK_VERSION = "0.1.0"
SPILL_EVERY = 0.05  # seconds between spool writes while the server is away
# At most one frame per FRAME_INTERVAL while events keep coming: a paced 500 events/s then costs the server 50
# frames, transactions and acks a second instead of 500. A call after a pause still goes out within `linger`;
# a full batch, a replay from the spool and flush() never wait.
FRAME_INTERVAL = 0.02
# While no browser watches (the server's acks say so), nobody sees the latency: one frame per QUIET_INTERVAL.
QUIET_INTERVAL = 1.0
PACED_EVENT_BYTES = 64 << 10  # pacing is for trickles of small events: a bigger one (bulk data) goes at once


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


class Sender:
    """Moves the outbox's events to the server: one thread sends, one per connection reads acks."""

    def __init__(self, outbox: Outbox, url: str, client_id: str, token: str | None, linger: float,
                 on_drop: Callable[[int], None] | None = None) -> None:
        self.outbox = outbox
        self.url = url
        self.client_id = client_id
        self.token = token  # dash-server --token / PANEBOARD_TOKEN; sent as a bearer header
        self.linger = linger
        self.on_drop = on_drop  # told how many events were just dropped (the client shows it as an alert)
        self.wake = threading.Event()  # wakes the sender; set by callers only when it is idle
        self.collect: Callable[[bool], None] | None = None  # Transport.collect: polled sources (the console)
        self.poll = 1.0  # seconds an idle sender sleeps; 0.1 once a source must be polled
        self.idle = False
        self.last_frame = 0.0  # monotonic time the last frame was sent
        self.frames_sent = 0  # batches sent so far (diagnostics, tests)
        self.binary_frames = True  # offer binary frames at the handshake (False: JSON text only)
        self.binary = False  # this connection's server agreed to them
        self.rows = False  # this connection's server takes `rows` events (docs/WIRE.md §1)
        self.watched = True  # a browser follows our envs (the last ack's "watched"; older servers: always)
        self.flushing = 0  # flush() calls waiting: no pacing meanwhile (changed under the outbox lock)
        self.stop = False
        self.offline = False  # offline mode: never connect, spool everything
        self.gen = 0  # connection generation: a stale ack reader must not mark a newer socket dead
        self.conn_ok = False  # a websocket is up and welcomed
        self.opening = False  # a connection attempt is under way (connect, hello, welcome)
        self.ws: Any = None  # the connection pump() serves (None between connections)
        self.server_error = False  # the server refused to store a batch: reconnect after a backoff
        self.ever_connected = False
        self.first_welcome = threading.Event()  # set once the first connection is up (a run starts then)
        self.warned = False  # warned about this outage already
        self.drop_warned = False
        self.reject_warned = False
        self.server_max_event_bytes = 1 << 62  # from the welcome (dash-server --max-request-mb)
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name="paneboard-sender", daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------------------------ sender thread

    def run(self) -> None:
        delay = 0.2
        while not self.stop:
            ws = self.open()
            if ws is None:
                self.report_drops()
                # Exponential backoff with jitter; close() sets `wake` to retry at once. Meanwhile the
                # overflow goes to the spool, so memory stays bounded during an outage.
                until = time.monotonic() + delay * random.uniform(0.75, 1.25)
                while not self.stop and (left := until - time.monotonic()) > 0:
                    if self.collect is not None:  # the console keeps going to the queue and the spool
                        self.collect(False)
                    self.outbox.spill(keep=self.outbox.max_queue // 2)
                    if self.wake.wait(min(left, SPILL_EVERY)):
                        break
                self.outbox.spill(keep=self.outbox.max_queue // 2)
                self.wake.clear()
                delay = min(delay * 2, 5.0)
                continue
            if not self.server_error:
                delay = 0.2
            self.server_error = False
            try:
                self.ws = ws
                self.pump(ws)
            except Exception as e:  # any socket failure means reconnect
                log.debug("paneboard: connection error: %r", e)
            finally:
                self.ws = None
                self.disconnect()
            if self.server_error and not self.stop:
                self.wake.wait(delay * random.uniform(0.75, 1.25))
                self.wake.clear()
                delay = min(delay * 2, 5.0)

    def ping(self) -> threading.Event | None:
        """A websocket ping on the current connection; the event is set when the server answers (None: no
        connection). A server busy committing earlier batches still answers: closing waits for it."""
        ws = self.ws
        try:
            return ws.ping() if ws is not None and self.conn_ok else None
        except Exception:
            return None

    def open(self) -> Any:
        """Connect + hello/welcome; None on failure (warns once per outage)."""
        self.opening = True
        try:
            return self._open()
        finally:
            self.opening = False

    def _open(self) -> Any:
        ob = self.outbox
        if self.offline:
            return None
        try:
            from websockets.sync.client import connect

            # websockets >= 16 wants connect() used as a context manager; entering it by hand keeps
            # the connection open across our own reconnect loop (older versions return the connection).
            ws = connect(self.url, **_connect_kwargs(self.url, self.token)).__enter__()
        except Exception as e:
            where = f" (spooling to {ob.spool.path} beyond {ob.max_queue // 2} events)" if ob.spool else ""
            self.warn_down(f"cannot connect to {self.url} ({e}); buffering events{where} and retrying")
            return None
        try:
            hello: dict[str, Any] = {"client": self.client_id, "sdk": SDK_VERSION, "watched": True}
            if self.binary_frames:
                hello["frames"] = [BINARY_FORMAT]
            ws.send(json.dumps({"hello": hello}))
            welcome = json.loads(ws.recv(timeout=10.0))["welcome"]
            self.binary = welcome.get("frames") == BINARY_FORMAT  # older servers answer without it: JSON
            self.rows = welcome.get("rows") is True  # older servers: log() rows go out as single points
            last_seq = int(welcome.get("last_seq") or 0)
            limit = welcome.get("max_event_bytes")
            if isinstance(limit, int) and limit > 0:
                self.server_max_event_bytes = limit  # bigger events would close the socket: refuse them here
        except Exception as e:
            self.warn_down(f"handshake with {self.url} failed ({e!r}); retrying")
            try:
                ws.close()
            except Exception:
                pass
            return None
        ob.welcome(last_seq)  # events the server committed (acks lost with the last socket) are not resent
        with ob.cond:
            self.conn_ok = True
            self.gen += 1
            ob.cond.notify_all()
        if self.ever_connected:
            log.info("paneboard: reconnected to %s", self.url)
        elif self.warned:
            log.info("paneboard: connected to %s", self.url)
        self.report_drops(summary=True)
        self.warned = False
        self.ever_connected = True
        self.first_welcome.set()
        return ws

    def warn_down(self, msg: str) -> None:
        if not self.warned:
            self.warned = True
            log.warning("paneboard: %s", msg)
        else:
            log.debug("paneboard: %s", msg)

    def report_drops(self, summary: bool = False) -> None:
        """First drop: one warning with the count so far; the rest is summed up on (re)connect/close."""
        ob = self.outbox
        if not ob.dropped or (self.drop_warned and not summary):
            return
        with ob.lock:
            n, ob.dropped = ob.dropped, 0
        if summary and self.drop_warned:
            log.warning("paneboard: %d more event(s) were dropped (max_queue=%d, spool full or off)",
                        n, ob.max_queue)
        else:
            log.warning("paneboard: buffer full (max_queue=%d, spool full or off): dropping the oldest events "
                        "(%d so far)", ob.max_queue, n)
        self.drop_warned = not summary
        if self.on_drop is not None:
            try:
                self.on_drop(n)
            except Exception:  # reporting must never stop delivery
                log.debug("paneboard: drop report failed", exc_info=True)

    def pump(self, ws: Any) -> None:
        ob = self.outbox
        reader = threading.Thread(target=self.read_loop, args=(ws, self.gen), name="paneboard-acks",
                                  daemon=True)
        reader.start()
        send_text = "text" in inspect.signature(ws.send).parameters  # websockets >= 14: no decode copy
        try:
            while True:
                if ob.dropped:
                    self.report_drops()
                if ob.to_spill:
                    ob.spill()  # overflow while connected: to disk first, so older events go out first
                if self.stop or not self.conn_ok:
                    return
                self.wake.clear()
                if self.collect is not None:
                    self.collect(False)
                self.pace_stream()
                batch = ob.take_batch()
                if batch is None:
                    with ob.lock:  # put() reads `idle` under this lock: no wake-up is lost in between
                        ready = bool(ob.to_spill) or (bool(ob.queue) and len(ob.inflight) < ob.window)
                        self.idle = not ready
                    if ready:
                        continue
                    woke = self.wake.wait(self.poll)
                    self.idle = False
                    if woke and self.linger and not self.stop:
                        # Let a burst of calls pile up into one batch: fewer frames, acks and GIL hand-offs.
                        time.sleep(self.linger)
                    continue
                if self.binary:
                    ws.send(binary_frame(batch.items, self.rows))
                    self.last_frame = time.monotonic()
                    self.frames_sent += 1
                    continue
                data = frame(batch.items, self.rows)
                self.last_frame = time.monotonic()
                self.frames_sent += 1
                if send_text:
                    ws.send(data, text=True)
                else:
                    ws.send(data.decode())
        finally:
            try:
                ws.close()
            except Exception:
                pass
            reader.join(timeout=2.0)

    def pace_stream(self) -> None:
        """Wait until FRAME_INTERVAL (QUIET_INTERVAL while unwatched) after the last frame so that queued calls
        pile up into one batch; a full batch, a big event, a spill or spool replay, flush() and close() do not
        wait (the latter two set `wake`)."""
        ob = self.outbox
        hold = self.last_frame + (FRAME_INTERVAL if self.watched else QUIET_INTERVAL) - time.monotonic()
        q = ob.queue
        if hold > 0 and 0 < len(q) < ob.batch_events and size(q[0][1]) < PACED_EVENT_BYTES and not ob.to_spill \
                and (ob.spool is None or not len(ob.spool)) and not self.stop and not self.flushing:
            self.wake.wait(hold)

    def disconnect(self) -> None:
        with self.outbox.lock:
            self.conn_ok = False
        self.outbox.lost_connection()
        with self.outbox.cond:
            self.outbox.cond.notify_all()
        if not self.stop:
            self.warned = False
            self.warn_down(f"lost the connection to {self.url}; buffering events and reconnecting")

    # ------------------------------------------------------------------------------------ ack reader

    def read_loop(self, ws: Any, gen: int) -> None:
        try:
            for msg in ws:
                self.on_message(msg)
        except Exception as e:  # closed socket ends the connection
            log.debug("paneboard: receive loop ended: %r", e)
        finally:
            with self.outbox.lock:
                if self.gen == gen:
                    self.conn_ok = False
            self.wake.set()

    def on_message(self, msg: str | bytes) -> None:
        try:
            m = json.loads(msg)
        except ValueError:
            log.warning("paneboard: server sent a frame that is not JSON: %.200r", msg)
            return
        if not isinstance(m, dict):
            log.warning("paneboard: unexpected server frame: %.200r", m)
        elif "ack" in m:
            self.on_ack(m)
        elif "watched" in m:  # a browser started following our envs: stop pacing quietly (WIRE.md §1.4)
            self.watched = m["watched"] is True
            if self.watched:
                self.wake.set()
        elif "error" in m:
            log.warning("paneboard: server error: %s", m["error"])
            with self.outbox.lock:
                if self.outbox.inflight:
                    # A batch could not be stored and will not be acked: reconnect, learn last_seq from the
                    # welcome and resend what is missing (after a backoff, in case the failure repeats).
                    self.server_error = True
                    self.conn_ok = False
            self.wake.set()
        else:
            log.debug("paneboard: ignored server frame %.200r", m)

    def on_ack(self, m: dict) -> None:
        try:
            s = int(m["ack"])
        except (TypeError, ValueError):
            log.warning("paneboard: bad ack frame: %.200r", m)
            return
        # "rejected" (and "errors" from older servers): events that can never be stored, with the reason.
        reasons = m.get("rejected") if "rejected" in m else m.get("errors")
        rejected: list[int] = []
        why_of: dict[int, str] = {}
        for err in reasons or ():
            seq = err.get("s") if isinstance(err, dict) else None
            if isinstance(seq, int):
                rejected.append(seq)
                why_of[seq] = str(err.get("error") or "rejected")[:1000]
            also = err.get("also") if isinstance(err, dict) else None  # more events rejected for the same reason
            if isinstance(also, list):
                for q in also:
                    if isinstance(q, int):
                        rejected.append(q)
                        why_of[q] = str(err.get("error") or "rejected")[:1000]
            if not self.reject_warned:
                self.reject_warned = True
                why = err.get("error") if isinstance(err, dict) else err
                log.warning("paneboard: server rejected event s=%s: %s (further rejections are only counted: "
                            "client.rejected)", seq, why)
            else:
                log.debug("paneboard: server rejected event: %.200r", err)
        watched = m.get("watched")
        self.watched = watched if isinstance(watched, bool) else True
        waiting = self.outbox.ack(s, rejected, why_of)
        # Wake an idle sender only for queued events that waited for this window slot; with nothing queued
        # the next put() wakes it (a wake per ack cost a thread switch and GIL hand-off each).
        if waiting and self.idle:
            self.idle = False
            self.wake.set()


__all__ = ["Batch", "Sender", "frame", "SDK_VERSION"]

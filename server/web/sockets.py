"""Websocket endpoints on the ASGI side: /ingest (SDK stream) and /ws (browser live channel)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from paneboard.protocol import BINARY_FORMAT

from .. import __version__, jsonio
from ..commands.clients import sdk_client_error
from ..commands.envelope import EventError, check_name
from ..commands.jobs import Job, JobResult, Stream
from ..dispatch.parse import parse_batch
from ..dispatch.rejections import grouped, log_grouped
from ..live.hub import ENV_LIST_TYPES, Producer
from ..services import Services
from .frames import Decoded, Frame, decode_frame

log = logging.getLogger("paneboard.sockets")

MAX_INFLIGHT_BATCHES = 8   # per SDK connection; beyond it we stop reading and TCP pushes back
DECODE_ON_LOOP_BYTES = 1 << 20  # bigger frames are decoded on a worker thread (the SDK's batches stay below)


class WebSocket:
    """The few ASGI websocket operations we need, without a framework."""

    def __init__(self, scope: dict, receive: Callable[[], Awaitable[dict[str, Any]]],
                 send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self.scope, self._receive, self._send = scope, receive, send
        self.closed = False

    async def accept(self) -> bool:
        msg = await self._receive()
        if msg["type"] != "websocket.connect":
            return False
        await self._send({"type": "websocket.accept"})
        return True

    async def receive(self) -> bytes | None:
        """The next message as bytes, or None once the peer has gone.

        A text message becomes bytes here and its str dies at once: the parsers read bytes, and holding both
        (the str while decoding its copy) cost a 120 MB frame another 120 MB."""
        while True:
            msg = await self._receive()
            if msg["type"] == "websocket.disconnect":
                self.closed = True
                return None
            if msg["type"] == "websocket.receive":
                text, data = msg.get("text"), msg.get("bytes")
                del msg
                return text.encode() if text is not None else data

    async def send(self, data: bytes | str) -> None:
        if self.closed:
            return
        text = data.decode() if isinstance(data, bytes) else data
        try:
            await self._send({"type": "websocket.send", "text": text})
        except Exception:  # the client went away mid-send (uvicorn raises its own types)
            self.closed = True

    async def close(self, code: int = 1000) -> None:
        if not self.closed:
            self.closed = True
            try:
                await self._send({"type": "websocket.close", "code": code})
            except Exception:
                pass


async def ingest(ws: WebSocket, services: Services) -> None:
    """SDK stream: hello -> welcome(last_seq); batches -> ack after commit (docs/WIRE.md §1)."""
    if not await ws.accept():
        return
    loop = asyncio.get_running_loop()
    # Frames to send; after one marked `then_close` the socket is closed (None stops the pump).
    outbox: asyncio.Queue[tuple[bytes, bool] | None] = asyncio.Queue()
    slots = asyncio.Semaphore(MAX_INFLIGHT_BATCHES)
    client_id: str | None = None
    conn = object()  # this connection, for the stall watch (a reconnect is a new one)

    async def pump() -> None:
        while (item := await outbox.get()) is not None:
            data, then_close = item
            await ws.send(data)
            if then_close:
                await ws.close(1011)
                return

    def say(obj: dict) -> None:
        outbox.put_nowait((jsonio.dumps(obj), False))

    pump_task = asyncio.create_task(pump())
    stream = Stream()
    # Acks say whether a browser follows the batch's envs, if the hello asked (a browser on another server,
    # with peers, is not seen here: then always yes).
    watching = (lambda envs: True) if services.peers else services.hub.watching
    watched: Callable[[set[str]], bool] | None = None
    producer = Producer(lambda: say({"watched": True}))
    limit = services.settings.max_request_bytes

    def decode(data: bytes, client: str | None, acks_watched: Callable[[set[str]], bool] | None) -> \
            tuple[Job | None, Frame]:
        with jsonio.gc_paused():
            decoded = decode_frame(data, limit)
            if decoded.events is None:
                return None, decoded
            job = _batch_job(decoded.events, client, stream, loop, outbox, slots, acks_watched)
            job.size = len(data)
            return job, Frame()  # the decoded events die here, before collections resume

    try:
        while (frame := await ws.receive()) is not None:
            if len(frame) > DECODE_ON_LOOP_BYTES:
                # Scanning and decoding tens of MB takes a second or more: on the loop, every other request
                # and socket of this server would wait that long.
                job, decoded = await loop.run_in_executor(None, decode, frame, client_id, watched)
            else:
                job, decoded = decode(frame, client_id, watched)
            del frame  # the bytes are not needed once decoded (nor while waiting for the writer below)
            if job is None:
                msg = decoded.msg
                if decoded.error is not None:
                    say({"error": decoded.error})
                    continue
                if not (isinstance(msg, dict) and "hello" in msg):
                    say({"error": 'expected {"hello": ...} or {"batch": [...]}'})
                    continue
                hello = msg["hello"] if isinstance(msg["hello"], dict) else {}
                cid = hello.get("client")
                refused = sdk_client_error(cid)
                if refused is not None or not isinstance(cid, str):
                    say({"error": refused or "hello.client must be a string"})
                    continue
                if services.runs is not None and client_id != cid:
                    if client_id is not None:
                        services.runs.disconnected(client_id)
                    services.runs.connected(cid)
                client_id = cid
                watched = watching if hello.get("watched") is True else None
                if watched is not None:
                    services.hub.producers.add(producer)
                last = await loop.run_in_executor(None, services.store.client_last_seq, cid)
                welcome: dict[str, Any] = {"server": "paneboard", "version": __version__, "last_seq": last,
                                           "max_event_bytes": limit, "rows": True}
                offered = hello.get("frames")
                if isinstance(offered, list) and BINARY_FORMAT in offered:
                    welcome["frames"] = BINARY_FORMAT  # the SDK may send binary frames from now on
                say({"welcome": welcome})
                continue
            producer.envs = {cmd.env for cmd in job.commands}
            await slots.acquire()  # released by the batch's ack: bounds the batches waiting for the writer
            services.writer.submit(job)
            if services.stall is not None:
                services.stall.batch(conn, {cmd.env for cmd in job.commands})
    finally:
        services.hub.producers.discard(producer)
        if services.stall is not None:
            services.stall.closed(conn)
        if services.runs is not None and client_id is not None:
            services.runs.disconnected(client_id)
        # Batches already handed to the writer are committed regardless; their acks just go nowhere.
        await outbox.put(None)
        await pump_task


SDK_BATCH_BYTES = 4 << 20  # the SDK's batches (paneboard.Client's batch_bytes) stop at this size


def frame_limit(max_request_bytes: int) -> int:
    """Largest websocket message read: what the SDK ever sends, a batch of up to 4 MB or one event of up to
    `max_request_bytes` alone (it refuses bigger events itself, told the limit by the welcome), plus room for
    the frame around them. Every byte read may cost two or three while it is decoded: a bigger frame makes the
    websocket layer close the socket (1009) before reading it."""
    return max(max_request_bytes, SDK_BATCH_BYTES) + (1 << 20)


def _batch_job(events: list[Decoded], client_id: str | None, stream: Stream, loop: asyncio.AbstractEventLoop,
               outbox: asyncio.Queue[tuple[bytes, bool] | None], slots: asyncio.Semaphore,
               watched: Callable[[set[str]], bool] | None) -> Job:
    top = max((ev.seq for ev in events if ev.seq is not None), default=0)
    commands, rejected = parse_batch([(ev.seq, ev.raw, ev.error) for ev in events])
    log_grouped(log, rejected, "s", f"client {client_id}")

    def on_commit(result: JobResult) -> None:  # writer thread
        if result.failed:
            # Not acked: closing makes the SDK reconnect, learn last_seq from the welcome and resend
            # exactly what is missing (docs/WIRE.md §1.6).
            reply: dict[str, Any] = {"error": f"could not be stored: {result.failed}", "retry": True}
        else:
            reply = {"ack": top}
            if rejected or result.errors:
                # "rejected" is the contract; "errors" repeats it for SDKs older than it.
                # Grouped by reason: a batch failing alike answers one entry, not one per event.
                reply["rejected"] = reply["errors"] = grouped(rejected + result.errors, "s")

        def deliver() -> None:
            if watched is not None and not result.failed:
                reply["watched"] = watched({cmd.env for cmd in commands})  # see docs/WIRE.md §1.4
            slots.release()
            outbox.put_nowait((jsonio.dumps(reply), bool(result.failed)))

        loop.call_soon_threadsafe(deliver)

    return Job(commands, client_id=client_id, ack_seq=top or None, done=on_commit, stream=stream)


async def live(ws: WebSocket, services: Services) -> None:
    """Browser channel: {"subscribe": env|null} in; JSON arrays of change messages out."""
    if not await ws.accept():
        return
    hub = services.hub
    sub = hub.add()
    share = ws.scope.get("paneboard.share")
    unwatch: Callable[[], None] | None = None
    if share is not None:
        sub.sees = share.sees
        loop = asyncio.get_running_loop()

        def revoked() -> None:  # any thread (the revoking request's WSGI worker)
            loop.call_soon_threadsafe(lambda: asyncio.ensure_future(_close_revoked(ws, sub)))
        if services.shares is not None:
            unwatch = services.shares.watch(share.token_id, revoked)

    async def pump() -> None:
        while not ws.closed:
            await sub.wakeup.wait()
            msgs = sub.take()
            if msgs:
                await ws.send(jsonio.dumps(msgs))

    pump_task = asyncio.create_task(pump())
    try:
        while (frame := await ws.receive()) is not None:
            try:
                msg = jsonio.loads(frame)
            except ValueError:
                continue
            if isinstance(msg, dict) and "subscribe" in msg:
                env = msg["subscribe"]
                try:
                    name = None if env is None else check_name(env, "env")
                    if name is not None and share is not None and not share.sees(name):
                        raise EventError(f"env {name!r} not found")
                    sub.env = name
                except EventError as exc:
                    await ws.send(jsonio.dumps([{"type": "error", "error": str(exc)}]))
                    continue
                sub.pending = [m for m in sub.pending if m["type"] in ENV_LIST_TYPES]
                if sub.env is not None:
                    hub.subscribed(sub.env)
                await ws.send(jsonio.dumps([{"type": "subscribed", "env": sub.env}]))
    finally:
        if unwatch is not None:
            unwatch()
        hub.remove(sub)
        pump_task.cancel()


async def _close_revoked(ws: WebSocket, sub: Any) -> None:
    await ws.close(1008)  # policy violation: the share token behind this socket was revoked
    sub.wakeup.set()      # the pump sees the socket closed and ends

"""Websocket endpoints on the ASGI side: /ingest (SDK stream) and /ws (browser live channel)."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from .. import __version__, jsonio
from ..events import EventError, check_name
from ..ingest.writer import Job, JobResult
from ..panes import parse_event
from ..services import Services

log = logging.getLogger("paneboard.sockets")

MAX_INFLIGHT_BATCHES = 8   # per SDK connection; beyond it we stop reading and TCP pushes back
CLIENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


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

    async def receive(self) -> str | bytes | None:
        """The next message, or None once the peer has gone."""
        while True:
            msg = await self._receive()
            if msg["type"] == "websocket.disconnect":
                self.closed = True
                return None
            if msg["type"] == "websocket.receive":
                return msg.get("text") if msg.get("text") is not None else msg.get("bytes")

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
    try:
        while (frame := await ws.receive()) is not None:
            job = None
            with jsonio.gc_paused():
                try:
                    msg = jsonio.loads(frame)
                except ValueError as exc:
                    say({"error": f"frame is not valid JSON: {exc}"})
                    continue
                if isinstance(msg, dict) and "hello" not in msg and isinstance(msg.get("batch"), list):
                    job = _batch_job(msg["batch"], client_id, loop, outbox, slots)
                    msg = None  # the decoded events die here, before collections resume
            if isinstance(msg, dict) and "hello" in msg:
                hello = msg["hello"] if isinstance(msg["hello"], dict) else {}
                cid = hello.get("client")
                if not isinstance(cid, str) or not CLIENT_ID.match(cid):
                    say({"error": "hello.client must be 1..64 of [A-Za-z0-9_.:-]"})
                    continue
                client_id = cid
                last = await loop.run_in_executor(None, services.store.client_last_seq, cid)
                say({"welcome": {"server": "paneboard", "version": __version__, "last_seq": last}})
                continue
            if job is None:
                say({"error": 'expected {"hello": ...} or {"batch": [...]}'})
                continue
            await slots.acquire()  # released by the batch's ack: bounds the batches waiting for the writer
            services.writer.submit(job)
            if services.stall is not None:
                services.stall.batch(conn, {cmd.env for cmd in job.commands})
    finally:
        if services.stall is not None:
            services.stall.closed(conn)
        # Batches already handed to the writer are committed regardless; their acks just go nowhere.
        await outbox.put(None)
        await pump_task


def _batch_job(events: list[Any], client_id: str | None, loop: asyncio.AbstractEventLoop,
               outbox: asyncio.Queue[tuple[bytes, bool] | None], slots: asyncio.Semaphore) -> Job:
    commands, errors, top = [], [], 0
    for raw in events:
        seq = raw.get("s") if isinstance(raw, dict) else None
        if isinstance(seq, int) and not isinstance(seq, bool):
            top = max(top, seq)
        try:
            commands.append(parse_event(raw))
        except EventError as exc:
            errors.append({"s": seq, "error": str(exc)})
            log.warning("rejected event s=%s from client %s: %s", seq, client_id, exc)

    def on_commit(result: JobResult) -> None:  # writer thread
        reply: dict[str, Any] = {"ack": top}
        if errors or result.errors:
            reply["errors"] = errors + result.errors
        if result.failed:
            # Not acked: closing makes the SDK reconnect, learn last_seq from the welcome and resend
            # exactly what is missing.
            reply = {"error": f"could not be stored: {result.failed}"}

        def deliver() -> None:
            slots.release()
            outbox.put_nowait((jsonio.dumps(reply), bool(result.failed)))

        loop.call_soon_threadsafe(deliver)

    return Job(commands, client_id=client_id, ack_seq=top or None, done=on_commit)


async def live(ws: WebSocket, services: Services) -> None:
    """Browser channel: {"subscribe": env|null} in; JSON arrays of change messages out."""
    if not await ws.accept():
        return
    hub = services.hub
    sub = hub.add()

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
                    sub.env = None if env is None else check_name(env, "env")
                except EventError as exc:
                    await ws.send(jsonio.dumps([{"type": "error", "error": str(exc)}]))
                    continue
                sub.pending = [m for m in sub.pending if m["type"] in ("env", "env_deleted")]
                await ws.send(jsonio.dumps([{"type": "subscribed", "env": sub.env}]))
    finally:
        hub.remove(sub)
        pump_task.cancel()

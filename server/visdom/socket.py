"""Visdom's Python-client event channel: /vis_socket (alive handshake, callback events), /vis_socket_wrap polling,
and POST /vis_event, where our browser UI reports KeyPress/Click/PropertyUpdate/... for the handlers."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from typing import Any

from flask import Blueprint, Response

from .. import jsonio
from ..commands.envelope import EventError, check_name
from ..services import Services
from ..web.common import ApiError, json_response, services
from ..web.sockets import WebSocket
from .http import _body
from .translate import window_json

log = logging.getLogger("paneboard.visdom")

ALIVE = '{"command": "alive", "data": "vis_alive"}'
POLL_IDLE_S = 15.0      # Visdom closes a polling session that has not queried for 15 s
MAX_QUEUED = 1000       # per listener; a client that stops reading loses the oldest events, not the server's memory
EVENT_TYPES = ("KeyPress", "Click", "PropertyUpdate", "close", "EntitySelected", "RegionSelected")

bp = Blueprint("visdom_socket", __name__)

_lock = threading.Lock()
_polls: dict[str, dict] = {}  # sid -> {"seen": last query time, "messages": [json text, ...]}
_sockets: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()


def _offer(queue: asyncio.Queue, text: str) -> None:
    if queue.qsize() >= MAX_QUEUED:
        queue.get_nowait()
    queue.put_nowait(text)


def forward(event: dict[str, Any]) -> int:
    """Send one callback event to every connected Visdom client (they filter by target); returns how many."""
    try:
        text = jsonio.dumps(event).decode()
    except TypeError:  # an integer beyond 64 bits from the browser: the standard encoder takes it
        text = json.dumps(event)
    with _lock:
        listeners = list(_sockets)
        for poll in _polls.values():
            poll["messages"] = (poll["messages"] + [text])[-MAX_QUEUED:]
        n = len(listeners) + len(_polls)
    for loop, queue in listeners:
        try:
            loop.call_soon_threadsafe(_offer, queue, text)
        except RuntimeError:  # that socket's loop is gone
            pass
    return n


async def vis_socket(ws: WebSocket, services: Services) -> None:
    """Say `alive` at once (without it every visdom.Visdom() waits ~6 s and check_connection() is False), then
    pass on every callback event; the client's own frames (`echo`) are ignored."""
    if not await ws.accept():
        return
    await ws.send(ALIVE)
    entry = (asyncio.get_running_loop(), asyncio.Queue())
    with _lock:
        _sockets.add(entry)

    async def pump() -> None:
        while not ws.closed:
            await ws.send(await entry[1].get())

    task = asyncio.create_task(pump())
    try:
        while await ws.receive() is not None:
            pass
    finally:
        with _lock:
            _sockets.discard(entry)
        task.cancel()


def _expire(now: float) -> None:
    for sid in [s for s, p in _polls.items() if now - p["seen"] > POLL_IDLE_S]:
        del _polls[sid]


@bp.post("/vis_socket_wrap")
def vis_socket_wrap() -> Response:
    """Polling twin of /vis_socket for use_polling=True clients: init -> sid; query -> queued messages."""
    body = _body()
    now = time.monotonic()
    with _lock:
        _expire(now)
        if body.get("message_type") == "init":
            sid = os.urandom(16).hex()
            _polls[sid] = {"seen": now, "messages": [ALIVE]}
            return json_response({"success": True, "sid": sid})
        poll = _polls.get(str(body.get("sid")))
        if body.get("message_type") != "query":
            return json_response({"success": False, "reason": "invalid"})
        if poll is None:
            return json_response({"success": False, "reason": "closed"})
        poll["seen"] = now
        messages, poll["messages"] = poll["messages"], []
    return json_response({"success": True, "messages": messages})


@bp.post("/vis_event")
def vis_event() -> Response:
    """From our browser UI: {"event_type", "target" (win), "eid" (env), ...fields of Visdom §1.5}. The stored
    window goes along as pane_data, as Visdom does, unless the pane sent pane_data: false."""
    body = _body()
    if body.get("event_type") not in EVENT_TYPES:
        raise ApiError(400, f"event_type must be one of {', '.join(EVENT_TYPES)}")
    try:
        env, win = check_name(body.get("eid"), "eid"), check_name(body.get("target"), "target")
    except EventError as exc:
        raise ApiError(400, str(exc)) from None
    event = {k: v for k, v in body.items() if k != "pane_data"}
    if body.get("pane_data") is not False:
        pane = services().store.get_pane(env, win)
        event["pane_data"] = window_json(services().store, pane) if pane is not None else False
    return json_response({"ok": True, "delivered": forward(event)})

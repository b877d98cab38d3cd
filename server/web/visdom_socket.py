"""Visdom's Python-client event channel: the /vis_socket websocket (alive handshake) and /vis_socket_wrap polling."""

from __future__ import annotations

import os
import threading
import time

from flask import Blueprint, Response

from .. import jsonio
from ..services import Services
from .common import json_response
from .sockets import WebSocket
from .visdom_compat import _body

ALIVE = '{"command": "alive", "data": "vis_alive"}'
POLL_IDLE_S = 15.0  # Visdom closes a polling session that has not queried for 15 s

bp = Blueprint("visdom_socket", __name__)

_lock = threading.Lock()
_polls: dict[str, dict] = {}  # sid -> {"seen": last query time, "messages": [json text, ...]}


async def vis_socket(ws: WebSocket, services: Services) -> None:
    """Say `alive` at once: without it every visdom.Visdom() waits ~6 s and check_connection() is False.

    Browser callback events (KeyPress, Click, ...) are not produced by our UI yet, so nothing else is sent;
    the socket stays open until the client leaves, and the client's `echo` frames are ignored.
    """
    if not await ws.accept():
        return
    await ws.send(ALIVE)
    while await ws.receive() is not None:
        pass


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
    return Response(jsonio.dumps({"success": True, "messages": messages}), mimetype="application/json")

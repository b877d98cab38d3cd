"""Request bodies read on the event loop, whole and within a deadline, before a WSGI worker sees the request.

a2wsgi hands each request to one of a few worker threads, which then block reading its body: a handful of
clients that send slowly would hold every worker and stall all HTTP. Reading the body here costs no thread, a
client too slow for BODY_DEADLINE gets a 408, and a chunked body (no Content-Length) reaches Flask with one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .. import jsonio

BODY_DEADLINE = 30.0  # seconds for a whole request body to arrive

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class BodyError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


async def read_body(receive: Receive, limit: int, deadline: float = BODY_DEADLINE) -> bytes:
    """The whole body, or BodyError: 408 past the deadline, 413 beyond `limit` bytes, 400 if the client left."""

    async def gather() -> bytes:
        parts, size = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                raise BodyError(400, "the client closed the connection before sending the whole body")
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise BodyError(413, f"request body over the {limit // (1 << 20)} MB limit (--max-request-mb)")
            parts.append(chunk)
            if not msg.get("more_body", False):
                return b"".join(parts)

    try:
        return await asyncio.wait_for(gather(), deadline)
    except asyncio.TimeoutError:
        raise BodyError(408, f"request body not received within {deadline:.0f} s") from None


def with_length(scope: dict[str, Any], size: int) -> dict[str, Any]:
    """The scope with Content-Length set to the buffered body's size (and no Transfer-Encoding)."""
    headers = [(k, v) for k, v in scope.get("headers", ()) if k.lower() not in (b"content-length",
                                                                               b"transfer-encoding")]
    return {**scope, "headers": [*headers, (b"content-length", b"%d" % size)]}


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive() that yields the buffered body once, then waits for the client's disconnect as usual.

    It keeps no reference once it has yielded the body: the WSGI side copies it into its own buffer, and a
    64 MB body held twice for the whole request was 64 MB of server RSS for nothing."""
    held: list[bytes] = [body]
    del body

    async def again() -> dict[str, Any]:
        if held:
            return {"type": "http.request", "body": held.pop(), "more_body": False}
        return await receive()

    return again


async def refuse(send: Send, error: BodyError) -> None:
    data = jsonio.dumps({"error": error.message})
    await send({"type": "http.response.start", "status": error.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data)),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})

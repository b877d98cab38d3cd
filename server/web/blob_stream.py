"""Artifact blob uploads streamed from the socket: written and hashed as the bytes arrive, without Flask.

PUT /api/v1/artifact-blobs/<sha>/upload?offset=N[&last=1] keeps the protocol of the buffered route (the same
JSON answers), but its body is never held whole: blocks of a few MB go to a worker thread (file write and
sha256 both release the GIL) while the event loop receives the next one. A request may so carry a whole file,
and one that breaks off keeps every byte that arrived: the client asks for the offset and goes on from there.
The request's headers still pass the same access checks as every Flask request (auth.check_http).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from io import BytesIO
from typing import Any
from urllib.parse import parse_qs

from a2wsgi.wsgi import build_environ
from flask import Flask, request

from .. import jsonio
from ..artifacts.blobs import BlobError, BlobStore, BlobUpload
from . import auth

log = logging.getLogger("paneboard.server")

UPLOAD_PATH = re.compile(r"^/api/v1/artifact-blobs/([0-9a-f]{64})/upload$")
BLOCK = 4 << 20  # bytes gathered before a write: large enough that the per-write cost vanishes, small in RSS

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Stored(Exception):
    """The blob is stored already: answered at once, its body left unread."""


class Refused(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


class Gone(Exception):
    """The client closed the connection mid-body: nobody is left to answer."""


def is_upload(scope: dict[str, Any], path: str) -> str | None:
    """The sha of a streamed upload request, None for any other request."""
    if scope.get("method") != "PUT":
        return None
    found = UPLOAD_PATH.match(path)
    return found.group(1) if found else None


def access_refusal(flask_app: Flask, scope: dict[str, Any], token: str | None, shares: Any) -> Any:
    """The Flask response auth.check_http gives these headers (None: allowed), so that this route is guarded
    exactly as the others are (token, share links, embeds, cross-site writes)."""
    with flask_app.request_context(build_environ(scope, BytesIO())):  # type: ignore[arg-type]
        return auth.check_http(request, token, shares)


async def send_json(send: Send, status: int, payload: Any, close: bool = False) -> None:
    data = jsonio.dumps(payload)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data)),
               (b"x-content-type-options", b"nosniff")]
    if close:  # answered before the body was read: the rest of it must not be taken for the next request
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def send_flask(send: Send, response: Any) -> None:
    data = response.get_data()
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()
               if k.lower() != "content-length"]
    headers += [(b"content-length", b"%d" % len(data)), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def handle(scope: dict[str, Any], receive: Receive, send: Send, sha: str, blobs: BlobStore | None,
                 idle_s: float) -> None:
    """Answer one upload request (its access already checked)."""
    try:
        answer = await _upload(scope, receive, sha, blobs, idle_s)
    except Stored:
        await send_json(send, 200, {"stored": True, "offset": None}, close=True)
        return
    except Refused as exc:
        log.warning("PUT %s -> %d: %s", scope.get("path"), exc.status, exc.message)
        await send_json(send, exc.status, {"error": exc.message, **exc.extra}, close=True)
        return
    except Gone as exc:
        log.info("upload of %s broke off: %s", sha[:12], exc)
        return
    except OSError as exc:  # the disk is full or failing: the client retries later, the server stays up
        log.error("upload of %s could not be written: %s", sha[:12], exc)
        await send_json(send, 507, {"error": f"the server could not store the upload: {exc}"}, close=True)
        return
    await send_json(send, 200, answer)


async def _upload(scope: dict[str, Any], receive: Receive, sha: str, blobs: BlobStore | None,
                  idle_s: float) -> dict[str, Any]:
    if blobs is None:
        raise Refused(503, "this server keeps no artifacts (no blob store)")
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    try:
        offset = int(query.get("offset", [""])[0])
    except ValueError:
        raise Refused(400, "offset must be an integer") from None
    loop = asyncio.get_running_loop()
    if await loop.run_in_executor(None, blobs.has, sha):
        await loop.run_in_executor(None, blobs.touch, sha)  # about to be referenced: not for a cleanup
        raise Stored()
    try:
        upload = await loop.run_in_executor(None, blobs.open_upload, sha, offset)
    except BlobError as exc:
        raise Refused(exc.status, str(exc), offset=blobs.partial_size(sha)) from None
    try:
        await _pump(receive, upload, idle_s)
    finally:
        size = await asyncio.shield(loop.run_in_executor(None, upload.close))
    if query.get("last") == ["1"]:
        try:
            await loop.run_in_executor(None, blobs.finish, sha)
        except BlobError as exc:
            raise Refused(exc.status, str(exc), offset=blobs.partial_size(sha)) from None
        return {"stored": True, "offset": None}
    return {"stored": False, "offset": size}


async def _pump(receive: Receive, upload: BlobUpload, idle_s: float) -> None:
    """Body blocks into the upload, one write in flight while the next block arrives. Bytes that arrived before
    a break are written all the same: they are a prefix of the blob, and the client resumes after them."""
    loop = asyncio.get_running_loop()
    writing: asyncio.Future | None = None
    pending: list[bytes] = []
    size = 0

    async def flush() -> None:
        nonlocal writing, pending, size
        if writing is not None:
            await writing
            writing = None
        if pending:
            data = b"".join(pending) if len(pending) > 1 else pending[0]
            pending, size = [], 0
            writing = loop.run_in_executor(None, upload.write, data)

    try:
        while True:
            try:
                msg = await asyncio.wait_for(receive(), idle_s)
            except asyncio.TimeoutError:
                raise Refused(408, f"no bytes of the upload for {idle_s:.0f} s") from None
            if msg["type"] == "http.disconnect":
                raise Gone("the client closed the connection")
            chunk = msg.get("body", b"")
            if chunk:
                pending.append(chunk)
                size += len(chunk)
            more = msg.get("more_body", False)
            if size >= BLOCK or not more:
                await flush()
            if not more:
                break
    finally:
        await flush()
        if writing is not None:
            await writing

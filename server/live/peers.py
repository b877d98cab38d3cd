"""Live updates shared between dash-server processes on one PostgreSQL database (LISTEN/NOTIFY)."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine

from .. import jsonio
from ..store import dialect

log = logging.getLogger("paneboard.peers")

MAX_PAYLOAD = 7000  # PostgreSQL refuses NOTIFY payloads from 8000 bytes on


def _fit(origin: str, messages: list[dict[str, Any]]) -> list[str]:
    """Payloads under the NOTIFY limit; an extend too big to carry becomes a `pane` message (a refetch)."""
    small = [m if m["type"] != "extend" or len(jsonio.dumps(m)) < MAX_PAYLOAD // 2 else
             {"type": "pane", "env": m["env"], "win": m["win"], "version": m["version"]} for m in messages]
    payloads: list[str] = []
    chunk: list[dict[str, Any]] = []
    size = 0
    for m in small:
        n = len(jsonio.dumps(m))
        if chunk and size + n > MAX_PAYLOAD:
            payloads.append(jsonio.dumps({"origin": origin, "messages": chunk}).decode())
            chunk, size = [], 0
        chunk.append(m)
        size += n
    if chunk:
        payloads.append(jsonio.dumps({"origin": origin, "messages": chunk}).decode())
    return payloads


def notify_revoked(engine: Engine, token_id: int, origin: str = "") -> None:
    """Tell every server on the database that a share token was revoked (the API's revoke and the CLI's)."""
    dialect.notify_peers(engine, [jsonio.dumps({"origin": origin, "revoked": token_id}).decode()])


class Peers:
    """Sends this process's committed changes to the others and feeds theirs into the local hub; share token
    revocations go to `on_revoked` (closing that token's websockets here), never to browsers."""

    def __init__(self, engine: Engine, local_publish: Callable[[list[dict]], None],
                 on_revoked: Callable[[int], None] | None = None) -> None:
        self.engine = engine
        self.local_publish = local_publish
        self.on_revoked = on_revoked
        self.origin = uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread = threading.Thread(target=dialect.listen_peers, args=(engine, self._received, self._stop),
                                        name="paneboard-peers", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        try:  # a note wakes the listener at once; peers ignore it (no messages, no revocation)
            dialect.notify_peers(self.engine, [jsonio.dumps({"origin": self.origin}).decode()])
        except Exception:
            log.debug("could not wake the LISTEN thread; it stops at its next poll", exc_info=True)
        self._thread.join(timeout=3)

    def publish(self, messages: list[dict[str, Any]]) -> None:
        """Called by the writer after each commit: local browsers first, then the other processes."""
        self.local_publish(messages)
        try:
            dialect.notify_peers(self.engine, _fit(self.origin, messages))
        except Exception:
            log.exception("could not notify the other dash-server processes")

    def revoked(self, token_id: int) -> None:
        """A revoke on this server: the others close the token's open websockets too."""
        try:
            notify_revoked(self.engine, token_id, self.origin)
        except Exception:
            log.exception("could not tell the other dash-server processes of a revoked share token")

    def _received(self, payload: str) -> None:
        try:
            note = jsonio.loads(payload)
        except ValueError:
            return
        revoked = note.get("revoked") if isinstance(note, dict) else None
        if isinstance(revoked, int) and not isinstance(revoked, bool):
            if self.on_revoked is not None:
                self.on_revoked(revoked)  # also for our own note: a second close of nothing is harmless
            return
        if isinstance(note, dict) and note.get("origin") != self.origin and isinstance(note.get("messages"), list):
            self.local_publish(note["messages"])

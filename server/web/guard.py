"""Connection guard below the ASGI layer: a deadline for request headers and a cap on connections per client
address, so half-sent requests (slowloris) cannot hold sockets and file descriptors until none are left."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger("paneboard.guard")

TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\ncontent-length: 49\r\n" \
          b"connection: close\r\n\r\n" + b'{"error": "request headers not received in time"}'


def guarded_protocol(header_deadline_s: float, max_per_address: int) -> type:
    """uvicorn's httptools protocol, closing a connection whose request headers are not complete within
    `header_deadline_s` of its first byte (or of the connection), and any connection beyond
    `max_per_address` open ones from one address. Websockets stay counted after the upgrade, until they close:
    otherwise one address could hold any number of sockets (and file descriptors) by upgrading each."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    open_by_address: dict[str, int] = {}  # one event loop: no lock needed

    class GuardedProtocol(HttpToolsProtocol):
        _addr: str | None = None
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._addr = self.client[0] if self.client else None
            if self._addr is not None:
                count = open_by_address.get(self._addr, 0) + 1
                open_by_address[self._addr] = count
                if count > max_per_address:
                    log.warning("refused a connection from %s: over %d open ones", self._addr, max_per_address)
                    transport.close()
                    return
            self._arm()

        def _arm(self) -> None:
            if self._timer is None:
                self._timer = self.loop.call_later(header_deadline_s, self._headers_late)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _headers_late(self) -> None:
            self._timer = None
            if not self.transport.is_closing():
                log.warning("closed a connection from %s: headers not complete in %.0f s", self._addr,
                            header_deadline_s)
                self.transport.write(TIMEOUT)
                self.transport.close()

        def on_message_begin(self) -> None:  # the first byte of a request (the next one on a kept-alive socket)
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def handle_websocket_upgrade(self) -> None:
            self._disarm()
            super().handle_websocket_upgrade()
            # The transport now talks to the websocket protocol, so our connection_lost is never called:
            # the slot is given back when the websocket's own connection ends.
            ws = self.transport.get_protocol()
            if ws is not self:
                ws_lost = ws.connection_lost

                def connection_lost(exc: Exception | None) -> None:
                    self._leave()
                    ws_lost(exc)

                ws.connection_lost = connection_lost  # type: ignore[method-assign]  # this one socket's

        def _leave(self) -> None:
            if self._addr is not None:
                left = open_by_address.get(self._addr, 1) - 1
                if left > 0:
                    open_by_address[self._addr] = left
                else:
                    open_by_address.pop(self._addr, None)
                self._addr = None

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._leave()
            super().connection_lost(exc)

    return GuardedProtocol

"""Browser callbacks (KeyPress, Click, PropertyUpdate, close...) delivered to handlers the script registered."""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Callable
from typing import Any

from .transport.sender import _connect_kwargs

log = logging.getLogger("paneboard")

Handler = Callable[[dict[str, Any]], Any]


class EventListener:
    """One daemon thread on the server's /vis_socket; calls the handlers registered for each event's target.

    Handlers run on this thread: an exception in one is logged and never reaches the training loop.
    """

    def __init__(self, url: str, token: str | None) -> None:
        self.url = url
        self.token = token
        self.handlers: dict[str, list[Handler]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = threading.Event()

    def register(self, handler: Handler, target: str) -> None:
        with self._lock:
            self.handlers.setdefault(target, []).append(handler)
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="paneboard-callbacks", daemon=True)
            self._thread.start()

    def clear(self, target: str | None = None) -> None:
        with self._lock:
            if target is None:
                self.handlers.clear()
            else:
                self.handlers.pop(target, None)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        from websockets.sync.client import connect

        delay = 0.2
        while not self._stop.is_set():
            try:
                with connect(self.url, **_connect_kwargs(self.url, self.token)) as ws:
                    delay = 0.2
                    while not self._stop.is_set():
                        try:
                            frame = ws.recv(timeout=0.5)
                        except TimeoutError:
                            continue
                        self._dispatch(frame)
            except Exception as exc:  # server away: retry quietly, callbacks are a nicety
                log.debug("paneboard: callback socket %s: %r", self.url, exc)
            self.connected.clear()
            self._stop.wait(delay * random.uniform(0.75, 1.25))
            delay = min(delay * 2, 5.0)

    def _dispatch(self, frame: str | bytes) -> None:
        try:
            event = json.loads(frame)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if event.get("command") == "alive":
            self.connected.set()
            return
        with self._lock:
            handlers = list(self.handlers.get(event.get("target"), ()))
        for handler in handlers:
            try:
                handler(event)
            except Exception:
                log.exception("paneboard: event handler for %r failed", event.get("target"))

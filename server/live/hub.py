"""The live hub: fans committed changes out to browser websockets, one bounded buffer per subscriber."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("paneboard.live")

MAX_PENDING = 20_000  # messages buffered for one slow browser before it is told to resync
ENV_LIST_TYPES = ("env", "env_deleted", "run_color")


class Subscriber:
    def __init__(self) -> None:
        self.env: str | None = None
        self.sees: Callable[[str], bool] | None = None  # a share token's env filter (None: every env)
        self.pending: list[dict[str, Any]] = []
        self.wakeup = asyncio.Event()

    def push(self, msg: dict[str, Any]) -> None:
        if len(self.pending) >= MAX_PENDING:
            # Dropping silently would leave gaps in the browser's plots; a resync refetches instead.
            self.pending = [{"type": "resync", "env": self.env}]
        else:
            self.pending.append(msg)
        self.wakeup.set()

    def take(self) -> list[dict[str, Any]]:
        msgs, self.pending = self.pending, []
        self.wakeup.clear()
        return msgs


def env_of(msg: dict[str, Any]) -> str:
    """The env an env-list message is about ({"type": "env", "env": {summary}}, or a name: env_deleted, run_color)."""
    env = msg.get("env")
    return str(env.get("name", "")) if isinstance(env, dict) else str(env)


class Producer:
    """An /ingest connection that asked to hear when a browser starts following one of its envs."""

    def __init__(self, notify: Callable[[], None]) -> None:
        self.notify = notify  # tells the SDK at once (loop thread), cutting short its quiet pacing
        self.envs: set[str] = set()  # of its latest batch


class Hub:
    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.subscribers: set[Subscriber] = set()
        # Told every batch on the publishing thread, before the browsers (the runs index marks envs stale).
        self.listeners: list[Callable[[list[dict[str, Any]]], None]] = []
        self.producers: set[Producer] = set()

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def watching(self, envs: set[str]) -> bool:
        """Whether a browser follows one of these envs (loop thread): their producer should send promptly."""
        return any(sub.env in envs for sub in self.subscribers)

    def subscribed(self, env: str) -> None:
        """A browser now follows `env` (loop thread): its producers send promptly from now on."""
        for producer in list(self.producers):
            if env in producer.envs:
                producer.notify()

    def has_subscribers(self) -> bool:
        """Read by the writer thread (a set's truth value is one atomic read)."""
        return bool(self.subscribers)

    def publish_threadsafe(self, messages: list[dict[str, Any]]) -> None:
        """Called by the writer thread after a commit."""
        for listener in self.listeners:
            listener(messages)
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._publish, messages)

    def _publish(self, messages: list[dict[str, Any]]) -> None:
        for sub in self.subscribers:
            for msg in messages:
                if msg["type"] in ENV_LIST_TYPES:
                    if sub.sees is None or sub.sees(env_of(msg)):
                        sub.push(msg)
                elif sub.env is not None and msg.get("env") == sub.env:
                    sub.push(msg)

    def add(self) -> Subscriber:
        sub = Subscriber()
        self.subscribers.add(sub)
        return sub

    def remove(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)

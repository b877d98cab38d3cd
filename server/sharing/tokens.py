"""Read-only share tokens: how they look, how they are kept (sha256 only) and resolved to a grant per request."""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..commands.envelope import EventError, check_name
from ..store import ShareTokenRecord, Store

log = logging.getLogger("paneboard.sharing")

PREFIX = "pbs_"  # tells a share token from the admin token without a database lookup
CACHE_S = 2.0  # a revoked token stops working within this many seconds (on every server of a PostgreSQL db)
MAX_ENVS = 1000
MAX_NAME = 200


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Grant:
    """What a share token allows: reading every env (envs None) or only the listed ones; never writing."""

    token_id: int
    envs: frozenset[str] | None

    def sees(self, env: str) -> bool:
        return self.envs is None or env in self.envs


def check_envs(envs: Iterable[object] | None) -> list[str] | None:
    """A token's env list (None: every env): names as env names are checked, at most MAX_ENVS."""
    if envs is None:
        return None
    names = list(envs)
    if not names or len(names) > MAX_ENVS:
        raise EventError(f"envs must list 1..{MAX_ENVS} env names (or be null for every env)")
    return list(dict.fromkeys(check_name(n, "env") for n in names))


def create(store: Store, envs: list[str] | None, name: str = "") -> tuple[str, ShareTokenRecord]:
    """A new token (shown once: only its hash is stored) and its record."""
    if not isinstance(name, str) or len(name) > MAX_NAME:
        raise EventError(f"name must be text of at most {MAX_NAME} characters")
    token = new_token()
    return token, store.add_share_token(token_hash(token), name, check_envs(envs))


class Resolver:
    """Token -> Grant through the store, remembered for CACHE_S so a page's many requests cost one lookup."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: dict[str, tuple[float, Grant | None]] = {}
        self._lock = threading.Lock()
        self._sockets: dict[int, set[Callable[[], None]]] = {}  # token id -> closers of its open websockets
        # token id -> when it was revoked, for CACHE_S: a socket whose grant was resolved just before the revoke
        # and watched just after it is closed too (not kept longer: SQLite may give a new token the same id).
        self._revoked: dict[int, float] = {}
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None

    def start(self) -> None:
        """Sweep for revokes this server was not told of (a CLI revoke on SQLite, a NOTIFY lost while the LISTEN
        connection was down): the open websockets of a token gone from the store close within CACHE_S."""
        if self._sweeper is None:
            self._stop.clear()
            self._sweeper = threading.Thread(target=self._sweep_loop, name="paneboard-share-sweep", daemon=True)
            self._sweeper.start()

    def stop(self) -> None:
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)
            self._sweeper = None

    def _sweep_loop(self) -> None:
        while not self._stop.wait(CACHE_S):
            try:
                self.sweep()
            except Exception:  # the database may be briefly away: the next sweep tries again
                log.exception("could not check the share tokens of open websockets")

    def sweep(self) -> None:
        """Close the websockets of watched tokens that no longer exist (one query, only while any is watched)."""
        with self._lock:
            watched = {i for i, closers in self._sockets.items() if closers}
        if not watched:
            return
        for token_id in watched - {t.id for t in self.store.list_share_tokens()}:
            self.revoked(token_id)

    def resolve(self, token: str | None) -> Grant | None:
        if not token or not token.startswith(PREFIX) or len(token) > 200:
            return None
        digest = token_hash(token)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(digest)
        if hit is not None and now - hit[0] < CACHE_S:
            return hit[1]
        record = self.store.find_share_token(digest)
        grant = None if record is None else Grant(record.id, None if record.envs is None else frozenset(record.envs))
        with self._lock:
            if len(self._cache) > 10_000:  # guessed tokens must not grow it without bound
                self._cache.clear()
            self._cache[digest] = (now, grant)
        return grant

    def watch(self, token_id: int, close: Callable[[], None]) -> Callable[[], None]:
        """Call `close` (from any thread) when this token is revoked; returns the function that unwatches."""
        with self._lock:
            when = self._revoked.get(token_id)
            revoked = when is not None and time.monotonic() - when < CACHE_S
            if not revoked:
                self._sockets.setdefault(token_id, set()).add(close)
        if revoked:
            close()

        def unwatch() -> None:
            with self._lock:
                self._sockets.get(token_id, set()).discard(close)
        return unwatch

    def revoked(self, token_id: int) -> None:
        """A revoke (on this server, or another of its PostgreSQL database): forget every cached grant and close
        the token's open websockets now."""
        self.forget()
        now = time.monotonic()
        with self._lock:
            self._revoked = {i: t for i, t in self._revoked.items() if now - t < CACHE_S}
            self._revoked[token_id] = now
            closers = self._sockets.pop(token_id, set())
        for close in closers:
            close()

    def forget(self) -> None:
        """After a revoke on this server: no grace period here."""
        with self._lock:
            self._cache.clear()

"""The long-lived parts of one server: store, writer thread and live hub, started and stopped together."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .live import Hub
from .peers import Peers
from .settings import Settings
from .store import Store, open_store
from .store.dialect import supports_peers
from .store.schema import ensure_schema
from .writer import Writer

log = logging.getLogger("paneboard.server")


@dataclass
class Services:
    settings: Settings
    store: Store
    writer: Writer
    hub: Hub
    peers: Peers | None = None   # other dash-server processes on the same PostgreSQL database
    started: bool = False

    @classmethod
    def open(cls, settings: Settings) -> Services:
        ensure_schema(settings.db_url, settings.db_hint)
        store = open_store(settings.db_url)
        hub = Hub()
        engine = getattr(store, "engine", None)
        peers = Peers(engine, hub.publish_threadsafe) if engine is not None and supports_peers(engine) else None
        publish = peers.publish if peers else hub.publish_threadsafe
        return cls(settings=settings, store=store, writer=Writer(store, publish), hub=hub, peers=peers)

    def start(self) -> None:
        if not self.started:
            self.writer.start()
            if self.peers:
                self.peers.start()
            self.started = True

    def stop(self) -> None:
        if self.started:
            self.writer.stop()  # drains the queue: everything accepted gets committed
            if self.peers:
                self.peers.stop()
            self.started = False
        self.store.close()

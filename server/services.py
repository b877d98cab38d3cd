"""The long-lived parts of one server: store, writer thread and live hub, started and stopped together."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .live import Hub
from .settings import Settings
from .store import Store, open_store
from .store.schema import ensure_schema
from .writer import Writer

log = logging.getLogger("paneboard.server")


@dataclass
class Services:
    settings: Settings
    store: Store
    writer: Writer
    hub: Hub
    started: bool = False

    @classmethod
    def open(cls, settings: Settings) -> Services:
        ensure_schema(settings.db_url, settings.db_hint)
        store = open_store(settings.db_url)
        hub = Hub()
        return cls(settings=settings, store=store, writer=Writer(store, hub.publish_threadsafe), hub=hub)

    def start(self) -> None:
        if not self.started:
            self.writer.start()
            self.started = True

    def stop(self) -> None:
        if self.started:
            self.writer.stop()  # drains the queue: everything accepted gets committed
            self.started = False
        self.store.close()

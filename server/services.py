"""The long-lived parts of one server: store, writer thread and live hub, started and stopped together."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from .artifacts.blobs import BlobStore
from .artifacts.locate import open_blob_store
from .commands.jobs import Job
from .ingest.stall_watch import StallWatch
from .ingest.writer import Writer
from .live.hub import Hub
from .live.peers import Peers
from .runs.index import RunIndex
from .runs.ops import status_command
from .runs.watch import RunWatch
from .settings import Settings
from .sharing.tokens import Resolver
from .store import Store, open_store
from .store.dialect import supports_peers
from .store.schema import ensure_schema
from .sweeps.controller import SweepController

log = logging.getLogger("paneboard.server")


@dataclass
class Services:
    settings: Settings
    store: Store
    writer: Writer
    hub: Hub
    peers: Peers | None = None   # other dash-server processes on the same PostgreSQL database
    tb_watcher: Any = None       # tensorboard.importer.TbWatcher when settings.logdir is set
    _sweep_warmer: threading.Thread | None = None  # builds the open sweeps' studies once, at start
    stall: StallWatch | None = None  # fed by the ingest sockets; alerts when an open connection goes silent
    runs: RunWatch | None = None     # fed by the ingest sockets; marks runs whose job vanished as crashed
    shares: Resolver | None = None  # read-only share tokens -> grants (cached a moment per token)
    notifier: Any = None         # notify.notifier.Notifier when --notify names receivers
    run_index: RunIndex | None = None  # the runs listing in memory, marked stale by the hub's messages
    blobs: BlobStore | None = None  # artifact bytes (None: no folder for them, e.g. PostgreSQL unconfigured)
    sweeps: SweepController | None = None  # sweeps' trials, suggested and pruned through Optuna
    started: bool = False

    @classmethod
    def open(cls, settings: Settings) -> Services:
        ensure_schema(settings.db_url, settings.db_hint)
        store = open_store(settings.db_url)
        space = store.space_state()
        if space.page_size and not space.incremental:
            # A file created before incremental auto-vacuum: deletes free pages for reuse but never shrink it.
            log.warning(
                "%s gives no disk space back after deletes (it predates incremental auto-vacuum); stop the server "
                "and run once: dash-server db compact --db %s", settings.db_hint, settings.db_hint)
        hub = Hub()
        shares = Resolver(store)
        engine = getattr(store, "engine", None)
        peers = Peers(engine, hub.publish_threadsafe, shares.revoked) if engine is not None and supports_peers(engine) else None
        publish = peers.publish if peers else hub.publish_threadsafe
        # Other servers may have browsers attached: with peers, always publish.
        # The notifier hears every commit, watched or not (so do other servers' browsers, through peers).
        writer = Writer(store, publish, listening=None if peers or settings.notify else hub.has_subscribers)
        stall = StallWatch(writer, store, min_s=settings.stall_after_s)
        runs = None
        if settings.watch_runs:
            runs = RunWatch(writer, store, grace=settings.run_crash_grace_s, announce=peers.publish if peers else None)
            hub.listeners.append(runs.note)
        run_index = RunIndex(store)
        hub.listeners.append(run_index.note)
        writer.on_commit.append(run_index.touched)
        notifier = None
        if settings.notify:
            from .notify.notifier import Notifier

            notifier = Notifier(store, list(settings.notify), settings.own_url(), run_index.runs, writer)
            hub.listeners.append(notifier.note)
        blobs = open_blob_store(settings.db_url, settings.artifacts_url, settings.artifacts_dir)
        check = getattr(blobs, "check", None)
        if check is not None:
            check()  # a bucket that does not answer stops the start, not a job's upload later
        sweeps = SweepController(store, lambda env, status, reason: writer.submit(
            Job([status_command(env, status, None, time.time(), reason)])))
        return cls(settings=settings, store=store, writer=writer, hub=hub, peers=peers, stall=stall, runs=runs,
                   run_index=run_index, shares=shares, notifier=notifier, blobs=blobs, sweeps=sweeps)

    def start(self) -> None:
        if not self.started:
            self.writer.start()
            if self.stall is not None:
                self.stall.start()
            if self.runs is not None:
                self.runs.start()
            if self.peers:
                self.peers.start()
            if self.shares is not None:
                self.shares.start()
            if self.notifier is not None:
                self.notifier.start()
            if self.sweeps is not None:
                self._sweep_warmer = threading.Thread(target=self._warm_sweeps, name="paneboard-sweep-warm",
                                                      daemon=True)
                self._sweep_warmer.start()
            if self.settings.logdir:
                from .tensorboard.importer import TbWatcher  # loads tensorboard's protos: only with --logdir

                self.tb_watcher = TbWatcher(self.writer, self.store, self.settings.logdir)
                self.tb_watcher.start()
            self.started = True

    def _warm_sweeps(self) -> None:
        assert self.sweeps is not None
        try:
            self.sweeps.warm()
        except Exception as exc:  # Optuna missing, or a sweep config from a newer version: its first call says so
            log.info("sweeps not warmed at start: %s", exc)

    def stop(self) -> None:
        if self._sweep_warmer is not None:
            self._sweep_warmer.join(timeout=30)  # before the store closes under it
            self._sweep_warmer = None
        if self.started:
            if self.stall is not None:
                self.stall.stop()
            if self.runs is not None:
                self.runs.stop()
            if self.tb_watcher is not None:
                self.tb_watcher.stop()  # its last pass goes through the writer: stop it first
                self.tb_watcher = None
            self.writer.stop()  # drains the queue: everything accepted gets committed
            if self.notifier is not None:
                self.notifier.stop()  # after the writer: the last commits' events are in the outbox first
            if self.peers:
                self.peers.stop()
            if self.shares is not None:
                self.shares.stop()
            self.started = False
        self.store.close()

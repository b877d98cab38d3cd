"""When the writer deletes unreferenced blobs: at once after deletions, at most every few seconds otherwise."""

from __future__ import annotations

import logging
import time

from ..commands.envelope import Command
from ..store import Store

log = logging.getLogger("paneboard.writer")

SWEEP_EVERY = 5.0  # seconds between sweeps while blobs keep being replaced (each sweep reads all pane content)
BLOB_KINDS = frozenset({"image", "media", "projector"})  # kinds whose commands may replace a blob
DELETING_OPS = frozenset({"close", "delete_env", "load_view", "import_env"})  # an import may replace an env


class BlobSweeper:
    """Notes commands that may leave blobs unreferenced and sweeps the store when that is due."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.dirty = False
        self.urgent = False  # a deletion: its blobs must stop being served now
        self.last = 0.0

    def note(self, commands: list[Command]) -> None:
        for cmd in commands:
            if cmd.op in DELETING_OPS:
                self.dirty = self.urgent = True
                return
            # A set may overwrite a pane that held a blob, whatever its own kind.
            if cmd.op == "set" or (cmd.op == "update" and getattr(cmd, "kind", None) in BLOB_KINDS):
                self.dirty = True

    def maybe_sweep(self, idle: bool = False) -> None:
        if not self.dirty or not (self.urgent or idle or time.monotonic() - self.last >= SWEEP_EVERY):
            return
        self.dirty = self.urgent = False
        self.last = time.monotonic()
        try:
            with self.store.transaction() as tx:
                n = tx.sweep_blobs()
        except Exception:  # a failed sweep loses nothing: the next one deletes what this one did not
            log.exception("could not delete unreferenced blobs")
            self.dirty = True
            return
        if n:
            log.debug("deleted %d unreferenced blob(s)", n)

"""Applying an imported env in the writer thread: one command per env, all of it in one transaction."""

from __future__ import annotations

import numpy as np

from paneboard.protocol import MAX_CONSOLE_LINES

from ..commands.envelope import EnvCommand, EventError
from ..live.deltas import Deltas
from ..store import StoreTx
from .archive_data import EnvData

IMPORT_OP = "import_env"  # built by the archive import alone: no producer event has this op


def command(env: EnvData, replace: bool = False) -> EnvCommand:
    return EnvCommand(op=IMPORT_OP, env=env.name, payload=(env, replace))


def apply(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    env, replace = cmd.payload
    assert isinstance(env, EnvData)
    if tx.env_meta(env.name) is not None:
        if not replace:
            raise EventError(f"env {env.name!r} already exists (import with replace to overwrite it)")
        tx.delete_env(env.name)
        deltas.env_deleted(env.name)
    tx.ensure_env(env.name)
    tx.set_env_meta(env.name, env.meta)
    if env.run is not None:
        tx.put_run(env.run)
    for mime, data in env.blobs.values():
        tx.put_blob(data, mime)
    for p in env.panes:
        pane = tx.put_pane(env.name, p.win, p.kind, p.title, p.opts, p.content)
        if p.layout is not None:
            pane = tx.set_pane_layout(pane, p.layout)
        for t in p.traces:
            trace = tx.add_trace(pane, t.name, t.style)
            if len(t.points):
                x, y, w = (np.ascontiguousarray(t.points[:, i]) for i in range(3))
                tx.append_points(trace, x, y, w)
        if p.steps:
            tx.append_steps(pane, 0, p.steps)
        deltas.pane(env.name, p.win, pane.version)
    for rank, rows in env.console:
        for i in range(0, len(rows), MAX_CONSOLE_LINES):
            tx.put_console(env.name, rank, rows[i:i + MAX_CONSOLE_LINES])
    for a in env.artifacts:  # their bytes are stored already (read_archive); a uid imported before adds nothing
        rec = tx.add_artifact(a.name, a.uid, a.type, a.files, a.metadata, a.step, a.producer, a.aliases)
        for user in a.used_by:
            tx.use_artifact(a.name, rec.version, user)
        deltas.messages.append({"type": "artifact", "env": a.producer or env.name, "artifact": rec.to_json()})

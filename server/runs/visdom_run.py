"""Visdom-client jobs as runs: what the server sees of them (first and last write, remote address) and a status
that stays true for a client that never says it started or ended: `active` while it writes, `idle` once quiet."""

from __future__ import annotations

import dataclasses

from ..commands.envelope import EnvCommand, refusing_store_errors
from ..live.deltas import Deltas
from ..store import RunRecord, StoreTx
from .record import ACTIVE_STATUS, SOURCE, is_visdom_run, run_json

OP = "run_visdom"     # the Visdom HTTP routes' own op (no producer event may carry it)


def seen_command(env: str, remote: str | None, wall: float) -> EnvCommand:
    """The Visdom routes' note that a client wrote to `env` (it goes after that write's commands)."""
    return EnvCommand(op=OP, env=env, wall=wall, payload={"remote": remote})


@refusing_store_errors
def apply_seen(tx: StoreTx, cmd: EnvCommand, deltas: Deltas) -> None:
    """Start or refresh the env's Visdom run. An env that a write left missing (refused) stays missing, and a
    run that an SDK job or an import recorded is theirs: a Visdom client writing into it changes nothing."""
    if tx.env_meta(cmd.env) is None:
        return
    old = tx.get_run(cmd.env)
    if old is not None and old.status is not None and not is_visdom_run(old):
        return
    remote = cmd.payload["remote"]
    if is_visdom_run(old):
        assert old is not None and old.provenance is not None
        provenance = {**old.provenance, "last_write": cmd.wall}
        if remote:
            provenance.update(remote_addr=remote, host=remote)
        new = dataclasses.replace(old, status=ACTIVE_STATUS, ended=None, provenance=provenance)
    else:  # the first write (or an env with only a user's tags and notes)
        provenance = {"source": SOURCE, "remote_addr": remote, "host": remote, "first_write": cmd.wall,
                      "last_write": cmd.wall}
        new = dataclasses.replace(old or RunRecord(env=cmd.env), status=ACTIVE_STATUS, started=cmd.wall,
                                  ended=None, provenance=provenance)
    if new != old:
        tx.put_run(new)
        deltas.messages.append({"type": "run", "env": cmd.env, "run": run_json(new)})


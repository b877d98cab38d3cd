"""The op table: every op a command can carry, mapped to how it is parsed and applied, in one place.

A row names its family's functions: pane kinds (panes.ops), env ops (envops), hparams, run ops (runs.ops),
artifacts (artifacts.ops) and sharing (the archive import). The writer and the web layer look an op up here
instead of branching on it; adding an op means writing its functions in its family's module and adding one row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..artifacts import ops as artifact_ops
from ..commands import envops, hparams
from ..commands.envelope import Command
from ..live.deltas import Deltas
from ..panes import ops as pane_ops
from ..panes import rows as pane_rows
from ..runs import color as run_color
from ..runs import console, visdom_run
from ..runs import ops as run_ops
from ..sharing import env_import
from ..store import StoreTx

Parse = Callable[[dict, str, str, "int | None", float], Command]
Apply = Callable[[StoreTx, Any, Deltas], None]


def _no_envs(cmd: Command) -> set[str]:
    return set()


@dataclass(frozen=True, slots=True)
class Op:
    """One op. `parse` is None for the server's own ops (no producer event may carry them); `wide` names
    the envs whose every pane the command reads or changes, where runs of merged appends must end."""

    parse: Parse | None
    apply: Apply
    wide: Callable[[Command], set[str]] = _no_envs


OPS: dict[str, Op] = {
    # pane kinds: the pane's kind validates and applies (panes/)
    "set": Op(pane_ops.parse_pane, pane_ops.apply_pane),
    "update": Op(pane_ops.parse_pane, pane_ops.apply_pane),
    "close": Op(pane_ops.parse_close, pane_ops.apply_close, pane_ops.close_wide),
    "rows": Op(pane_rows.parse_rows, pane_rows.apply_rows),  # several line panes' points of log() rows
    # env ops
    "delete_env": Op(envops.parse_delete, envops.apply_delete, envops.this_env),
    "fork_env": Op(envops.parse_fork, envops.apply_fork, envops.both_envs),
    "rename_env": Op(envops.parse_rename, envops.apply_rename, envops.both_envs),
    "layout": Op(envops.parse_layout, envops.apply_layout),
    "save_view": Op(envops.parse_save_view, envops.apply_save_view),
    "load_view": Op(envops.parse_view, envops.apply_load_view, envops.this_env),
    "set_meta": Op(envops.parse_set_meta, envops.apply_set_meta),
    "custom_scalars": Op(envops.parse_custom_scalars, envops.apply_custom_scalars),
    "hparams": Op(hparams.parse_op, hparams.apply_op),
    # run ops
    "run_start": Op(run_ops.parse_start, run_ops.apply_start),
    "run_end": Op(run_ops.parse_end, run_ops.apply_record),
    "run_config": Op(run_ops.parse_config, run_ops.apply_config),
    "run_tags": Op(run_ops.parse_tags, run_ops.apply_record),
    "run_note": Op(run_ops.parse_note, run_ops.apply_record),
    "run_best": Op(run_ops.parse_best, run_ops.apply_best),
    "run_color": Op(run_color.parse_color, run_color.apply_color),
    "run_rewind": Op(run_ops.parse_rewind, run_ops.apply_rewind, envops.this_env),
    "run_fork": Op(run_ops.parse_fork, run_ops.apply_fork, run_ops.fork_envs),
    "run_import": Op(run_ops.parse_import, run_ops.apply_record),  # dash-server import: a peer's whole record
    "run_status": Op(None, run_ops.apply_status),  # the crash and stall watches' own
    visdom_run.OP: Op(None, visdom_run.apply_seen),  # the Visdom routes' own: a Visdom client's run
    "console": Op(console.parse_console, console.apply_console),
    # artifacts: versions whose blobs the SDK stored first, and the runs that use them
    "artifact": Op(artifact_ops.parse_artifact, artifact_ops.apply_artifact),
    "artifact_use": Op(artifact_ops.parse_use, artifact_ops.apply_use),
    # sharing: an env from an archive, built by the archive import alone
    env_import.IMPORT_OP: Op(None, env_import.apply, envops.this_env),
}

PRODUCER_OPS = tuple(op for op, row in OPS.items() if row.parse is not None)


def op_of(name: str) -> Op:
    return OPS[name]


def apply_command(tx: StoreTx, cmd: Command, deltas: Deltas) -> None:
    """Apply one command in the writer's transaction (an EventError rejects it alone)."""
    OPS[cmd.op].apply(tx, cmd, deltas)


def env_wide(cmd: Command) -> set[str]:
    return OPS[cmd.op].wide(cmd)

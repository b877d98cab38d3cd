"""A job's commands before they apply: drop what a replay already stored, fold runs of mergeable appends."""

from __future__ import annotations

from ..commands.envelope import Command, EnvCommand, PaneCommand
from ..panes import kind_module, mergeable_of, rows, xy
from .table import env_wide


def skip_stored(cmd: Command, last: int) -> Command | None:
    """The part of a command its producer has not had stored yet, given the highest seq stored (`last`):
    a coalesced append straddling `last` keeps only its points after it; None if nothing is left."""
    if cmd.seq is None:
        return cmd
    if cmd.seq <= last:
        return None
    if isinstance(cmd, PaneCommand) and cmd.first_seq is not None and cmd.first_seq <= last:
        return xy.drop_first(cmd, last - cmd.first_seq + 1)
    return cmd


def unstored(commands: list[Command], last: int) -> list[Command]:
    """What of `commands` is not stored yet (skip_stored), with each rows event split into its panes' appends
    (only the points above `last`), so that the writer's coalesce merges them like single appends."""
    out: list[Command] = []
    for cmd in commands:
        if isinstance(cmd, EnvCommand) and cmd.op == "rows":
            if cmd.seq is not None and cmd.seq > last:
                out += rows.unstored(cmd, last)
        elif (c := skip_stored(cmd, last)) is not None:
            out.append(c)
    return out


def first_seq(cmd: Command) -> int | None:
    """The first producer call a command stands for (a coalesced append stands for first_seq..seq)."""
    if isinstance(cmd, PaneCommand) and cmd.first_seq is not None:
        return cmd.first_seq
    if isinstance(cmd, EnvCommand) and cmd.op == "rows":
        return rows.first_seq(cmd)
    return cmd.seq


def _merge(run: list[PaneCommand]) -> PaneCommand:
    merge = kind_module(run[0].kind).merge
    assert merge is not None  # only runs that the kind's mergeable() grew reach here
    return merge(run)


def coalesce(commands: list[Command]) -> list[Command]:
    """Fold the commands each pane's kind can merge (e.g. single-point appends) into one per run.

    Commands on different panes commute, so a training loop that logs loss, accuracy and lr every step
    (interleaved) still becomes one append per pane; anything else on a pane (or on its whole env) ends
    that pane's run, so the result equals applying the commands one by one.
    """
    runs: list[list[Command]] = []
    open_run: dict[tuple[str, str | None], int] = {}
    for cmd in commands:
        wide = env_wide(cmd)
        if wide:
            open_run = {k: v for k, v in open_run.items() if k[0] not in wide}
            runs.append([cmd])
            continue
        key = (cmd.env, cmd.win)
        at = open_run.get(key)
        if isinstance(cmd, PaneCommand) and at is not None:
            last = runs[at][-1]
            mergeable = mergeable_of(cmd.kind)
            if mergeable is not None and isinstance(last, PaneCommand) and last.kind == cmd.kind \
                    and mergeable(last, cmd):
                runs[at].append(cmd)
                continue
        open_run[key] = len(runs)
        runs.append([cmd])
    # A run of more than one command holds only PaneCommands (only they are ever appended above).
    return [run[0] if len(run) == 1 else _merge([c for c in run if isinstance(c, PaneCommand)]) for run in runs]

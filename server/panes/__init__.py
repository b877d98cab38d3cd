"""Pane kinds: one module per kind, registered in PANE_MODULES (the one list the server consults).

Each module defines KINDS (kind names it owns), UPDATE_MODES, and
  validate(cmd, raw) -> payload            check an event's kind data before anything is written
  apply(tx, cmd, deltas) -> None           turn the command into store calls (checks come before writes)
  render(store, pane, budget, x0, x1)      the `data` of a pane for the read API, within a point budget
and optionally mergeable(a, b) / merge(run) to fold runs of small commands into one before applying.
"""

from __future__ import annotations

from types import ModuleType

from ..events import Command
from . import image, text, xy

PANE_MODULES: list[ModuleType] = [xy, text, image]

_BY_KIND = {kind: module for module in PANE_MODULES for kind in module.KINDS}


def kind_module(kind: object) -> ModuleType | None:
    return _BY_KIND.get(kind) if isinstance(kind, str) else None


def coalesce(commands: list[Command]) -> list[Command]:
    """Fold the commands each pane's kind can merge (e.g. single-point appends) into one per run.

    Commands on different panes commute, so a training loop that logs loss, accuracy and lr every step
    (interleaved) still becomes one append per pane; anything else on a pane (or on its whole env) ends
    that pane's run, so the result equals applying the commands one by one.
    """
    runs: list[list[Command]] = []
    open_run: dict[tuple[str, str | None], int] = {}
    for cmd in commands:
        if cmd.op == "delete_env" or (cmd.op == "close" and cmd.win is None):
            open_run = {k: v for k, v in open_run.items() if k[0] != cmd.env}
            runs.append([cmd])
            continue
        key = (cmd.env, cmd.win)
        at = open_run.get(key)
        module = kind_module(cmd.kind)
        if at is not None and module is not None and hasattr(module, "mergeable") \
                and runs[at][-1].kind == cmd.kind and module.mergeable(runs[at][-1], cmd):
            runs[at].append(cmd)
            continue
        open_run[key] = len(runs)
        runs.append([cmd])
    return [run[0] if len(run) == 1 else kind_module(run[0].kind).merge(run) for run in runs]


def known_kinds() -> list[str]:
    return sorted(_BY_KIND)

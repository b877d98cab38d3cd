"""Pane kinds: one module per kind in PANE_MODULES (the one list the server consults); event parsing.

Each module defines KINDS (kind names it owns), UPDATE_MODES, and
  validate(cmd, raw) -> payload            check an event's kind data before anything is written
  apply(tx, cmd, deltas) -> None           turn the command into store calls (checks come before writes)
  render(store, pane, budget, x0, x1)      the `data` of a pane for the read API, within a point budget
and optionally mergeable(a, b) / merge(run) to fold runs of small commands into one before applying;
READ_OPTIONS (query arguments its render takes as `options=`, e.g. a histogram's `steps`); and for stepped kinds
render_record(row) (one record of the /steps API).
"""

from __future__ import annotations

import math
import time
from types import ModuleType
from typing import Any

from ..envops import ENV_OPS, env_wide
from ..envops import parse as parse_env_op
from ..events import OPS, Command, EventError, check_name
from . import (
    embeddings,
    figure,
    histogram,
    image,
    media,
    model_graph,
    network,
    pr_curve,
    projector,
    properties,
    text,
    xy,
)

PANE_MODULES: list[ModuleType] = [xy, text, image, figure, properties, network, embeddings, model_graph, histogram, media,
                                  pr_curve, projector]

_BY_KIND = {kind: module for module in PANE_MODULES for kind in module.KINDS}
# Looked up once per event by the writer's coalesce (a hot loop): only kinds that can fold runs of commands.
_MERGEABLE = {kind: module.mergeable for kind, module in _BY_KIND.items() if hasattr(module, "mergeable")}


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
        wide = env_wide(cmd)
        if wide:
            open_run = {k: v for k, v in open_run.items() if k[0] not in wide}
            runs.append([cmd])
            continue
        key = (cmd.env, cmd.win)
        at = open_run.get(key)
        mergeable = _MERGEABLE.get(cmd.kind)
        if at is not None and mergeable is not None and runs[at][-1].kind == cmd.kind \
                and mergeable(runs[at][-1], cmd):
            runs[at].append(cmd)
            continue
        open_run[key] = len(runs)
        runs.append([cmd])
    return [run[0] if len(run) == 1 else kind_module(run[0].kind).merge(run) for run in runs]


def known_kinds() -> list[str]:
    return sorted(_BY_KIND)


def parse_event(raw: Any) -> Command:
    """Validate the common envelope, then let the pane kind validate its data."""
    if not isinstance(raw, dict):
        raise EventError("event must be a JSON object")
    op = raw.get("op")
    if op not in OPS:
        raise EventError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    env = check_name(raw.get("env", "main") or "main", "env")
    seq = raw.get("s")
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
        raise EventError("s must be a non-negative integer")
    wall = raw.get("t")
    if not isinstance(wall, (int, float)) or isinstance(wall, bool) or not math.isfinite(wall):
        wall = time.time()
    if op == "delete_env":
        return Command(op=op, env=env, win=None, seq=seq, wall=float(wall))
    if op in ENV_OPS:
        return parse_env_op(raw, op, env, seq, float(wall))
    win = raw.get("win")
    if op == "close":
        return Command(op=op, env=env, win=None if win is None else check_name(win, "win"), seq=seq,
                       wall=float(wall))
    win = check_name(win, "win")
    opts = raw.get("opts") or {}
    if not isinstance(opts, dict):
        raise EventError("opts must be an object")
    kind = raw.get("kind")
    module = kind_module(kind)
    if module is None:
        raise EventError(f"unknown pane kind {kind!r}")
    mode = raw.get("mode")
    if op == "update" and mode not in module.UPDATE_MODES:
        raise EventError(f"{kind}: update mode must be one of {', '.join(module.UPDATE_MODES)}; got {mode!r}")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        name = str(name)
    cmd = Command(op=op, env=env, win=win, kind=kind, seq=seq, wall=float(wall), mode=mode, name=name, opts=opts)
    cmd.payload = module.validate(cmd, raw)
    return cmd

"""Pane kinds: one module per kind, registered in PANE_KINDS (the one list the server consults); event parsing.

What a kind module defines is the PaneKind protocol (contract.py): KINDS, UPDATE_MODES, READ_OPTIONS,
validate, apply, render, and the optional mergeable/merge (folding runs of small commands) and render_record
(stepped kinds), which are None where a kind has none.
"""

from __future__ import annotations

import math
import time
from typing import Any, overload

from paneboard.protocol import OPS

from ..envops import ENV_OPS, env_wide
from ..envops import parse as parse_env_op
from ..events import MAX_SEQ, Command, EnvCommand, EventError, KindName, PaneCommand, check_name
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
from .contract import PaneKind

# Typed as the protocol, so mypy checks every module listed here against PaneKind.
PANE_KINDS: list[PaneKind] = [xy, text, image, figure, properties, network, embeddings, model_graph, histogram, media,
                              pr_curve, projector]

_BY_KIND: dict[str, PaneKind] = {kind: module for module in PANE_KINDS for kind in module.KINDS}
# Looked up once per event by the writer's coalesce (a hot loop): only kinds that can fold runs of commands.
_MERGEABLE = {kind: module.mergeable for kind, module in _BY_KIND.items() if module.mergeable is not None}


@overload
def kind_module(kind: KindName) -> PaneKind: ...
@overload
def kind_module(kind: object) -> PaneKind | None: ...
def kind_module(kind: object) -> PaneKind | None:
    """The module of a kind name (None for a name no module owns, e.g. a stored pane of a removed kind)."""
    return _BY_KIND.get(kind) if isinstance(kind, str) else None


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
            mergeable = _MERGEABLE.get(cmd.kind)
            if mergeable is not None and isinstance(last, PaneCommand) and last.kind == cmd.kind \
                    and mergeable(last, cmd):
                runs[at].append(cmd)
                continue
        open_run[key] = len(runs)
        runs.append([cmd])
    # A run of more than one command holds only PaneCommands (only they are ever appended above).
    return [run[0] if len(run) == 1 else _merge([c for c in run if isinstance(c, PaneCommand)]) for run in runs]


def known_kinds() -> list[str]:
    return sorted(_BY_KIND)


def parse_event(raw: Any) -> Command:
    """Validate the common envelope, then let the pane kind validate its data.

    Raises EventError only: data that trips a validator in any other way (an integer beyond float64, a string
    orjson cannot encode, nesting that exhausts recursion ...) is refused like any other invalid event, so
    every caller (/ingest, POST /api/v1/events, the env API, Visdom's routes) rejects it instead of failing."""
    try:
        return _parse_event(raw)
    except EventError:
        raise
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise EventError(f"invalid event ({type(exc).__name__}: {str(exc)[:300]})") from None


def _parse_event(raw: Any) -> Command:
    if not isinstance(raw, dict):
        raise EventError("event must be a JSON object")
    op = raw.get("op")
    if op not in OPS:
        raise EventError(f"op must be one of {', '.join(OPS)}; got {op!r}")
    env = check_name(raw.get("env", "main") or "main", "env")
    seq = raw.get("s")
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ):
        # (beyond 64 bits it could not even be written back in the ack's "rejected" list)
        raise EventError(f"s must be an integer from 0 to {MAX_SEQ}")
    wall = raw.get("t")
    if not isinstance(wall, (int, float)) or isinstance(wall, bool) or not math.isfinite(wall):
        wall = time.time()
    if op == "delete_env":
        return EnvCommand(op=op, env=env, win=None, seq=seq, wall=float(wall))
    if op in ENV_OPS:
        return parse_env_op(raw, op, env, seq, float(wall))
    win = raw.get("win")
    if op == "close":
        return EnvCommand(op=op, env=env, win=None if win is None else check_name(win, "win"), seq=seq,
                          wall=float(wall))
    win = check_name(win, "win")
    opts = raw.get("opts") or {}
    if not isinstance(opts, dict):
        raise EventError("opts must be an object")
    kind = raw.get("kind")
    module = kind_module(kind)
    if module is None or not isinstance(kind, str):  # (only a str has a module; the test tells mypy so)
        raise EventError(f"unknown pane kind {kind!r}")
    mode = raw.get("mode")
    if op == "update" and mode not in module.UPDATE_MODES:
        raise EventError(f"{kind}: update mode must be one of {', '.join(module.UPDATE_MODES)}; got {mode!r}")
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        name = str(name)
    cmd = PaneCommand(op=op, env=env, win=win, kind=KindName(kind), seq=seq, wall=float(wall), mode=mode, name=name,
                      opts=opts)
    cmd.payload = module.validate(cmd, raw)
    if raw.get("s0") is not None:
        cmd.first_seq = _first_seq(cmd, raw["s0"])
    return cmd


def _first_seq(cmd: PaneCommand, s0: Any) -> int:
    """`s0` of a coalesced append: the event stands for the calls s0..s of one point each (docs/WIRE.md §1)."""
    seq = cmd.seq
    if not isinstance(s0, int) or isinstance(s0, bool) or seq is None or not 0 <= s0 <= seq:
        raise EventError("s0 must be an integer from 0 to the event's s")
    if cmd.kind not in xy.KINDS:
        raise EventError("s0 is only for an append of one line/scatter trace")
    xy.check_range(cmd, seq - s0 + 1)
    return s0


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

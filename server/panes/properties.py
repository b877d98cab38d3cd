"""Properties panes (Visdom's property editor): a list of named text/number/button/checkbox/select fields."""

from __future__ import annotations

from collections.abc import Mapping

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import merged_opts, no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep

KINDS = ("properties",)
UPDATE_MODES = ("replace",)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
FIELD_TYPES = ("text", "number", "button", "checkbox", "select")
MAX_FIELDS = 1000


def validate(cmd: PaneCommand, raw: dict) -> list[dict]:
    return check_properties(raw.get("properties"))


def check_properties(props: object) -> list[dict]:
    if not isinstance(props, list) or len(props) > MAX_FIELDS:
        raise EventError(f"properties: expected a list of at most {MAX_FIELDS} fields")
    out = []
    for i, p in enumerate(props):
        if not isinstance(p, dict) or p.get("type") not in FIELD_TYPES:
            raise EventError(f"properties[{i}]: type must be one of {', '.join(FIELD_TYPES)}")
        if p["type"] == "select" and not isinstance(p.get("values"), list):
            raise EventError(f"properties[{i}]: a select needs values: [...]")
        # Kept as sent (the browser shows every field as text): Visdom clients read their own dicts back.
        out.append({**p, "name": str(p.get("name", ""))})
    return out


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    no_steps("properties", steps)
    content = stored_object(content, "properties", ("properties",))
    return {"properties": check_properties(content.get("properties"))}


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    content = {"properties": cmd.payload}
    if cmd.op == "set" or pane is None:
        pane = tx.put_pane(cmd.env, cmd.win, "properties", title_of(cmd.opts), cmd.opts, content)
    else:
        if pane.kind not in KINDS:
            raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not properties")
        opts = merged_opts(pane, cmd)
        pane = tx.update_pane(pane, content=content, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    return {"properties": (pane.content or {}).get("properties", [])}

"""Embeddings panes (Visdom's embeddings()): labelled 2-D points; the browser's hover/lasso go to the script."""

from __future__ import annotations

from collections.abc import Mapping

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep
from .text import sanitize

KINDS = ("embeddings",)
UPDATE_MODES = ("EntitySelected", "RegionSelected")  # Visdom's update_type of the script's answers
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_POINTS = 100_000


def _points(value: object, what: str) -> list[dict]:
    if not isinstance(value, list) or len(value) > MAX_POINTS or not all(isinstance(p, dict) for p in value):
        raise EventError(f"embeddings: {what} must be a list of at most {MAX_POINTS} point objects")
    return value


def validate(cmd: PaneCommand, raw: dict) -> dict:
    content = raw.get("embeddings")
    if not isinstance(content, dict):
        raise EventError("embeddings: expected embeddings: {...}")
    if cmd.op == "set":
        return {"data": _points(content.get("data", []), "data"), "isLoading": bool(content.get("isLoading"))}
    if cmd.mode == "RegionSelected":
        return {"points": _points(content.get("points"), "points")}
    selected = content.get("selected")
    return {"selected": selected if isinstance(selected, dict) else None}


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    """What apply keeps: the points, the script's selection and the views a lasso replaced."""
    no_steps("embeddings", steps)
    content = stored_object(content, "embeddings", ("data", "isLoading", "selected", "old_content"))
    _points(content.get("data", []), "data")
    if not isinstance(content.get("selected"), (dict, type(None))):
        raise EventError("embeddings: selected must be an object or null")
    old = content.get("old_content", [])
    if not isinstance(old, list):
        raise EventError("embeddings: old_content must be a list of earlier point lists")
    for i, points in enumerate(old):
        _points(points, f"old_content[{i}]")
    return content


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    if cmd.op == "set" or pane is None:
        content = {**cmd.payload, "data": cmd.payload.get("data", []), "selected": None, "old_content": []}
        pane = tx.put_pane(cmd.env, cmd.win, "embeddings", title_of(cmd.opts), cmd.opts, content)
    else:
        if pane.kind not in KINDS:
            raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not embeddings")
        c = dict(pane.content or {})
        if cmd.mode == "EntitySelected":
            c["selected"] = cmd.payload["selected"]
        else:  # a lasso: the script re-ran t-SNE on the selection; keep the previous view for "back"
            c["old_content"] = [*c.get("old_content", []), c.get("data", [])]
            c["data"] = cmd.payload["points"]
        pane = tx.update_pane(pane, content=c)
    deltas.pane(pane.env, pane.win, pane.version)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    c = pane.content or {}
    selected = c.get("selected")
    if isinstance(selected, dict) and isinstance(selected.get("html"), str):
        # The preview HTML comes from the script's data_getter: sanitized like every text pane.
        selected = {**selected, "html": sanitize(selected["html"])}
    return {"points": c.get("data", []), "selected": selected, "loading": bool(c.get("isLoading")),
            "has_previous": bool(c.get("old_content"))}

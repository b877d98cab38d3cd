"""Text panes: HTML stored as sent, sanitized on every read (so policy fixes apply to old data too)."""

from __future__ import annotations

import nh3

from ..deltas import Deltas
from ..events import Command, EventError
from ..store import PaneRecord, Store, StoreTx
from .common import merged_opts, title_of

KINDS = ("text",)
UPDATE_MODES = ("append", "replace")
MAX_TEXT = 4 * 1024 * 1024


def validate(cmd: Command, raw: dict) -> str:
    content = raw.get("content", "")
    if not isinstance(content, str):
        raise EventError("text: content must be a string")
    if len(content) > MAX_TEXT:
        raise EventError(f"text: content longer than {MAX_TEXT} characters")
    return content


def apply(tx: StoreTx, cmd: Command, deltas: Deltas) -> None:
    pane = tx.get_pane(cmd.env, cmd.win)
    if cmd.op == "set" or pane is None:
        if cmd.op == "update" and cmd.mode != "append":
            raise EventError(f"pane {cmd.win!r} does not exist in env {cmd.env!r}")
        pane = tx.put_pane(cmd.env, cmd.win, "text", title_of(cmd.opts), cmd.opts, {"html": cmd.payload})
        deltas.pane(pane.env, pane.win, pane.version)
        return
    if pane.kind not in KINDS:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not text")
    html = cmd.payload
    if cmd.mode == "append":
        old = (pane.content or {}).get("html", "")
        html = f"{old}<br>{html}" if old else html
    opts = merged_opts(pane, cmd)
    pane = tx.update_pane(pane, content={"html": html}, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None) -> dict:
    return {"html": sanitize((pane.content or {}).get("html", ""))}


def sanitize(html: str) -> str:
    """Strip scripts, event handlers and javascript: URLs; keep formatting tags."""
    return nh3.clean(html, link_rel="noopener noreferrer")

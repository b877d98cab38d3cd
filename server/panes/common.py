"""Helpers shared by pane kinds: option merging, titles, and checks of stored content."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StoreTx

PLOTLY_LAYOUT = "plotly_layout"  # where a Visdom window's Plotly layout lives in the opts of xy panes


def layout_title(layout: Any) -> str | None:
    """A Plotly layout's title, sent as a string (plotly.js 1-2) or as {"text": ...} (every version)."""
    title = layout.get("title") if isinstance(layout, dict) else None
    if isinstance(title, dict):
        title = title.get("text")
    return None if title is None or title == "" else str(title)


def title_of(opts: dict, layout: Any = None) -> str:
    """opts.title, else the title of the pane's Plotly layout (a raw `_send` figure may only have that one)."""
    title = opts.get("title")
    if title is not None:
        return str(title)
    return layout_title(layout if layout is not None else opts.get(PLOTLY_LAYOUT)) or ""


def merged_opts(pane: PaneRecord, cmd: PaneCommand) -> dict:
    """An update merges its non-null opts into the stored ones (Visdom's update_window semantics)."""
    return {**pane.opts, **{k: v for k, v in cmd.opts.items() if v is not None}}


_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def no_steps(kind: str, steps: list) -> None:
    """A kind without step records (all but the stepped ones) imports none."""
    if steps:
        raise EventError(f"{kind}: a {kind} pane has no step records")


def stored_object(content: Any, kind: str, keys: tuple[str, ...]) -> dict:
    """Stored content that must be an object with only these keys (what the kind's apply writes)."""
    if not isinstance(content, dict):
        raise EventError(f"{kind}: content must be an object")
    extra = set(content) - set(keys)
    if extra:
        raise EventError(f"{kind}: content has unknown field(s) {', '.join(sorted(map(str, extra)))[:200]}")
    return content


def blob_bytes(sha: Any, blobs: Mapping[str, bytes], what: str) -> bytes:
    """The bytes a stored blob reference names, from those an import brings."""
    if not isinstance(sha, str) or not _SHA256.match(sha):
        raise EventError(f"{what}: blob must be a sha256 (64 hex digits)")
    data = blobs.get(sha)
    if data is None:
        raise EventError(f"{what}: blob {sha[:16]}... is not in the archive")
    return data


def replace_content(tx: StoreTx, cmd: PaneCommand, deltas: Deltas, kind: str, kinds: tuple[str, ...]) -> None:
    """Apply a set or update of a pane whose content is replaced whole (a table, a network): an update keeps the
    pane's opts, merged with the command's, and refuses a pane of another kind."""
    pane = tx.get_pane(cmd.env, cmd.win)
    if cmd.op == "set" or pane is None:
        pane = tx.put_pane(cmd.env, cmd.win, kind, title_of(cmd.opts), cmd.opts, cmd.payload)
    else:
        if pane.kind not in kinds:
            raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not {kind}")
        opts = merged_opts(pane, cmd)
        pane = tx.update_pane(pane, content=cmd.payload, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)

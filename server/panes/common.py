"""Helpers shared by pane kinds: option merging and titles."""

from __future__ import annotations

from typing import Any

from ..commands.envelope import PaneCommand
from ..store import PaneRecord

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

"""Helpers shared by pane kinds: option merging and titles."""

from __future__ import annotations

from ..events import PaneCommand
from ..store import PaneRecord


def title_of(opts: dict) -> str:
    title = opts.get("title")
    return str(title) if title is not None else ""


def merged_opts(pane: PaneRecord, cmd: PaneCommand) -> dict:
    """An update merges its non-null opts into the stored ones (Visdom's update_window semantics)."""
    return {**pane.opts, **{k: v for k, v in cmd.opts.items() if v is not None}}

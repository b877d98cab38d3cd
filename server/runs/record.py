"""A run's JSON form (API, live messages) and its rendered notes."""

from __future__ import annotations

from typing import Any

from ..store import RunRecord

ACTIVE = ("running", "stalled")
STATUSES = ("running", "finished", "failed", "crashed", "stalled")


def notes_html(notes: str) -> str:
    """Markdown rendered, then sanitized like every text pane (no script, no handlers, no remote fetch)."""
    import markdown  # here: the pane registry (panes.text) imports the env ops, which import this module

    from ..panes.text import sanitize

    return sanitize(markdown.markdown(notes, extensions=["tables", "fenced_code"])) if notes else ""


def run_json(run: RunRecord | None, *, full: bool = True) -> dict[str, Any]:
    """The run record as the API shows it; `full` adds the rendered notes and a failed run's traceback."""
    if run is None:
        return {"status": None, "started": None, "ended": None, "tags": [], "notes": "", "provenance": None,
                **({"notes_html": "", "error": None} if full else {})}
    out: dict[str, Any] = {"status": run.status, "started": run.started, "ended": run.ended, "tags": list(run.tags),
                           "notes": run.notes, "provenance": run.provenance}
    if run.fork_from is not None:
        out["fork"] = {"from": run.fork_from, "step": run.fork_step}
    if full:  # listings leave the traceback out (they do not read it)
        out["notes_html"] = notes_html(run.notes)
        out["error"] = run.error
    return out

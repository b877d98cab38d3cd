"""A run's JSON form (API, live messages) and its rendered notes."""

from __future__ import annotations

import time
from typing import Any

from ..store import RunRecord

ACTIVE = ("running", "stalled")
STATUSES = ("running", "finished", "failed", "crashed", "stalled", "stopped", "active", "idle")
SOURCE = "visdom"          # provenance["source"] of a Visdom client's run (runs/visdom_run.py)
ACTIVE_STATUS = "active"   # such a run while its client writes ...
IDLE_STATUS = "idle"       # ... and once it has been quiet for IDLE_AFTER_S
# A Visdom client never ends its run: one that has not written for this long shows idle (it may write again,
# and then shows active). A minute spans a slow epoch's gaps between logged points without calling it idle.
IDLE_AFTER_S = 60.0


def notes_html(notes: str) -> str:
    """Markdown rendered, then sanitized like every text pane (no script, no handlers, no remote fetch)."""
    import markdown  # here: the pane registry (panes.text) imports the env ops, which import this module

    from ..panes.text import sanitize

    return sanitize(markdown.markdown(notes, extensions=["tables", "fenced_code"])) if notes else ""


def is_visdom_run(run: RunRecord | None) -> bool:
    return run is not None and isinstance(run.provenance, dict) and run.provenance.get("source") == SOURCE


def shown_status(run: RunRecord, now: float) -> tuple[str | None, float | None]:
    """The status and end a run shows at `now`: a Visdom run is idle after IDLE_AFTER_S without a write (its
    last write is its end); every other run shows what it stored."""
    if run.status != ACTIVE_STATUS or not is_visdom_run(run):
        return run.status, run.ended
    last = (run.provenance or {}).get("last_write")
    if isinstance(last, (int, float)) and now - last >= IDLE_AFTER_S:
        return IDLE_STATUS, float(last)
    return ACTIVE_STATUS, None


def run_json(run: RunRecord | None, *, full: bool = True) -> dict[str, Any]:
    """The run record as the API shows it; `full` adds the rendered notes and a failed run's traceback."""
    if run is None:
        return {"status": None, "started": None, "ended": None, "tags": [], "notes": "", "provenance": None,
                **({"notes_html": "", "error": None} if full else {})}
    status, ended = shown_status(run, time.time())
    out: dict[str, Any] = {"status": status, "started": run.started, "ended": ended, "tags": list(run.tags),
                           "notes": run.notes, "provenance": run.provenance}
    if run.fork_from is not None:
        out["fork"] = {"from": run.fork_from, "step": run.fork_step}
    if full:  # listings leave the traceback out (they do not read it)
        out["notes_html"] = notes_html(run.notes)
        out["error"] = run.error
    return out

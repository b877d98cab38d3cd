"""An env's run record in an archive (env.json "run"): status, times, tags, notes, provenance, error and fork
point, written on export and checked on import as the live run ops check them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from paneboard.protocol import MAX_ERROR_BYTES

from ..commands.envelope import EventError, check_name
from ..runs.ops import check_note, check_provenance, check_tags
from ..runs.record import STATUSES
from ..store import RunRecord, Store

FIELDS = {"status", "started", "ended", "tags", "notes", "provenance", "error", "fork_from", "fork_step"}


def export_run(store: Store, env: str) -> dict[str, Any] | None:
    """The run record as env.json's "run", None for an env no job ran (a Visdom env, an import)."""
    run = store.get_run(env)
    if run is None:
        return None
    return {"status": run.status, "started": run.started, "ended": run.ended, "tags": list(run.tags),
            "notes": run.notes, "provenance": run.provenance, "error": run.error, "fork_from": run.fork_from,
            "fork_step": run.fork_step}


def _time(value: Any, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EventError(f"{what} must be a number (seconds since the epoch) or null")
    return float(value)


def read_run(raw: Any, env: str, bad: Callable[[str], EventError]) -> RunRecord | None:
    """env.json's "run" as the record to store (no SDK client is running it here); `bad` words the errors."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise bad(f"env {env!r}: run must be an object")
    try:
        unknown = set(raw) - FIELDS
        if unknown:
            raise EventError(f"unknown field(s) {', '.join(sorted(map(str, unknown)))[:200]}")
        status = raw.get("status")
        if status is not None and status not in STATUSES:
            raise EventError(f"status must be one of {', '.join(STATUSES)} or null, got {str(status)[:40]!r}")
        error = raw.get("error")
        if error is not None and (not isinstance(error, str)
                                  or len(error.encode("utf-8", "surrogatepass")) > MAX_ERROR_BYTES):
            raise EventError(f"error must be a string of at most {MAX_ERROR_BYTES} bytes (a traceback)")
        provenance = raw.get("provenance")
        fork_from = raw.get("fork_from")
        return RunRecord(env=env, status=status, started=_time(raw.get("started"), "started"),
                         ended=_time(raw.get("ended"), "ended"), tags=tuple(check_tags(raw.get("tags") or [])),
                         notes=check_note(raw.get("notes") or ""),
                         provenance=None if provenance is None else check_provenance(provenance), error=error,
                         fork_from=None if fork_from is None else check_name(fork_from, "fork_from"),
                         fork_step=_time(raw.get("fork_step"), "fork_step"))
    except EventError as exc:
        raise bad(f"env {env!r}: run {exc}") from None

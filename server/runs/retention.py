"""Retention: which runs a delete-by-query takes (with an optional age limit), and deleting them."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

from ..commands.envelope import EnvCommand
from ..commands.jobs import Submit
from .record import ACTIVE

DAY = 86_400.0
BATCH = 500  # envs per writer transaction
# An env without a run record (a Visdom script, an import) written this recently may have a live writer: kept.
LIVE_WINDOW_S = 300.0
_SECRET = secrets.token_bytes(32)  # signs dry runs' confirmations (this process only: a restart voids them)


def select_runs(runs: list[dict[str, Any]], older_than_days: float | None, now: float) -> list[str]:
    """The envs of matching runs, leaving out running ones (a live job would re-create them) and, with an age
    limit, those updated within it."""
    cutoff = None if older_than_days is None else now - older_than_days * DAY
    return [r["env"] for r in runs
            if r["status"] not in ACTIVE and (cutoff is None or (r["updated"] or 0) < cutoff)
            and not (r["status"] is None and (r["updated"] or 0) > now - LIVE_WINDOW_S)]


def confirmation(envs: list[str], runs: dict[str, dict[str, Any]]) -> str:
    """What a dry run hands out for exactly these runs as they are now: a delete must bring it back, and it no
    longer matches once any of them changed (a write, a status change), was deleted or the list differs."""
    state = [[env, (runs.get(env) or {}).get("updated"), (runs.get(env) or {}).get("status")] for env in envs]
    return hmac.new(_SECRET, json.dumps(state).encode(), hashlib.sha256).hexdigest()


def confirmed(envs: list[str], token: str, runs: dict[str, dict[str, Any]], now: float) -> bool:
    """Whether `token` is the dry run's confirmation of these envs, unchanged since and still deletable."""
    if not hmac.compare_digest(confirmation(envs, runs), token):
        return False
    return select_runs([runs[e] for e in envs], None, now) == envs


def delete_envs(writer: Submit, envs: list[str]) -> int:
    """Delete the envs through the writer (the one path that writes); how many were deleted."""
    done = 0
    for i in range(0, len(envs), BATCH):
        part = envs[i:i + BATCH]
        result = writer.submit_wait([EnvCommand(op="delete_env", env=env) for env in part], timeout=600)
        if result.failed:
            raise RuntimeError(f"could not delete runs: {result.failed}")
        done += len(part) - len(result.errors)
    return done

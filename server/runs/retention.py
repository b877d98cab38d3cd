"""Retention: which runs a delete-by-query takes (with an optional age limit), and deleting them."""

from __future__ import annotations

from typing import Any

from ..commands.envelope import EnvCommand
from ..commands.jobs import Submit
from .record import ACTIVE

DAY = 86_400.0
BATCH = 500  # envs per writer transaction


def select_runs(runs: list[dict[str, Any]], older_than_days: float | None, now: float) -> list[str]:
    """The envs of matching runs, leaving out running ones (a live job would re-create them) and, with an age
    limit, those updated within it."""
    cutoff = None if older_than_days is None else now - older_than_days * DAY
    return [r["env"] for r in runs
            if r["status"] not in ACTIVE and (cutoff is None or (r["updated"] or 0) < cutoff)]


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

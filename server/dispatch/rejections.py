"""Rejections of a batch grouped by reason: one entry and one log line per distinct reason, with a count.

A batch of thousands of events failing alike would otherwise answer (and log) the same sentence thousands
of times; the grouped form still names every rejected event, by its `s` or index, in `also`.
"""

from __future__ import annotations

import logging
from typing import Any


def grouped(rejections: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """The first rejection of each reason, with `also`: the `key` values (s, index) of the others."""
    first: dict[str, dict[str, Any]] = {}
    for rej in rejections:
        reason = str(rej.get("error"))
        head = first.get(reason)
        if head is None:
            first[reason] = dict(rej)
        else:
            head.setdefault("also", []).append(rej.get(key))
    return list(first.values())


def count(rejection: dict[str, Any]) -> int:
    """How many events one grouped rejection stands for."""
    return 1 + len(rejection.get("also") or ())


def log_grouped(log: logging.Logger, rejections: list[dict[str, Any]], key: str, source: str) -> None:
    """One warning per reason: how many events, the first one's `key`, and the reason."""
    for rej in rejections:
        n = count(rej)
        more = f" and {n - 1} more" if n > 1 else ""
        log.warning("rejected event %s=%s%s from %s: %s", key, rej.get(key), more, source, rej.get("error"))

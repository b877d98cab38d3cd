"""Rejections of a batch grouped by reason: one log line per distinct reason with a count, and answers whose
size does not grow with the events failing alike.

A batch of thousands of events failing alike would otherwise answer (and log) the same sentence thousands
of times; the grouped form still names every rejected event, by its `s` or index, in `also`.
"""

from __future__ import annotations

import logging
from typing import Any

LISTED_PER_REASON = 16  # rejections of one reason listed alone in an answer before the rest go into `also`


def grouped(rejections: list[dict[str, Any]], key: str, listed: int = LISTED_PER_REASON) -> list[dict[str, Any]]:
    """The first `listed` rejections of each reason as they are; the `key` values (s, index) of its others in
    `also` of the last of those (a few alike stay one entry each, as SDKs before `also` read them)."""
    out: list[dict[str, Any]] = []
    seen: dict[str, tuple[int, dict[str, Any]]] = {}
    for rej in rejections:
        reason = str(rej.get("error"))
        n, last = seen.get(reason, (0, {}))
        if n < listed:
            last = dict(rej)
            out.append(last)
        else:
            last.setdefault("also", []).append(rej.get(key))
        seen[reason] = (n + 1, last)
    return out


def count(rejection: dict[str, Any]) -> int:
    """How many events one grouped rejection stands for."""
    return 1 + len(rejection.get("also") or ())


def log_grouped(log: logging.Logger, rejections: list[dict[str, Any]], key: str, source: str) -> None:
    """One warning per reason: how many events, the first one's `key`, and the reason."""
    for rej in grouped(rejections, key, listed=1):
        n = count(rej)
        more = f" and {n - 1} more" if n > 1 else ""
        log.warning("rejected event %s=%s%s from %s: %s", key, rej.get(key), more, source, rej.get("error"))

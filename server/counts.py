"""Counts as people read them: "1 run", "2 runs", in the CLI's reports and the pages the server writes."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """The count (with thousands separators) and its noun in the right number (plural: noun + "s")."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"

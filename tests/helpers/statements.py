"""The SQL one thread runs through an engine while it calls a function: what a test of "reads less" counts."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import event

T = TypeVar("T")


def statements(engine: Any, fn: Callable[[], T]) -> tuple[T, list[str]]:
    """fn's result and the SQL this thread ran meanwhile (the server's own threads use the same engine)."""
    me, seen = threading.get_ident(), []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if threading.get_ident() == me:
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        return fn(), seen
    finally:
        event.remove(engine, "before_cursor_execute", record)

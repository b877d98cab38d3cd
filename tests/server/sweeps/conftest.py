"""The sweep tests' server: each test runs on a SQLite file and again on a fresh PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path: Path, server_types: Any) -> Iterator[Any]:
    """An in-process server on SQLite, or on a new database of the throwaway PostgreSQL cluster."""
    if request.param == "sqlite":
        db: Any = tmp_path / "paneboard.db"
    else:
        db = request.getfixturevalue("postgres").new_database()
    srv = server_types.InProcessServer(db=db).start()
    try:
        yield srv
    finally:
        srv.stop()

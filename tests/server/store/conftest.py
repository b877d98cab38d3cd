"""The store folder's shared fixture: a SqlStore at the newest schema on each backend (db_url)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from paneboard.server.store import SqlStore
from paneboard.server.store.schema import ensure_schema


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    ensure_schema(db_url, db_url)
    s = SqlStore(db_url)
    yield s
    s.close()

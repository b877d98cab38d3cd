"""Shared settings in SQL: the SqlStore's part that keeps the settings every server on the database reads."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from .dialect import upsert
from .models import setting_t


class SqlSettings:
    """Mixed into SqlStore; each call is its own short transaction, outside the writer thread."""

    engine: Engine

    def get_setting(self, key: str) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(select(setting_t.c.value).where(setting_t.c.key == key)).scalar()

    def put_setting(self, key: str, value: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(upsert(conn, setting_t, ["key"], ["value", "updated"]),
                         {"key": key, "value": value, "updated": time.time()})

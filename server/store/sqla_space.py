"""Giving disk space back: SQLite incremental vacuum steps after deletes, and a full compaction on request.

A new SQLite file is created with auto_vacuum=INCREMENTAL (dialect.py), so the pages that deleted runs free can
be cut off the end of the file a bounded step at a time while the server runs. A file created before that has
auto_vacuum=NONE: one full compaction (`dash-server db compact`) switches it. PostgreSQL's autovacuum makes dead
rows reusable on its own; only VACUUM FULL shrinks its files, and it locks every table while it runs.
"""

from __future__ import annotations

import threading
import time

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

from .records import CompactReport, SpaceState

AUTO_VACUUM_INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL (0: NONE, 1: FULL)


def _raw_execscript(conn: Connection, sql: str) -> None:
    """Run PRAGMAs that must step to completion: Python's sqlite3 steps a statement without result columns
    only once through execute(), and `incremental_vacuum(N)` frees one page per step."""
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None
    dbapi.executescript(sql)  # type: ignore[attr-defined]


def space_state(conn: Connection) -> SpaceState:
    if conn.dialect.name != "sqlite":
        return SpaceState()
    read = conn.exec_driver_sql
    return SpaceState(page_size=int(read("PRAGMA page_size").scalar_one()),
                      pages=int(read("PRAGMA page_count").scalar_one()),
                      free_pages=int(read("PRAGMA freelist_count").scalar_one()),
                      incremental=int(read("PRAGMA auto_vacuum").scalar_one()) == AUTO_VACUUM_INCREMENTAL)


class SqlSpace:
    """Mixed into SqlStore: reclaim steps run on the writer's connection, between its transactions."""

    engine: Engine
    _writer_conn: Connection | None
    _writer_lock: threading.Lock

    def space_state(self) -> SpaceState:
        with self.engine.connect() as conn:
            return space_state(conn)

    def reclaim_space(self, max_pages: int) -> int:
        """Give back up to `max_pages` free pages to the file system; returns how many free pages are left
        (0 when nothing more can be given back this way: none left, not SQLite, or auto_vacuum is off)."""
        if self.engine.dialect.name != "sqlite":
            return 0
        with self._writer_lock:
            if self._writer_conn is None:
                self._writer_conn = self.engine.connect()
            conn = self._writer_conn
            state = space_state(conn)
            conn.rollback()  # end the autobegun read: executescript commits whatever is open
            if not state.incremental or state.free_pages == 0:
                return 0
            _raw_execscript(conn, f"PRAGMA incremental_vacuum({max(1, int(max_pages))})")
            left = space_state(conn).free_pages
            conn.rollback()
            if left == 0:
                # The file is cut at a checkpoint. SQLite's own comes only once the WAL holds 1,000 pages, so
                # the last steps' would wait for the next burst of writes; a passive one never waits on readers.
                _raw_execscript(conn, "PRAGMA wal_checkpoint(PASSIVE)")
            return left

    def compact(self) -> CompactReport:
        """Rewrite the whole database without its free space (SQLite: VACUUM, which also switches an old file to
        incremental auto-vacuum; PostgreSQL: VACUUM FULL ANALYZE, which locks each table while it is rewritten)."""
        started = time.perf_counter()
        with self.engine.connect() as conn:
            before = self._size(conn)
            if self.engine.dialect.name == "sqlite":
                conn.rollback()
                _raw_execscript(conn, f"PRAGMA auto_vacuum={AUTO_VACUUM_INCREMENTAL}; VACUUM; "
                                      "PRAGMA wal_checkpoint(TRUNCATE);")
            else:
                conn.commit()
                conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM FULL ANALYZE"))
            after = self._size(conn)
            conn.rollback()
        return CompactReport(before, after, time.perf_counter() - started)

    @staticmethod
    def _size(conn: Connection) -> int:
        if conn.dialect.name == "sqlite":
            state = space_state(conn)
            return state.pages * state.page_size
        return int(conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one())

"""Statements the writer runs on every commit: built and compiled once, run on the driver's cursor.

Building a Core statement costs more than running it, and SQLAlchemy's execution path far more than the
driver's own executemany; these few statements carry plain numbers and bytes (no type processing to skip), so
`run` hands them to the DBAPI cursor of the transaction's connection directly.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.dialects.postgresql import Insert as PgInsert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ClauseElement

from .dialect import upsert
from .models import chunk_t, client_t, env_t, pane_t, trace_t
from .sqla_runs import SUMMARY_COLUMNS

# Bind names differ from the column names: SQLAlchemy reserves those for the SET clause of an executemany.
BUMP_NPOINTS = update(trace_t).where(trace_t.c.id == bindparam("tid")).values(
    npoints=trace_t.c.npoints + bindparam("k"))
# The same with the trace's ingest-time summary (store.summary), written in the one UPDATE per trace and commit.
BUMP_NPOINTS_SUMMARY = update(trace_t).where(trace_t.c.id == bindparam("tid")).values(
    npoints=trace_t.c.npoints + bindparam("k"), **{c: bindparam("v_" + c) for c in SUMMARY_COLUMNS})
SET_PANE_VERSION = update(pane_t).where(pane_t.c.id == bindparam("pid")).values(
    version=bindparam("v"), updated=bindparam("t"))
SET_ENV_UPDATED = update(env_t).where(env_t.c.id == bindparam("eid")).values(updated=bindparam("t"))
INSERT_CHUNK = insert(chunk_t)  # every column: chunks.chunk_row gives each one

_COMPILED: dict[tuple[int, str], tuple[str, tuple[str, ...] | None]] = {}


def run(conn: Connection, stmt: ClauseElement, rows: list[dict[str, Any]]) -> None:
    """executemany of one of the statements above, in the transaction `conn` is in."""
    key = (id(stmt), conn.dialect.name)
    got = _COMPILED.get(key)
    if got is None:
        compiled = stmt.compile(dialect=conn.dialect)
        order = getattr(compiled, "positiontup", None)  # SQLCompiler: the bind names in order, if positional
        got = _COMPILED[key] = (str(compiled), tuple(order) if order is not None else None)
    sql, order = got
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        if order is None:  # named parameters (psycopg)
            cursor.executemany(sql, rows)
        else:  # positional (sqlite3)
            cursor.executemany(sql, [tuple(row[k] for k in order) for row in rows])
    finally:
        cursor.close()


_CLIENT_SEQ_UPSERTS: dict[str, SqliteInsert | PgInsert] = {}


def client_seq_upsert(conn: Connection) -> SqliteInsert | PgInsert:
    """INSERT ... ON CONFLICT of a client's last sequence number, one per dialect."""
    name = conn.dialect.name
    stmt = _CLIENT_SEQ_UPSERTS.get(name)
    if stmt is None:
        stmt = _CLIENT_SEQ_UPSERTS[name] = upsert(conn, client_t, ["client_id"], ["last_seq", "updated"])
    return stmt

"""Statements the writer runs on every commit, built once: building one costs ~6x running it (SQLAlchemy Core)."""

from __future__ import annotations

from sqlalchemy import bindparam, update
from sqlalchemy.dialects.postgresql import Insert as PgInsert
from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
from sqlalchemy.engine import Connection

from .dialect import upsert
from .models import client_t, env_t, pane_t, trace_t

# Bind names differ from the column names: SQLAlchemy reserves those for the SET clause of an executemany.
BUMP_NPOINTS = update(trace_t).where(trace_t.c.id == bindparam("tid")).values(
    npoints=trace_t.c.npoints + bindparam("k"))
SET_PANE_VERSION = update(pane_t).where(pane_t.c.id == bindparam("pid")).values(
    version=bindparam("v"), updated=bindparam("t"))
SET_ENV_UPDATED = update(env_t).where(env_t.c.id == bindparam("eid")).values(updated=bindparam("t"))

_CLIENT_SEQ_UPSERTS: dict[str, SqliteInsert | PgInsert] = {}


def client_seq_upsert(conn: Connection) -> SqliteInsert | PgInsert:
    """INSERT ... ON CONFLICT of a client's last sequence number, one per dialect."""
    name = conn.dialect.name
    stmt = _CLIENT_SEQ_UPSERTS.get(name)
    if stmt is None:
        stmt = _CLIENT_SEQ_UPSERTS[name] = upsert(conn, client_t, ["client_id"], ["last_seq", "updated"])
    return stmt

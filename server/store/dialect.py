"""The only place that knows SQL dialects apart: engine setup, conflict-tolerant inserts, inserted ids."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, event
from sqlalchemy.engine import Connection, CursorResult, Engine, make_url

if TYPE_CHECKING:
    from sqlalchemy.dialects.postgresql import Insert as PgInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert


# Values per IN (...) list: SQLite before 3.32 allows 999 bound parameters a statement; every batched read keeps
# under it, on PostgreSQL too (one batching rule for both).
IN_LIST_MAX = 900


def create_engine_for(url: str) -> Engine:
    from sqlalchemy import create_engine

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA busy_timeout=30000")
            # On a new file only, before WAL writes its header: deleted rows' pages can then be given back to the
            # file system a step at a time (sqla_space.py). A file that exists keeps its mode until VACUUM, and
            # asking for it there takes a write lock that a busy writer refuses at once (not through the timeout).
            if cur.execute("PRAGMA page_count").fetchone()[0] == 0:
                cur.execute("PRAGMA auto_vacuum=INCREMENTAL")
            # WAL lets readers run beside the single writer. FULL syncs the WAL at every commit: an ack
            # promises the data is stored, and NORMAL may lose the last commits to a power cut or OS crash.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    if parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")  # psycopg 3, not SQLAlchemy's psycopg2 default
    return create_engine(parsed, pool_pre_ping=True, pool_size=10, max_overflow=20)


def relax_durability(conn: Connection) -> None:
    """Commits on this connection (for as long as it lives) no longer wait for the disk: SQLite syncs its WAL only
    at checkpoints, PostgreSQL answers before its WAL is flushed. A crash of the server loses nothing of them; a
    power cut may lose the last ones."""
    if conn.dialect.name == "sqlite":  # taken only outside a transaction
        conn.exec_driver_sql("PRAGMA synchronous=NORMAL")
    else:
        conn.exec_driver_sql("SET synchronous_commit TO OFF")
    conn.commit()


def _dialect_insert(engine_or_conn: Connection | Engine, table: Table) -> SqliteInsert | PgInsert:
    name = engine_or_conn.dialect.name
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert
        return sqlite_insert(table)
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert
        return pg_insert(table)
    raise RuntimeError(f"unsupported database dialect {name}")  # pragma: no cover - only the two backends


def insert_ignore(conn: Connection, table: Table) -> SqliteInsert | PgInsert:
    """INSERT that silently skips rows whose primary key already exists."""
    return _dialect_insert(conn, table).on_conflict_do_nothing()


def upsert(conn: Connection, table: Table, key: list[str], update_cols: list[str]) -> SqliteInsert | PgInsert:
    """INSERT ... ON CONFLICT (key) DO UPDATE SET update_cols = excluded.update_cols."""
    stmt = _dialect_insert(conn, table)
    return stmt.on_conflict_do_update(index_elements=key, set_={c: stmt.excluded[c] for c in update_cols})


# -- cross-process live updates (PostgreSQL LISTEN/NOTIFY) -------------------------------------------------
PEER_CHANNEL = "paneboard_live"


def supports_peers(engine: Engine) -> bool:
    """Several dash-server processes can share live updates only through PostgreSQL."""
    return engine.dialect.name == "postgresql"


def notify_peers(engine: Engine, payloads: list[str]) -> None:
    from sqlalchemy import text

    with engine.begin() as conn:
        for payload in payloads:
            conn.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": PEER_CHANNEL, "payload": payload})


def listen_peers(engine: Engine, on_payload: Callable[[str], None], stop: threading.Event) -> None:
    """Block until `stop` is set, calling on_payload(text) for each notification (reconnecting on errors)."""
    import logging

    import psycopg

    log = logging.getLogger("paneboard.peers")
    conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    while not stop.is_set():
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                conn.execute(f"LISTEN {PEER_CHANNEL}")
                while not stop.is_set():
                    for note in conn.notifies(timeout=0.5):
                        if stop.is_set():
                            break  # woken by stop(): leave now rather than at the end of the wait
                        on_payload(note.payload)
        except Exception:
            log.exception("lost the PostgreSQL LISTEN connection; retrying")
            stop.wait(1.0)


def inserted_id(res: CursorResult[Any]) -> int:
    """The id of the row an INSERT ... VALUES just wrote (SQLAlchemy types the key optional for other statements)."""
    key = res.inserted_primary_key
    assert key is not None
    return key[0]

"""Schema management: create a fresh database at head, refuse an outdated one, upgrade on request."""

from __future__ import annotations

from functools import lru_cache

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from .. import MIGRATIONS_DIR
from .dialect import create_engine_for


class SchemaError(RuntimeError):
    """The database schema does not match this version of paneboard."""


def alembic_config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


@lru_cache(maxsize=1)
def head_revision() -> str | None:
    """The revision this paneboard's migrations end at (any database's; read once per process, since reading it
    executes every revision file)."""
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def current_revision(url: str) -> str | None:
    engine = create_engine_for(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "head") -> None:
    engine = create_engine_for(url)
    try:
        with engine.begin() as conn:
            cfg = alembic_config(url)
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    finally:
        engine.dispose()


def ensure_schema(url: str, db_hint: str) -> None:
    """A fresh (empty) database is created at head; one behind head is refused with instructions."""
    engine = create_engine_for(url)
    try:
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
    finally:
        engine.dispose()
    if not tables:
        upgrade(url)
        return
    current, head = current_revision(url), head_revision()
    if current != head:
        raise SchemaError(
            f"database {db_hint} is at schema revision {current or '(none)'}, this paneboard needs {head}; "
            f"back it up, then run: dash-server db upgrade --db {db_hint}")

"""Storage: the store interface, its SQLAlchemy implementation, schema management and the writer."""

from .base import (
    AlertRuleRecord,
    ConsoleLine,
    EnvSummary,
    OutboxRecord,
    PaneRecord,
    RunRecord,
    RunRow,
    Series,
    SeriesRow,
    ShareTokenRecord,
    StepRow,
    Store,
    StoreError,
    StoreTx,
    TraceRecord,
)
from .sqla_store import SqlStore

__all__ = ["AlertRuleRecord", "OutboxRecord", "ConsoleLine", "EnvSummary", "PaneRecord", "RunRecord", "RunRow", "SeriesRow", "Series", "ShareTokenRecord", "StepRow",
           "Store", "StoreError", "StoreTx", "TraceRecord", "SqlStore",
           "open_store"]


def open_store(url: str) -> Store:
    """The store for a database URL (sqlite:///path or postgresql+psycopg://...)."""
    return SqlStore(url)

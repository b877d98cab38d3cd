"""Storage: the store interface, its SQLAlchemy implementation, schema management and the writer."""

from .artifact_records import ArtifactRecord, RewindRecord
from .base import CONSOLE_BASE, RUN_COLOR, Store, StoreError, StoreTx
from .records import (
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
    TraceRecord,
)
from .sqla_store import SqlStore

__all__ = ["AlertRuleRecord", "ArtifactRecord", "RewindRecord", "OutboxRecord", "ConsoleLine", "EnvSummary", "PaneRecord", "RunRecord", "RunRow", "SeriesRow", "Series", "ShareTokenRecord", "StepRow",
           "Store", "StoreError", "StoreTx", "TraceRecord", "SqlStore",
           "open_store", "CONSOLE_BASE", "RUN_COLOR"]


def open_store(url: str) -> Store:
    """The store for a database URL (sqlite:///path or postgresql+psycopg://...)."""
    return SqlStore(url)

"""Bulky provenance parts stored once by content: runs of one environment (or one working tree) share a row
for their package list (~5 KB) and git diff instead of a copy each."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import delete, exists, or_, select
from sqlalchemy.engine import Connection

from .dialect import upsert
from .models import part_t, run_t

PART_COLUMNS = ("packages", "diff")  # run columns holding a part's digest


def digest_of(value: Any) -> str:
    """The sha256 of the value's canonical JSON (migration 0011 computes it the same way)."""
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def store_part(conn: Connection, value: Any) -> str | None:
    """The digest of `value` (None for None), its row written if new."""
    if value is None:
        return None
    digest = digest_of(value)
    # An upsert rather than insert-or-ignore: on PostgreSQL it locks the row until commit, so a concurrent
    # delete of the last other run cannot drop the part this run is about to refer to.
    conn.execute(upsert(conn, part_t, ["digest"], ["value"]), {"digest": digest, "value": value})
    return digest


def load_parts(conn: Connection, digests: list[str | None]) -> dict[str, Any]:
    wanted = sorted({d for d in digests if d is not None})
    if not wanted:
        return {}
    return dict(conn.execute(select(part_t.c.digest, part_t.c.value).where(part_t.c.digest.in_(wanted))).all())


def drop_unreferenced(conn: Connection, digests: set[str | None]) -> None:
    """Delete those of `digests` that no run refers to any more (after a run was deleted or changed a part)."""
    wanted = sorted({d for d in digests if d is not None})
    if not wanted:
        return
    referenced = exists().where(or_(*(run_t.c[c] == part_t.c.digest for c in PART_COLUMNS)))
    conn.execute(delete(part_t).where(part_t.c.digest.in_(wanted), ~referenced))

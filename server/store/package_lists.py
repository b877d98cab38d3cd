"""Provenance package lists stored once by content: runs of one environment share a row instead of 5 KB each."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import delete, exists, select
from sqlalchemy.engine import Connection

from .dialect import upsert
from .models import package_list_t, run_t


def digest_of(packages: Any) -> str:
    """The sha256 of the list's canonical JSON (migration 0011 computes it the same way)."""
    canonical = json.dumps(packages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def store_list(conn: Connection, packages: Any) -> str:
    """The digest of `packages`, its row written if new."""
    digest = digest_of(packages)
    # An upsert rather than insert-or-ignore: on PostgreSQL it locks the row until commit, so a concurrent
    # delete of the last other run cannot drop the list this run is about to refer to.
    conn.execute(upsert(conn, package_list_t, ["digest"], ["packages"]), {"digest": digest, "packages": packages})
    return digest


def load_list(conn: Connection, digest: str | None) -> Any:
    if digest is None:
        return None
    return conn.execute(select(package_list_t.c.packages).where(package_list_t.c.digest == digest)).scalar()


def drop_unreferenced(conn: Connection, digests: set[str]) -> None:
    """Delete those of `digests` that no run refers to any more (after a run was deleted or changed list)."""
    if not digests:
        return
    referenced = exists().where(run_t.c.packages == package_list_t.c.digest)
    conn.execute(delete(package_list_t).where(package_list_t.c.digest.in_(sorted(digests)), ~referenced))

"""Share tokens in SQL: the SqlStore's part that keeps read-only access tokens (as sha256 hashes)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.engine import Engine

from .models import share_t
from .records import ShareTokenRecord


def _record(row: Any) -> ShareTokenRecord:
    envs = row.envs
    return ShareTokenRecord(id=int(row.id), name=row.name or "", envs=None if envs is None else tuple(envs),
                            created=float(row.created))


class SqlShareTokens:
    """Mixed into SqlStore; each call is its own short transaction (see Store.add_share_token)."""

    engine: Engine

    def add_share_token(self, token_hash: str, name: str, envs: list[str] | None) -> ShareTokenRecord:
        with self.engine.begin() as conn:
            new_id = conn.execute(insert(share_t).values(token_hash=token_hash, name=name, envs=envs,
                                                         created=time.time()).returning(share_t.c.id)).scalar_one()
            return _record(conn.execute(select(share_t).where(share_t.c.id == new_id)).one())

    def find_share_token(self, token_hash: str) -> ShareTokenRecord | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(share_t).where(share_t.c.token_hash == token_hash)).first()
        return _record(row) if row is not None else None

    def list_share_tokens(self) -> list[ShareTokenRecord]:
        with self.engine.connect() as conn:
            return [_record(r) for r in conn.execute(select(share_t).order_by(share_t.c.id))]

    def delete_share_token(self, token_id: int) -> bool:
        if not 0 < token_id < 2**31:  # ids are 32-bit: a bigger number names no token (and overflows the driver)
            return False
        with self.engine.begin() as conn:
            return conn.execute(delete(share_t).where(share_t.c.id == token_id)).rowcount > 0

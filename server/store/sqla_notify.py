"""The notification outbox and the alert rules in SQL: short transactions of their own, outside the writer."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.engine import Engine

from .dialect import insert_ignore
from .models import notify_t, rule_t
from .records import AlertRuleRecord, OutboxRecord


def _rule(r: Any) -> AlertRuleRecord:
    return AlertRuleRecord(id=int(r.id), name=r.name or "", query=r.query, scope=r.scope or "",
                           cooldown_s=float(r.cooldown), fired=dict(r.fired or {}), created=float(r.created))


class SqlNotify:
    """Mixed into SqlStore (see Store.enqueue_notifications)."""

    engine: Engine

    def enqueue_notifications(self, rows: list[tuple[str, str, dict]], now: float) -> int:
        if not rows:
            return 0
        with self.engine.begin() as conn:
            res = conn.execute(insert_ignore(conn, notify_t),
                               [{"key": key, "url": url, "payload": payload, "created": now, "attempts": 0,
                                 "next_try": now, "delivered": None} for key, url, payload in rows])
            return max(res.rowcount or 0, 0)

    def due_notifications(self, now: float, limit: int = 100, url: str | None = None) -> list[OutboxRecord]:
        q = select(notify_t).where(notify_t.c.delivered.is_(None), notify_t.c.next_try <= now)
        if url is not None:
            q = q.where(notify_t.c.url == url)
        q = q.order_by(notify_t.c.id).limit(limit)
        with self.engine.connect() as conn:
            return [OutboxRecord(id=int(r.id), key=r.key, url=r.url, payload=r.payload, created=float(r.created),
                                 attempts=int(r.attempts), next_try=float(r.next_try)) for r in conn.execute(q)]

    def claim_notification(self, row: OutboxRecord, until: float) -> bool:
        # Optimistic: of several servers that read the same due row, the one whose update still finds it wins.
        with self.engine.begin() as conn:
            return conn.execute(update(notify_t).where(notify_t.c.id == row.id, notify_t.c.next_try == row.next_try,
                                                       notify_t.c.delivered.is_(None))
                                .values(next_try=until)).rowcount == 1

    def due_notification_urls(self, now: float) -> list[str]:
        with self.engine.connect() as conn:
            return list(conn.execute(select(notify_t.c.url).where(notify_t.c.delivered.is_(None),
                                                                  notify_t.c.next_try <= now).distinct()).scalars())

    def notification_counts(self) -> dict[str, int]:
        with self.engine.connect() as conn:
            pending = conn.execute(select(func.count()).where(notify_t.c.delivered.is_(None))).scalar_one()
            total = conn.execute(select(func.count()).select_from(notify_t)).scalar_one()
        return {"pending": int(pending), "settled": int(total) - int(pending)}

    def prune_notifications(self, settled_before: float, max_pending: int, batch: int = 10_000) -> dict[str, int]:
        done = notify_t.c.delivered
        with self.engine.begin() as conn:
            # delivered holds when (given up: minus when); both are kept only as long as their key must dedup
            conn.execute(delete(notify_t).where(or_(and_(done > 0, done < settled_before),
                                                    and_(done < 0, done > -settled_before))))
            pending = conn.execute(select(func.count()).where(done.is_(None))).scalar_one()
            excess = min(int(pending) - max_pending, batch)
            if excess <= 0:
                return {}
            oldest = conn.execute(select(notify_t.c.id, notify_t.c.payload).where(done.is_(None))
                                  .order_by(notify_t.c.id).limit(excess)).all()
            conn.execute(delete(notify_t).where(notify_t.c.id.in_([r.id for r in oldest])))
        dropped: dict[str, int] = {}
        for r in oldest:
            env = str((r.payload or {}).get("run") or "")
            dropped[env] = dropped.get(env, 0) + 1
        return dropped

    def next_notification_due(self) -> float | None:
        with self.engine.connect() as conn:
            return conn.execute(select(notify_t.c.next_try).where(notify_t.c.delivered.is_(None))
                                .order_by(notify_t.c.next_try).limit(1)).scalar()

    def settle_notification(self, row_id: int, delivered: float | None, attempts: int, next_try: float) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(notify_t).where(notify_t.c.id == row_id)
                         .values(delivered=delivered, attempts=attempts, next_try=next_try))

    def add_alert_rule(self, name: str, query: str, scope: str, cooldown_s: float, now: float) -> AlertRuleRecord:
        with self.engine.begin() as conn:
            new_id = conn.execute(insert(rule_t).values(name=name, query=query, scope=scope, cooldown=cooldown_s,
                                                        fired={}, created=now).returning(rule_t.c.id)).scalar_one()
            return _rule(conn.execute(select(rule_t).where(rule_t.c.id == new_id)).one())

    def list_alert_rules(self) -> list[AlertRuleRecord]:
        with self.engine.connect() as conn:
            return [_rule(r) for r in conn.execute(select(rule_t).order_by(rule_t.c.id))]

    def set_rule_fired(self, rule_id: int, fired: dict[str, float]) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(rule_t).where(rule_t.c.id == rule_id).values(fired=fired))

    def delete_alert_rule(self, rule_id: int) -> bool:
        if not 0 < rule_id < 2**31:
            return False
        with self.engine.begin() as conn:
            return conn.execute(delete(rule_t).where(rule_t.c.id == rule_id)).rowcount > 0

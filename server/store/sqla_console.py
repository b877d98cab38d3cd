"""Console lines in SQL: the writer's upsert, a fork's copy and cut, and the SqlStore's reads (paged, the tail,
a text search)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, delete, func, insert, literal, select
from sqlalchemy.engine import Connection, Engine

from .dialect import upsert
from .models import console_t, env_t
from .records import ConsoleLine

_C = console_t.c


def put_lines(conn: Connection, env_id: int, rank: int, rows: list[tuple[int, float, str, str, bool]]) -> None:
    if rows:
        conn.execute(upsert(conn, console_t, ["env_id", "rank", "n"], ["t", "stream", "text", "open"]),
                     [{"env_id": env_id, "rank": rank, "n": n, "t": t, "stream": stream, "text": text, "open": o}
                      for n, t, stream, text, o in rows])


def delete_lines(conn: Connection, env_id: int) -> None:
    conn.execute(delete(console_t).where(_C.env_id == env_id))


def last_lines(conn: Connection, env_id: int) -> dict[int, int]:
    """The highest line number of each rank of the env."""
    q = select(_C.rank, func.max(_C.n)).where(_C.env_id == env_id).group_by(_C.rank)
    return {int(rank): int(n) for rank, n in conn.execute(q)}


def copy_lines(conn: Connection, src_id: int, dst_id: int) -> None:
    """Every line of one env into another (a fork), copied inside the database."""
    cols = [_C.rank, _C.n, _C.t, _C.stream, _C.open, _C.text]
    conn.execute(insert(console_t).from_select(
        ["env_id"] + [c.name for c in cols], select(literal(dst_id, Integer), *cols).where(_C.env_id == src_id)))


def cut_after(conn: Connection, env_id: int, t: float) -> None:
    """Drop the lines printed after time t (a fork's copy of what the source printed past the fork step)."""
    conn.execute(delete(console_t).where(_C.env_id == env_id, _C.t > t))


def _line(r: Any) -> ConsoleLine:
    m = r._mapping  # (a Row's own .t is a deprecated alias, not the column)
    return ConsoleLine(rank=int(m["rank"]), n=int(m["n"]), t=float(m["t"]), stream=m["stream"], text=m["text"],
                       open=bool(m["open"]))


class SqlConsole:
    """Mixed into SqlStore; reads outside the writer thread."""

    engine: Engine

    def read_console(self, env: str, rank: int, after: int = 0, limit: int = 1000, tail: int | None = None,
                     contains: str | None = None) -> list[ConsoleLine]:
        env_id = select(env_t.c.id).where(env_t.c.name == env).scalar_subquery()
        q = select(console_t).where(_C.env_id == env_id, _C.rank == rank, _C.n > after)
        if contains:
            # LIKE's own wildcards in the search text are literal here
            pattern = "%" + contains.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            q = q.where(func.lower(_C.text).like(pattern, escape="\\"))
        if tail is not None:
            q = q.order_by(_C.n.desc()).limit(tail)
        else:
            q = q.order_by(_C.n).limit(limit)
        with self.engine.connect() as conn:
            lines = [_line(r) for r in conn.execute(q)]
        return lines[::-1] if tail is not None else lines

    def console_ranks(self, env: str) -> list[int]:
        env_id = select(env_t.c.id).where(env_t.c.name == env).scalar_subquery()
        with self.engine.connect() as conn:
            return sorted(int(r) for r in conn.execute(select(_C.rank).distinct().where(_C.env_id == env_id)).scalars())

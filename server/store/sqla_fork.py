"""An env's panes, steps, traces, point chunks and digests copied into its fork inside the database, never decoded."""

from __future__ import annotations

from sqlalchemy import Integer, insert, literal, select
from sqlalchemy.engine import Connection

from . import sqla_runs
from .dialect import inserted_id
from .models import chunk_t, digest_t, pane_t, step_t, trace_t


def copy_panes(conn: Connection, src_id: int, dst_id: int) -> tuple[list[int], list[int]]:
    """Copies every pane of env `src_id` into env `dst_id`; returns the new pane ids and trace ids, which the
    writer's caches must forget (SQLite may reuse the id of a deleted row)."""
    panes: list[int] = []
    traces: list[int] = []
    c, st = chunk_t.c, step_t.c
    for p in conn.execute(select(pane_t).where(pane_t.c.env_id == src_id).order_by(pane_t.c.position)).all():
        new_pane = inserted_id(conn.execute(insert(pane_t).values(
            env_id=dst_id, win=p.win, kind=p.kind, title=p.title, opts=p.opts, content=p.content, layout=p.layout,
            position=p.position, version=p.version, created=p.created, updated=p.updated)))
        panes.append(new_pane)
        conn.execute(insert(step_t).from_select(
            ["pane_id", "idx", "step", "wall", "blob", "data"],
            select(literal(new_pane, Integer), st.idx, st.step, st.wall, st.blob, st.data).where(st.pane_id == p.id)))
        for t in conn.execute(select(trace_t).where(trace_t.c.pane_id == p.id)).all():
            new_trace = inserted_id(conn.execute(insert(trace_t).values(
                pane_id=new_pane, idx=t.idx, name=t.name, style=t.style, npoints=t.npoints,
                **{k: getattr(t, k) for k in sqla_runs.SUMMARY_COLUMNS})))
            traces.append(new_trace)
            # Chunk rows are copied as they are: the fork owns its rows, so the tail merge of either trace
            # can never rewrite the other's points.
            cols = [c.seq, c.n, c.x0, c.x1, c.ymin, c.ymax, c.x_ymin, c.x_ymax, c.xs, c.ys, c.walls]
            conn.execute(insert(chunk_t).from_select(
                ["trace_id"] + [col.name for col in cols],
                select(literal(new_trace, Integer), *cols).where(c.trace_id == t.id)))
            d = digest_t.c  # digests describe the copied chunks exactly: copied as they are too
            conn.execute(insert(digest_t).from_select(
                ["trace_id", "page", "data"], select(literal(new_trace, Integer), d.page, d.data).where(d.trace_id == t.id)))
    return panes, traces

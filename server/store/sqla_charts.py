"""Reads of many envs at once for the chart pages: their chart panes with traces, and their metas, in a few queries."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import and_, or_, select
from sqlalchemy.engine import Engine

from .models import env_t, pane_t, trace_t
from .records import ChartLine, PaneRecord, TraceRecord

BATCH = 900  # names or ids per IN (...): SQLite allows 999 bound parameters before 3.32


class SqlCharts:
    """A mixin of SqlStore: a sweep's thousand envs cost a handful of queries, not a few per env."""

    engine: Engine

    def chart_panes(self, envs: list[str], kinds: tuple[str, ...], title: str | None = None,
                    traces: bool = True, bare: bool = False) -> dict[str, list[tuple[PaneRecord, list[TraceRecord]]]]:
        p = pane_t.c
        # bare: no JSON column is read (decoding opts, layout and style was half of listing 15,000 panes).
        cols = [p.id, p.win, p.kind, p.title, p.position, p.version, p.created, p.updated, env_t.c.name]
        if not bare:
            cols += [p.opts, p.layout]
        out: dict[str, list[tuple[PaneRecord, list[TraceRecord]]]] = {e: [] for e in envs}
        panes: dict[int, PaneRecord] = {}
        with self.engine.connect() as conn:
            for k in range(0, len(envs), BATCH):
                q = (select(*cols).join(env_t, p.env_id == env_t.c.id)
                     .where(env_t.c.name.in_(envs[k:k + BATCH]), p.kind.in_(kinds)).order_by(p.position))
                if title is not None:  # a chart's title is the pane's, or its win when it has none
                    q = q.where(or_(p.title == title, and_(p.title == "", p.win == title)))
                for r in conn.execute(q):  # content (a text pane's body, a figure) is not read: charts need none
                    panes[r.id] = PaneRecord(id=r.id, env=r.name, win=r.win, kind=r.kind, title=r.title,
                                             opts={} if bare else r.opts or {}, content=None, position=r.position,
                                             version=r.version, created=r.created, updated=r.updated,
                                             layout=None if bare else r.layout)
            found: dict[int, list[TraceRecord]] = {i: [] for i in panes}
            ids = list(panes) if traces else []
            t = trace_t.c
            for k in range(0, len(ids), BATCH):
                tcols = [t.id, t.pane_id, t.idx, t.name, t.npoints] + ([] if bare else [t.style])
                q = select(*tcols).where(t.pane_id.in_(ids[k:k + BATCH])).order_by(t.pane_id, t.idx)
                for r in conn.execute(q):
                    style = {} if bare else r.style or {}
                    found[r.pane_id].append(TraceRecord(r.id, r.pane_id, r.idx, r.name, style, r.npoints))
        for pane in panes.values():  # in position order, as list_panes
            out[pane.env].append((pane, found[pane.id]))
        return out

    def chart_lines(self, envs: list[str], kinds: tuple[str, ...], match: Callable[[str], bool],
                    glob: str | None = None) -> dict[str, list[ChartLine]]:
        """One query (per BATCH envs) of traces joined with their panes, only the columns a line needs: records
        are built for the matching tags alone (3,000 of 5 runs' 30,000 panes: a tenth of chart_panes' cost).
        `glob` (match's own pattern) narrows the query with a LIKE that passes at least its tags."""
        p, t, e = pane_t.c, trace_t.c, env_t.c
        like = like_superset(glob) if glob else "%"
        found: dict[str, list[ChartLine]] = {env: [] for env in envs}
        tested: dict[str, bool] = {}  # title -> match(title): every run has the same tags
        with self.engine.connect() as conn:
            for k in range(0, len(envs), BATCH):
                q = (select(e.name, p.win, p.title, t.id, t.pane_id, t.idx, t.name, t.npoints)
                     .select_from(trace_t.join(pane_t, t.pane_id == p.id).join(env_t, p.env_id == e.id))
                     .where(e.name.in_(envs[k:k + BATCH]), p.kind.in_(kinds)).order_by(p.position, p.id, t.idx))
                if like != "%":
                    q = q.where(or_(p.title.like(like, escape="\\"),
                                    and_(p.title == "", p.win.like(like, escape="\\"))))
                for env, win, title, trace_id, pane_id, idx, name, npoints in conn.execute(q).all():
                    title = title or win
                    ok = tested.get(title)
                    if ok is None:
                        ok = tested[title] = bool(match(title))
                    if ok:
                        found[env].append(ChartLine(win, title, TraceRecord(trace_id, pane_id, idx, name, {}, npoints)))
        return found

    def env_metas(self, envs: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        with self.engine.connect() as conn:
            for k in range(0, len(envs), BATCH):
                q = select(env_t.c.name, env_t.c.meta).where(env_t.c.name.in_(envs[k:k + BATCH]))
                out.update((r.name, dict(r.meta or {})) for r in conn.execute(q))
        return out


def like_superset(glob: str) -> str:
    """A LIKE pattern passing every string fnmatchcase(s, glob) passes (and maybe more: SQLite's LIKE ignores ASCII
    case; a "[...]" set and all after it become "%")."""
    out = []
    for ch in glob:
        if ch == "[":
            out.append("%")
            break
        out.append({"*": "%", "?": "_", "%": "\\%", "_": "\\_", "\\": "\\\\"}.get(ch, ch))
    return "".join(out)

"""The run records and series summaries of the SQLAlchemy store: rows in, plain records out."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.engine import Connection

from . import provenance_parts
from .dialect import upsert
from .models import env_t, pane_t, run_t, trace_t
from .records import RunRecord, RunRow, SeriesRow
from .summary import Summary

ACTIVE = ("running", "stalled")
SUMMARY_COLUMNS = ("s_count", "s_last_x", "s_last_y", "s_min_x", "s_min_y", "s_max_x", "s_max_y")


def run_from_row(r: Any, env: str, details: dict | None = None) -> RunRecord:
    """The record of a row; `details` (the row's bulky part) merged back into the provenance when given."""
    provenance = r.provenance
    if details and provenance is not None:
        provenance = {**provenance, "packages": details.get("packages")}
        if "diff" in details and isinstance(provenance.get("git"), dict):
            provenance["git"] = {**provenance["git"], "diff": details["diff"]}
    return RunRecord(env=env, status=r.status, started=r.started, ended=r.ended, clients=tuple(r.clients or ()),
                     tags=tuple(r.tags or ()), notes=r.notes or "", provenance=provenance,
                     error=getattr(r, "error", None), fork_from=getattr(r, "fork_from", None),
                     fork_step=getattr(r, "fork_step", None))


def _split(provenance: dict | None) -> tuple[dict | None, dict | None]:
    """(light, details): the package list and the git diff go apart, so listing 10,000 runs never reads them."""
    if provenance is None:
        return None, None
    light = {k: v for k, v in provenance.items() if k != "packages"}
    details: dict[str, Any] = {"packages": provenance.get("packages")}
    git = provenance.get("git")
    if isinstance(git, dict) and "diff" in git:
        light["git"] = {k: v for k, v in git.items() if k != "diff"}
        details["diff"] = git["diff"]
    return light, details


def _details(conn: Connection, row: Any) -> dict | None:
    """The row's bulky part as one dict again: the stored details and the parts their digests name."""
    if row.details is None:
        return None
    digests = {c: row._mapping[c] for c in provenance_parts.PART_COLUMNS}
    parts = provenance_parts.load_parts(conn, list(digests.values()))
    return {**row.details, **{c: parts.get(d) for c, d in digests.items() if d is not None}}


def get_run(conn: Connection, env: str) -> RunRecord | None:
    q = select(run_t).join(env_t, run_t.c.env_id == env_t.c.id).where(env_t.c.name == env)
    row = conn.execute(q).first()
    return run_from_row(row, env, _details(conn, row)) if row else None


def _part_digests(conn: Connection, env_id: int) -> set[str | None]:
    row = conn.execute(select(*[run_t.c[c] for c in provenance_parts.PART_COLUMNS])
                       .where(run_t.c.env_id == env_id)).first()
    return set(row) if row is not None else set()


def put_run(conn: Connection, env_id: int, run: RunRecord) -> None:
    light, details = _split(run.provenance)
    digests: dict[str, str | None] = dict.fromkeys(provenance_parts.PART_COLUMNS)
    if details is not None:
        for c in provenance_parts.PART_COLUMNS:  # a part that is None stays in the details: it answers the same
            if details.get(c) is not None:
                digests[c] = provenance_parts.store_part(conn, details.pop(c))
    old = _part_digests(conn, env_id)
    values = {"env_id": env_id, "status": run.status, "started": run.started, "ended": run.ended,
              "clients": list(run.clients), "tags": list(run.tags), "notes": run.notes, "provenance": light,
              "details": details, **digests, "error": run.error,
              "fork_from": run.fork_from, "fork_step": run.fork_step}
    conn.execute(upsert(conn, run_t, ["env_id"], [k for k in values if k != "env_id"]), values)
    provenance_parts.drop_unreferenced(conn, old - set(digests.values()))


def delete_run(conn: Connection, env_id: int) -> None:
    old = _part_digests(conn, env_id)
    conn.execute(delete(run_t).where(run_t.c.env_id == env_id))
    provenance_parts.drop_unreferenced(conn, old)


def copy_run(conn: Connection, src_id: int, dst_id: int, env: str) -> None:
    """A fork keeps the source's tags, notes and provenance; no job runs the copy."""
    src = conn.execute(select(run_t).where(run_t.c.env_id == src_id)).first()
    if src is not None:
        run = run_from_row(src, env, _details(conn, src))
        status = None if run.status in ACTIVE else run.status
        put_run(conn, dst_id, RunRecord(env, status, run.started, run.ended, (), run.tags, run.notes, run.provenance,
                                        run.error))


_LIGHT = [c for c in run_t.c if c.name not in ("details", "packages", "diff", "error")]  # listings read none


def active_runs(conn: Connection, statuses: tuple[str, ...] = ACTIVE) -> list[RunRecord]:
    """The runs in these statuses (by default the ones a job still runs)."""
    q = select(*_LIGHT, env_t.c.name).join(env_t, run_t.c.env_id == env_t.c.id).where(run_t.c.status.in_(statuses))
    return [run_from_row(r, r.name) for r in conn.execute(q)]


def list_runs(conn: Connection, envs: list[str] | None) -> list[RunRow]:
    q = (select(env_t.c.name, env_t.c.created, env_t.c.updated, env_t.c.meta, *_LIGHT)
         .join(run_t, run_t.c.env_id == env_t.c.id, isouter=True).order_by(env_t.c.updated.desc()))
    if envs is not None:
        q = q.where(env_t.c.name.in_(envs))
    out = []
    for r in conn.execute(q):
        meta = r.meta or {}
        config, best, hparams, color = meta.get("config"), meta.get("best"), meta.get("hparams"), meta.get("color")
        out.append(RunRow(env=r.name, created=r.created, updated=r.updated,
                          run=run_from_row(r, r.name) if r.env_id is not None else None,
                          config=config if isinstance(config, dict) else {},
                          best=best if isinstance(best, dict) else {},
                          hparams=hparams if isinstance(hparams, dict) else {},
                          color=color if isinstance(color, str) else None))
    return out


def list_series(conn: Connection, envs: list[str] | None) -> list[SeriesRow]:
    t = trace_t.c
    sibling = trace_t.alias("sibling")
    ntraces = select(func.count()).select_from(sibling).where(sibling.c.pane_id == pane_t.c.id).scalar_subquery()
    q = (select(env_t.c.name, pane_t.c.win, t.name.label("trace"), ntraces.label("ntraces"),
                *[getattr(t, c) for c in SUMMARY_COLUMNS])
         .select_from(trace_t.join(pane_t, t.pane_id == pane_t.c.id).join(env_t, pane_t.c.env_id == env_t.c.id))
         .where(pane_t.c.kind == "line").order_by(env_t.c.id, pane_t.c.position, t.idx))
    if envs is not None:
        q = q.where(env_t.c.name.in_(envs))
    return [SeriesRow(r.name, r.win, r.trace, int(r.ntraces), int(r.s_count), r.s_last_x, r.s_last_y, r.s_min_x,
                      r.s_min_y, r.s_max_x, r.s_max_y) for r in conn.execute(q)]


def load_summary(conn: Connection, trace_id: int) -> Summary:
    r = conn.execute(select(*[getattr(trace_t.c, c) for c in SUMMARY_COLUMNS]).where(trace_t.c.id == trace_id)).first()
    if r is None:
        return Summary()
    return Summary(int(r.s_count), r.s_last_x, r.s_last_y, r.s_min_x, r.s_min_y, r.s_max_x, r.s_max_y)


def summary_values(s: Summary) -> dict[str, Any]:
    return {"s_count": s.count, "s_last_x": s.last_x, "s_last_y": s.last_y, "s_min_x": s.min_x, "s_min_y": s.min_y,
            "s_max_x": s.max_x, "s_max_y": s.max_y}


def reset_summary(conn: Connection, trace_id: int) -> None:
    conn.execute(update(trace_t).where(trace_t.c.id == trace_id).values(**summary_values(Summary())))

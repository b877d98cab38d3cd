"""Rewinds and artifact versions in the SQLAlchemy store: rows in, plain records out."""

from __future__ import annotations

import io
import json
from typing import Any, Protocol

import numpy as np
from sqlalchemy import delete, func, insert, select
from sqlalchemy.engine import Connection

from . import codec, sqla_console
from .artifact_records import ArtifactRecord, RewindRecord
from .dialect import insert_ignore
from .models import alias_t, artifact_t, chunk_t, env_t, rewind_t, use_t
from .records import PaneRecord, TraceRecord


class RewindTx(Protocol):
    """What a rewind needs of the write transaction it runs in (SqlTx, which mixes SqlArtifactsTx in)."""

    conn: Connection
    now: float

    def flush(self) -> None: ...
    def pane_wins(self, env: str) -> list[str]: ...
    def get_pane(self, env: str, win: str) -> PaneRecord | None: ...
    def traces(self, pane: PaneRecord) -> list[TraceRecord]: ...
    def replace_points(self, trace: TraceRecord, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> None: ...
    def touch_pane(self, pane: PaneRecord) -> int: ...
    def _env_id(self, name: str) -> int | None: ...


def _trace_points(conn: Connection, trace_id: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    c = chunk_t.c
    rows = conn.execute(select(c.xs, c.ys, c.walls).where(c.trace_id == trace_id).order_by(c.seq)).all()
    if not rows:
        empty = np.empty(0, dtype=np.float64)
        return empty, empty, empty
    xs, ys, walls = (np.concatenate([codec.decode(getattr(r, k)) for r in rows]) for k in ("xs", "ys", "walls"))
    return xs, ys, walls


def _pack(hidden: list[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]]) -> bytes:
    """The hidden points as one .npz: an index of (win, trace) and three arrays per entry."""
    arrays: dict[str, Any] = {"index": np.frombuffer(json.dumps([[w, t] for w, t, *_ in hidden]).encode(), np.uint8)}
    for k, (_, _, x, y, wall) in enumerate(hidden):
        arrays[f"x{k}"], arrays[f"y{k}"], arrays[f"w{k}"] = x, y, wall
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _unpack(data: bytes) -> list[dict]:
    with np.load(io.BytesIO(data)) as z:
        index = json.loads(z["index"].tobytes())
        return [{"win": win, "trace": trace, "x": z[f"x{k}"].tolist(), "y": z[f"y{k}"].tolist(),
                 "wall": z[f"w{k}"].tolist()} for k, (win, trace) in enumerate(index)]


def rewind(tx: RewindTx, env: str, step: float, keep: bool) -> list[PaneRecord]:
    """Cut every line trace of `env` to x <= step (order kept); the cut points go to a rewind row if `keep`."""
    tx.flush()  # points buffered earlier in this transaction are part of what is cut
    hidden: list[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]] = []
    changed: list[PaneRecord] = []
    for win in tx.pane_wins(env):
        pane = tx.get_pane(env, win)
        if pane is None or pane.kind != "line":
            continue
        cut = False
        for trace in tx.traces(pane):
            x, y, wall = _trace_points(tx.conn, trace.id)
            after = x > step  # NaN x (never stored by line panes) would stay
            if not after.any():
                continue
            hidden.append((win, trace.name, x[after], y[after], wall[after]))
            tx.replace_points(trace, x[~after], y[~after], wall[~after])
            cut = True
        if cut:
            tx.touch_pane(pane)
            changed.append(pane)
    env_id = tx._env_id(env)
    if hidden and keep and env_id is not None:
        tx.conn.execute(insert(rewind_t).values(env_id=env_id, step=step, wall=tx.now,
                                                points=sum(len(h[2]) for h in hidden), data=_pack(hidden)))
    if hidden and not keep and env_id is not None:
        # A fork's console ends where its source went past the step: when the first point after it was logged
        # (the SDK times lines to its 0.1 s collection, so a line printed with that point may stay or go).
        firsts = [float(np.nanmin(h[4])) for h in hidden if np.isfinite(h[4]).any()]
        if firsts:
            sqla_console.cut_after(tx.conn, env_id, min(firsts))
    return changed


def list_rewinds(conn: Connection, env: str) -> list[RewindRecord]:
    r = rewind_t.c
    q = (select(r.id, r.step, r.wall, r.points).join(env_t, r.env_id == env_t.c.id).where(env_t.c.name == env)
         .order_by(r.id))
    return [RewindRecord(row.id, env, row.step, row.wall, int(row.points)) for row in conn.execute(q)]


def rewound_points(conn: Connection, rewind_id: int) -> list[dict] | None:
    data = conn.execute(select(rewind_t.c.data).where(rewind_t.c.id == rewind_id)).scalar()
    return None if data is None else _unpack(data)


# -- artifacts ----------------------------------------------------------------------------------------------

def _record(conn: Connection, row: Any) -> ArtifactRecord:
    aliases = conn.execute(select(alias_t.c.alias).where(alias_t.c.name == row.name, alias_t.c.version == row.version)
                           .order_by(alias_t.c.alias)).scalars().all()
    users = conn.execute(select(use_t.c.env).where(use_t.c.version_id == row.id).order_by(use_t.c.wall)).scalars().all()
    return ArtifactRecord(name=row.name, version=row.version, uid=row.uid, type=row.type, size=int(row.size),
                          step=row.step, env=row.env, created=row.created, files=tuple(row.files or ()),
                          metadata=dict(row.meta or {}), aliases=tuple(aliases), used_by=tuple(users))


def add_artifact(conn: Connection, now: float, name: str, uid: str, type: str, files: list[dict], metadata: dict,
                 step: float | None, env: str | None, aliases: list[str]) -> ArtifactRecord:
    a = artifact_t.c
    row = conn.execute(select(artifact_t).where(a.uid == uid)).first()
    if row is None:
        newest = conn.execute(select(func.max(a.version)).where(a.name == name)).scalar()
        version = (newest or 0) + 1
        conn.execute(insert(artifact_t).values(
            name=name, version=version, uid=uid, type=type, size=sum(int(f["size"]) for f in files), step=step,
            env=env, created=now, files=files, meta=metadata))
        for alias in ["latest", *aliases]:  # an alias names one version: it moves here
            conn.execute(delete(alias_t).where(alias_t.c.name == name, alias_t.c.alias == alias))
            conn.execute(insert(alias_t).values(name=name, alias=alias, version=version))
        row = conn.execute(select(artifact_t).where(a.uid == uid)).one()
    return _record(conn, row)


def use_artifact(conn: Connection, now: float, name: str, version: int, env: str) -> bool:
    vid = conn.execute(select(artifact_t.c.id).where(artifact_t.c.name == name, artifact_t.c.version == version)
                       ).scalar()
    if vid is None:
        return False
    conn.execute(insert_ignore(conn, use_t), {"version_id": vid, "env": env, "wall": now})
    return True


def delete_artifact(conn: Connection, name: str, version: int) -> bool:
    """Drop one version (its uses and aliases go with it); "latest" moves to the newest version left."""
    a = artifact_t.c
    vid = conn.execute(select(a.id).where(a.name == name, a.version == version)).scalar()
    if vid is None:
        return False
    conn.execute(delete(use_t).where(use_t.c.version_id == vid))
    conn.execute(delete(alias_t).where(alias_t.c.name == name, alias_t.c.version == version))
    conn.execute(delete(artifact_t).where(a.id == vid))
    newest = conn.execute(select(func.max(a.version)).where(a.name == name)).scalar()
    if newest is not None and conn.execute(select(alias_t.c.version).where(
            alias_t.c.name == name, alias_t.c.alias == "latest")).scalar() is None:
        conn.execute(insert(alias_t).values(name=name, alias="latest", version=newest))
    return True


def artifact_blob_refs(conn: Connection) -> set[str]:
    """Every sha256 a file of some artifact version names."""
    return {f["sha256"] for (files,) in conn.execute(select(artifact_t.c.files)) for f in files or ()}


def find_artifact(conn: Connection, name: str, ref: str) -> ArtifactRecord | None:
    a = artifact_t.c
    if ref.startswith("@"):
        q = select(artifact_t).where(a.name == name, a.uid == ref[1:])
    elif ref[:1] == "v" and ref[1:].isdigit():
        q = select(artifact_t).where(a.name == name, a.version == int(ref[1:]))
    else:
        version = conn.execute(select(alias_t.c.version).where(alias_t.c.name == name, alias_t.c.alias == ref)
                               ).scalar()
        if version is None:
            return None
        q = select(artifact_t).where(a.name == name, a.version == version)
    row = conn.execute(q).first()
    return None if row is None else _record(conn, row)


def list_artifacts(conn: Connection, env: str | None, name: str | None, used_by: str | None) -> list[ArtifactRecord]:
    a = artifact_t.c
    q = select(artifact_t).order_by(a.name, a.version)
    if env is not None:
        q = q.where(a.env == env)
    if name is not None:
        q = q.where(a.name == name)
    if used_by is not None:
        q = q.where(a.id.in_(select(use_t.c.version_id).where(use_t.c.env == used_by)))
    return [_record(conn, row) for row in conn.execute(q).all()]


class SqlArtifactsTx:
    """SqlTx's rewinds and artifact writes (mixed in)."""

    conn: Connection
    now: float

    def rewind_env(self, env: str, step: float, keep: bool = True) -> list[PaneRecord]:
        return rewind(self, env, step, keep)  # type: ignore[arg-type]  # mixed into SqlTx only

    def add_artifact(self, name: str, uid: str, type: str, files: list[dict], metadata: dict, step: float | None,
                     env: str | None, aliases: list[str]) -> ArtifactRecord:
        return add_artifact(self.conn, self.now, name, uid, type, files, metadata, step, env, aliases)

    def use_artifact(self, name: str, version: int, env: str) -> bool:
        return use_artifact(self.conn, self.now, name, version, env)

    def delete_artifact(self, name: str, version: int) -> bool:
        return delete_artifact(self.conn, name, version)


class SqlArtifacts:
    """SqlStore's reads of rewinds and artifacts (mixed in)."""

    engine: Any

    def list_rewinds(self, env: str) -> list[RewindRecord]:
        with self.engine.connect() as conn:
            return list_rewinds(conn, env)

    def rewound_points(self, rewind_id: int) -> list[dict] | None:
        with self.engine.connect() as conn:
            return rewound_points(conn, rewind_id)

    def find_artifact(self, name: str, ref: str) -> ArtifactRecord | None:
        with self.engine.connect() as conn:
            return find_artifact(conn, name, ref)

    def list_artifacts(self, *, env: str | None = None, name: str | None = None, used_by: str | None = None
                       ) -> list[ArtifactRecord]:
        with self.engine.connect() as conn:
            return list_artifacts(conn, env, name, used_by)

    def artifact_blob_refs(self) -> set[str]:
        with self.engine.connect() as conn:
            return artifact_blob_refs(conn)

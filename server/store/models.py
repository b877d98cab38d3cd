"""SQLAlchemy table definitions; the Alembic revisions under migrations/ must match these (a test checks)."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Env(Base):
    __tablename__ = "env"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(256), unique=True, nullable=False)
    created: Mapped[float] = mapped_column(Float, nullable=False)
    updated: Mapped[float] = mapped_column(Float, nullable=False)
    forked_from: Mapped[str | None] = mapped_column(String(256), nullable=True)
    meta: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)


class Pane(Base):
    __tablename__ = "pane"
    __table_args__ = (UniqueConstraint("env_id", "win", name="uq_pane_env_win"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    env_id: Mapped[int] = mapped_column(ForeignKey("env.id", ondelete="CASCADE"), nullable=False)
    win: Mapped[str] = mapped_column(String(256), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    title: Mapped[str] = mapped_column(Text, nullable=False, default="")
    opts: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    # Kind-specific small state (text HTML, image blob reference); points never live here.
    content: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    layout: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    position: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    version: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    created: Mapped[float] = mapped_column(Float, nullable=False)
    updated: Mapped[float] = mapped_column(Float, nullable=False)


class Trace(Base):
    __tablename__ = "trace"
    __table_args__ = (UniqueConstraint("pane_id", "idx", name="uq_trace_pane_idx"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    pane_id: Mapped[int] = mapped_column(ForeignKey("pane.id", ondelete="CASCADE"), nullable=False)
    idx: Mapped[int] = mapped_column(Integer, nullable=False)
    name: Mapped[str] = mapped_column(Text, nullable=False)
    style: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)
    npoints: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # The series summary, kept at ingest (server/runs/summaries.py): finite y values, the last, lowest and
    # highest of them and the x of each; NULL until the trace holds one.
    s_count: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0, server_default="0")
    s_last_x: Mapped[float | None] = mapped_column(Float, nullable=True)
    s_last_y: Mapped[float | None] = mapped_column(Float, nullable=True)
    s_min_x: Mapped[float | None] = mapped_column(Float, nullable=True)
    s_min_y: Mapped[float | None] = mapped_column(Float, nullable=True)
    s_max_x: Mapped[float | None] = mapped_column(Float, nullable=True)
    s_max_y: Mapped[float | None] = mapped_column(Float, nullable=True)


class Chunk(Base):
    """Up to CHUNK_POINTS points of one trace, packed; summary columns let reads skip the blobs."""

    __tablename__ = "chunk"
    trace_id: Mapped[int] = mapped_column(ForeignKey("trace.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    n: Mapped[int] = mapped_column(Integer, nullable=False)
    x0: Mapped[float | None] = mapped_column(Float, nullable=True)
    x1: Mapped[float | None] = mapped_column(Float, nullable=True)
    ymin: Mapped[float | None] = mapped_column(Float, nullable=True)
    ymax: Mapped[float | None] = mapped_column(Float, nullable=True)
    x_ymin: Mapped[float | None] = mapped_column(Float, nullable=True)
    x_ymax: Mapped[float | None] = mapped_column(Float, nullable=True)
    # Blobs last: SQLite stops decoding a row at the last column a query asks for.
    xs: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    ys: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    walls: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class ChunkDigest(Base):
    """The summary columns of DIGEST_CHUNKS consecutive full chunks of a trace, packed in one small row.

    A full-range read takes the summaries from these rows instead of stepping through every ~7 KB chunk
    row (one page each): at 100M points ~770 digest rows instead of ~49,000 chunk rows (server/store/digests.py).
    """

    __tablename__ = "chunk_digest"
    trace_id: Mapped[int] = mapped_column(ForeignKey("trace.id", ondelete="CASCADE"), primary_key=True)
    page: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class Blob(Base):
    __tablename__ = "blob"
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    mime: Mapped[str] = mapped_column(String(64), nullable=False)
    size: Mapped[int] = mapped_column(Integer, nullable=False)
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)


class StepRecord(Base):
    """One step of a stepped pane (histogram, media, pr_curve): every step kept, in arrival order."""

    __tablename__ = "step_record"
    pane_id: Mapped[int] = mapped_column(ForeignKey("pane.id", ondelete="CASCADE"), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    step: Mapped[float] = mapped_column(Float, nullable=False)
    wall: Mapped[float] = mapped_column(Float, nullable=False)
    blob: Mapped[str | None] = mapped_column(String(64), nullable=True)  # sha256 of image/audio bytes
    data: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # last: the large column


class IngestClient(Base):
    """Highest committed event sequence per SDK client id: makes replays idempotent."""

    __tablename__ = "ingest_client"
    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    updated: Mapped[float] = mapped_column(Float, nullable=False)


class Run(Base):
    """The run record of an env a job wrote (status, times, provenance) and what a user adds (tags, notes)."""

    __tablename__ = "run"
    env_id: Mapped[int] = mapped_column(ForeignKey("env.id", ondelete="CASCADE"), primary_key=True,
                                        autoincrement=False)
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)  # None: no job reported (an import)
    started: Mapped[float | None] = mapped_column(Float, nullable=True)
    ended: Mapped[float | None] = mapped_column(Float, nullable=True)
    clients: Mapped[list] = mapped_column(JSON, nullable=False, default=list)  # SDK clients still running it
    tags: Mapped[list] = mapped_column(JSON, nullable=False, default=list)
    notes: Mapped[str] = mapped_column(Text, nullable=False, default="")
    provenance: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # without the two bulky parts:
    details: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # {} when there is a provenance
    # The bulky parts, read for one run only, by digest (provenance_part): the runs of one environment, or
    # launched from one working tree, share one copy of their package list and git diff.
    packages: Mapped[str | None] = mapped_column(String(64), nullable=True)
    diff: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)  # a failed run's traceback
    fork_from: Mapped[str | None] = mapped_column(String(256), nullable=True)  # the run a fork shares history with
    fork_step: Mapped[float | None] = mapped_column(Float, nullable=True)  # ... up to this step


class ProvenancePart(Base):
    """A bulky part of run provenances (a package list, a git diff), stored once whatever the number of runs
    that refer to it by digest."""

    __tablename__ = "provenance_part"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)  # sha256 of its canonical JSON
    value: Mapped[Any] = mapped_column(JSON, nullable=False)


class RunRewind(Base):
    """The points a rewind hid (x beyond `step`), packed: kept, so that a rewind can be looked at or undone."""

    __tablename__ = "run_rewind"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    env_id: Mapped[int] = mapped_column(ForeignKey("env.id", ondelete="CASCADE"), nullable=False)
    step: Mapped[float] = mapped_column(Float, nullable=False)
    wall: Mapped[float] = mapped_column(Float, nullable=False)
    points: Mapped[int] = mapped_column(BigInteger, nullable=False)
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)  # last: the large column


class ArtifactVersion(Base):
    """One logged version of an artifact: its files by content hash (the bytes live in the blob store)."""

    __tablename__ = "artifact_version"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_artifact_name_version"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(256), nullable=False)
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    uid: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)  # the SDK's id, known before vN
    type: Mapped[str] = mapped_column(String(64), nullable=False)
    size: Mapped[int] = mapped_column(BigInteger, nullable=False)
    step: Mapped[float | None] = mapped_column(Float, nullable=True)
    env: Mapped[str | None] = mapped_column(String(256), nullable=True)  # the run that logged it
    created: Mapped[float] = mapped_column(Float, nullable=False)
    files: Mapped[list] = mapped_column(JSON, nullable=False)  # [{"path", "sha256", "size"}]
    meta: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)


class ArtifactAlias(Base):
    """A movable name of one version ("latest", "best"...)."""

    __tablename__ = "artifact_alias"
    name: Mapped[str] = mapped_column(String(256), primary_key=True)
    alias: Mapped[str] = mapped_column(String(64), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, nullable=False)


class ArtifactUse(Base):
    """A run that used a version (use_artifact): the other half of the lineage."""

    __tablename__ = "artifact_use"
    version_id: Mapped[int] = mapped_column(ForeignKey("artifact_version.id", ondelete="CASCADE"), primary_key=True)
    env: Mapped[str] = mapped_column(String(256), primary_key=True)
    wall: Mapped[float] = mapped_column(Float, nullable=False)


class ConsoleLine(Base):
    """One line a job printed (stdout or stderr), numbered per rank; an open line (a progress bar) is rewritten."""

    __tablename__ = "console_line"
    env_id: Mapped[int] = mapped_column(ForeignKey("env.id", ondelete="CASCADE"), primary_key=True,
                                        autoincrement=False)
    rank: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    n: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    t: Mapped[float] = mapped_column(Float, nullable=False)
    stream: Mapped[str] = mapped_column(String(8), nullable=False)
    open: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)


class NotifyOutbox(Base):
    """A notification to POST to one webhook, kept until delivered: retried after a restart, sent once per key."""

    __tablename__ = "notify_outbox"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(255), unique=True, nullable=False)  # event id + receiver: dedup
    url: Mapped[str] = mapped_column(Text, nullable=False)
    payload: Mapped[dict] = mapped_column(JSON, nullable=False)
    created: Mapped[float] = mapped_column(Float, nullable=False)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_try: Mapped[float] = mapped_column(Float, nullable=False)
    delivered: Mapped[float | None] = mapped_column(Float, nullable=True)


class AlertRule(Base):
    """A threshold rule: runs matching `query` (within `scope`) notify, at most once per cool-down per run."""

    __tablename__ = "alert_rule"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, nullable=False, default="")
    query: Mapped[str] = mapped_column(Text, nullable=False)
    scope: Mapped[str] = mapped_column(Text, nullable=False, default="")
    cooldown: Mapped[float] = mapped_column(Float, nullable=False)
    fired: Mapped[dict] = mapped_column(JSON, nullable=False, default=dict)  # env -> last time it fired
    created: Mapped[float] = mapped_column(Float, nullable=False)


class WriterEpoch(Base):
    """One row counting writer transactions: on PostgreSQL each takes its lock, so writers on several servers
    commit one at a time and each sees whether another wrote since its own last commit."""

    __tablename__ = "writer_epoch"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    n: Mapped[int] = mapped_column(BigInteger, nullable=False)


class ServerSetting(Base):
    """A setting every server on the database shares (e.g. the crash grace), so that they all decide alike."""

    __tablename__ = "server_setting"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON, nullable=False)
    updated: Mapped[float] = mapped_column(Float, nullable=False)


class ShareToken(Base):
    """A read-only access token (all envs, or the listed ones); only its sha256 is kept, never the token."""

    __tablename__ = "share_token"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True, nullable=False)
    name: Mapped[str] = mapped_column(Text, nullable=False, default="")
    envs: Mapped[list | None] = mapped_column(JSON, nullable=True)  # None: every env
    created: Mapped[float] = mapped_column(Float, nullable=False)


class Sweep(Base):
    """A hyperparameter sweep (W&B's sweep configuration, parsed); its trials are runs (sweeps/)."""

    __tablename__ = "sweep"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    project: Mapped[str | None] = mapped_column(String(256), nullable=True)
    name: Mapped[str] = mapped_column(Text, nullable=False, default="")
    config: Mapped[dict] = mapped_column(JSON, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    created: Mapped[float] = mapped_column(Float, nullable=False)
    updated: Mapped[float] = mapped_column(Float, nullable=False)
    version: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)


class SweepTrial(Base):
    """One trial of a sweep: the configuration an agent ran, the run it logged to, the metric as reported."""

    __tablename__ = "sweep_trial"
    sweep_id: Mapped[str] = mapped_column(ForeignKey("sweep.id", ondelete="CASCADE"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    params: Mapped[dict] = mapped_column(JSON, nullable=False)
    config: Mapped[dict] = mapped_column(JSON, nullable=False)
    run: Mapped[str | None] = mapped_column(String(256), nullable=True)
    agent: Mapped[str | None] = mapped_column(String(128), nullable=True)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    steps: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")  # its value rows
    last_value: Mapped[float | None] = mapped_column(Float, nullable=True)  # the last of them
    system_attrs: Mapped[dict] = mapped_column(JSON, nullable=False)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    retry_of: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created: Mapped[float] = mapped_column(Float, nullable=False)
    started: Mapped[float | None] = mapped_column(Float, nullable=True)
    ended: Mapped[float | None] = mapped_column(Float, nullable=True)
    deadline: Mapped[float | None] = mapped_column(Float, nullable=True)


class SweepTrialValue(Base):
    """One metric value a trial reported (Optuna's step = `step`): a report appends its new ones, never rewrites."""

    __tablename__ = "sweep_trial_value"
    __table_args__ = (ForeignKeyConstraint(["sweep_id", "number"], ["sweep_trial.sweep_id", "sweep_trial.number"],
                                           ondelete="CASCADE"),)
    sweep_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    step: Mapped[int] = mapped_column(Integer, primary_key=True)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)  # NaN: SQLite stores it as NULL


Index("ix_pane_env_position", Pane.env_id, Pane.position)
Index("ix_step_record_pane_step", StepRecord.pane_id, StepRecord.step)
Index("ix_artifact_version_env", ArtifactVersion.env)
Index("ix_run_rewind_env", RunRewind.env_id)
Index("ix_run_packages", Run.packages)
Index("ix_run_diff", Run.diff)

# Declarative classes type __table__ as FromClause; they are Tables, which is what insert()/update() take.
env_t = cast(Table, Env.__table__)
pane_t = cast(Table, Pane.__table__)
trace_t = cast(Table, Trace.__table__)
chunk_t = cast(Table, Chunk.__table__)
digest_t = cast(Table, ChunkDigest.__table__)
blob_t = cast(Table, Blob.__table__)
client_t = cast(Table, IngestClient.__table__)
step_t = cast(Table, StepRecord.__table__)
epoch_t = cast(Table, WriterEpoch.__table__)
run_t = cast(Table, Run.__table__)
part_t = cast(Table, ProvenancePart.__table__)
share_t = cast(Table, ShareToken.__table__)
setting_t = cast(Table, ServerSetting.__table__)
rewind_t = cast(Table, RunRewind.__table__)
artifact_t = cast(Table, ArtifactVersion.__table__)
alias_t = cast(Table, ArtifactAlias.__table__)
use_t = cast(Table, ArtifactUse.__table__)
console_t = cast(Table, ConsoleLine.__table__)
notify_t = cast(Table, NotifyOutbox.__table__)
rule_t = cast(Table, AlertRule.__table__)
sweep_t = cast(Table, Sweep.__table__)
trial_t = cast(Table, SweepTrial.__table__)
trial_value_t = cast(Table, SweepTrialValue.__table__)

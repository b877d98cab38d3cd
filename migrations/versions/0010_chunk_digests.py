"""Chunk digests: every 64 full chunks' summary columns packed in one row, for full-range reads of long traces.

Backfills the digests of every trace already stored, from its chunk rows' summary columns (the blobs are not
read). The packing is copied here, not imported, so that this migration stays what it was when later code
changes.

Revision ID: 0010_chunk_digests
Revises: 0009_sweeps
Create Date: 2026-11-28 23:45:00.000000
"""

import numpy as np
import sqlalchemy as sa
from alembic import op

revision = '0010_chunk_digests'
down_revision = '0009_sweeps'
branch_labels = None
depends_on = None

DIGEST_CHUNKS = 64
CHUNK_POINTS = 2048
FIELDS = ("n", "x0", "x1", "ymin", "ymax", "x_ymin", "x_ymax")


def upgrade() -> None:
    digest = op.create_table('chunk_digest',
    sa.Column('trace_id', sa.Integer(), nullable=False),
    sa.Column('page', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['trace_id'], ['trace.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('trace_id', 'page')
    )
    _backfill(op.get_bind(), digest)


def _backfill(conn: sa.Connection, digest: sa.Table) -> None:
    traces = conn.execute(sa.text("SELECT trace_id FROM chunk GROUP BY trace_id HAVING count(*) >= :k"),
                          {"k": DIGEST_CHUNKS}).scalars().all()
    cols = ", ".join(FIELDS)
    for trace_id in traces:
        rows = conn.execute(sa.text(f"SELECT seq, {cols} FROM chunk WHERE trace_id = :t ORDER BY seq"),
                            {"t": trace_id}).all()
        out = []
        # Full chunks form a prefix with dense seqs from 0; a digest covers 64 of them, partial rows none.
        for page in range(len(rows) // DIGEST_CHUNKS):
            members = rows[page * DIGEST_CHUNKS:(page + 1) * DIGEST_CHUNKS]
            if any(r.seq != page * DIGEST_CHUNKS + k or r.n < CHUNK_POINTS for k, r in enumerate(members)):
                break
            table = np.array([[np.nan if v is None else v for v in r[1:]] for r in members], dtype="<f8")
            out.append({"trace_id": trace_id, "page": page, "data": table.tobytes()})
        if out:
            conn.execute(digest.insert(), out)


def downgrade() -> None:
    op.drop_table('chunk_digest')

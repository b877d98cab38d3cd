"""Provenance parts stored once: a run's package list and git diff move to provenance_part, named by digest.

A short run's bytes were mostly these two (~5 KB of package list, and the working tree's diff), the same in every
run of one environment or launched from one working tree. Moves every stored one that is not None out of
run.details into a row per distinct content; downgrade puts them back. The digest is computed here, not
imported, so that this migration stays what it was when later code changes.

Revision ID: 0011_provenance_parts
Revises: 0010_chunk_digests
Create Date: 2026-11-29 01:10:00.000000
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = '0011_provenance_parts'
down_revision = '0010_chunk_digests'
branch_labels = None
depends_on = None

PARTS = ("packages", "diff")  # keys of run.details, and the run columns naming their rows
BATCH = 500


def digest_of(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _tables() -> tuple[sa.TableClause, sa.TableClause]:
    run = sa.table('run', sa.column('env_id', sa.Integer()), sa.column('details', sa.JSON()),
                   *[sa.column(c, sa.String(64)) for c in PARTS])
    part = sa.table('provenance_part', sa.column('digest', sa.String(64)), sa.column('value', sa.JSON()))
    return run, part


def upgrade() -> None:
    op.create_table('provenance_part',
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('digest')
    )
    for c in PARTS:
        op.add_column('run', sa.Column(c, sa.String(length=64), nullable=True))
        op.create_index(f'ix_run_{c}', 'run', [c], unique=False)
    conn = op.get_bind()
    run, part = _tables()
    seen: set[str] = set()
    last = -1
    while True:  # in batches by env_id: a database of many runs is not held in memory at once
        rows = conn.execute(sa.select(run.c.env_id, run.c.details).where(run.c.env_id > last)
                            .order_by(run.c.env_id).limit(BATCH)).all()
        if not rows:
            break
        last = rows[-1].env_id
        for env_id, details in rows:
            if not isinstance(details, dict) or not any(details.get(c) is not None for c in PARTS):
                continue
            digests = {}
            for c in PARTS:
                if details.get(c) is not None:
                    value = details.pop(c)
                    digests[c] = digest_of(value)
                    if digests[c] not in seen:
                        conn.execute(part.insert().values(digest=digests[c], value=value))
                        seen.add(digests[c])
            conn.execute(run.update().where(run.c.env_id == env_id).values(details=details, **digests))


def downgrade() -> None:
    conn = op.get_bind()
    run, part = _tables()
    values = dict(conn.execute(sa.select(part.c.digest, part.c.value)).all())
    rows = conn.execute(sa.select(run.c.env_id, run.c.details, *[run.c[c] for c in PARTS])).all()
    for row in rows:
        digests = {c: row._mapping[c] for c in PARTS if row._mapping[c] is not None}
        if row.details is None or not digests:
            continue
        details = {**row.details, **{c: values.get(d) for c, d in digests.items()}}
        conn.execute(run.update().where(run.c.env_id == row.env_id).values(details=details))
    with op.batch_alter_table('run', schema=None) as batch_op:
        for c in PARTS:
            batch_op.drop_index(f'ix_run_{c}')
            batch_op.drop_column(c)
    op.drop_table('provenance_part')

"""Package lists stored once: a run's provenance package list moves to package_list, referenced by digest.

A short run's bytes were mostly its package list (~5 KB of the ~6 KB a run row took), the same list in every run
of one environment. Moves every stored list out of run.details (which keeps the git diff, if any) into a row per
distinct list; downgrade puts them back. The digest is computed here, not imported, so that this migration stays
what it was when later code changes.

Revision ID: 0011_package_lists
Revises: 0010_chunk_digests
Create Date: 2026-11-29 01:10:00.000000
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = '0011_package_lists'
down_revision = '0010_chunk_digests'
branch_labels = None
depends_on = None

BATCH = 500


def digest_of(packages: object) -> str:
    canonical = json.dumps(packages, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _run_table() -> sa.Table:
    return sa.table('run', sa.column('env_id', sa.Integer()), sa.column('details', sa.JSON()),
                    sa.column('packages', sa.String(64)))


def upgrade() -> None:
    lists = op.create_table('package_list',
    sa.Column('digest', sa.String(length=64), nullable=False),
    sa.Column('packages', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('digest')
    )
    op.add_column('run', sa.Column('packages', sa.String(length=64), nullable=True))
    op.create_index('ix_run_packages', 'run', ['packages'], unique=False)
    conn = op.get_bind()
    run = _run_table()
    seen: set[str] = set()
    last = None
    while True:  # in batches by env_id: a database of many runs is not held in memory at once
        q = sa.select(run.c.env_id, run.c.details).where(run.c.details.is_not(None)).order_by(run.c.env_id)
        if last is not None:
            q = q.where(run.c.env_id > last)
        rows = conn.execute(q.limit(BATCH)).all()
        if not rows:
            break
        for env_id, details in rows:
            last = env_id
            if not isinstance(details, dict) or "packages" not in details:
                continue
            packages = details["packages"]
            digest = None if packages is None else digest_of(packages)
            if digest is not None and digest not in seen:
                conn.execute(lists.insert().values(digest=digest, packages=packages))
                seen.add(digest)
            rest = {k: v for k, v in details.items() if k != "packages"}
            conn.execute(run.update().where(run.c.env_id == env_id).values(details=rest, packages=digest))


def downgrade() -> None:
    conn = op.get_bind()
    run = _run_table()
    lists = sa.table('package_list', sa.column('digest', sa.String(64)), sa.column('packages', sa.JSON()))
    packages = dict(conn.execute(sa.select(lists.c.digest, lists.c.packages)).all())
    rows = conn.execute(sa.select(run.c.env_id, run.c.details, run.c.packages).where(run.c.details.is_not(None)))
    for env_id, details, digest in rows.all():
        if details is None:  # JSON null (a run with no provenance), which IS NOT NULL does not tell apart
            continue
        conn.execute(run.update().where(run.c.env_id == env_id)
                     .values(details={**details, "packages": packages.get(digest)}))
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_index('ix_run_packages')
        batch_op.drop_column('packages')
    op.drop_table('package_list')

"""Runs: one record per env a job wrote (status, times, provenance, tags, notes); series summaries on traces.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 21:45:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

_SUMMARY = ('s_last_x', 's_last_y', 's_min_x', 's_min_y', 's_max_x', 's_max_y')


def upgrade() -> None:
    op.create_table('run',
    sa.Column('env_id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('status', sa.String(length=16), nullable=True),
    sa.Column('started', sa.Float(), nullable=True),
    sa.Column('ended', sa.Float(), nullable=True),
    sa.Column('clients', sa.JSON(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('notes', sa.Text(), nullable=False),
    sa.Column('provenance', sa.JSON(), nullable=True),
    sa.Column('details', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['env_id'], ['env.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('env_id')
    )
    # Existing traces start without a summary (s_count 0): it fills in with their next points.
    op.add_column('trace', sa.Column('s_count', sa.BigInteger(), server_default='0', nullable=False))
    for name in _SUMMARY:
        op.add_column('trace', sa.Column(name, sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('trace', schema=None) as batch_op:
        for name in ('s_count',) + _SUMMARY:
            batch_op.drop_column(name)
    op.drop_table('run')

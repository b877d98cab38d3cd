"""Initial schema: envs, panes, traces, chunked points, blobs, ingest client sequence numbers.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-22 14:18:55.011453
"""

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('blob',
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('mime', sa.String(length=64), nullable=False),
    sa.Column('size', sa.Integer(), nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.PrimaryKeyConstraint('sha256')
    )
    op.create_table('env',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('created', sa.Float(), nullable=False),
    sa.Column('updated', sa.Float(), nullable=False),
    sa.Column('forked_from', sa.String(length=256), nullable=True),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name')
    )
    op.create_table('ingest_client',
    sa.Column('client_id', sa.String(length=64), nullable=False),
    sa.Column('last_seq', sa.BigInteger(), nullable=False),
    sa.Column('updated', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('client_id')
    )
    op.create_table('pane',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('env_id', sa.Integer(), nullable=False),
    sa.Column('win', sa.String(length=256), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('opts', sa.JSON(), nullable=False),
    sa.Column('content', sa.JSON(), nullable=True),
    sa.Column('layout', sa.JSON(), nullable=True),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('version', sa.BigInteger(), nullable=False),
    sa.Column('created', sa.Float(), nullable=False),
    sa.Column('updated', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['env_id'], ['env.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('env_id', 'win', name='uq_pane_env_win')
    )
    with op.batch_alter_table('pane', schema=None) as batch_op:
        batch_op.create_index('ix_pane_env_position', ['env_id', 'position'], unique=False)

    op.create_table('trace',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('pane_id', sa.Integer(), nullable=False),
    sa.Column('idx', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('style', sa.JSON(), nullable=False),
    sa.Column('npoints', sa.BigInteger(), nullable=False),
    sa.ForeignKeyConstraint(['pane_id'], ['pane.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('pane_id', 'idx', name='uq_trace_pane_idx')
    )
    op.create_table('chunk',
    sa.Column('trace_id', sa.Integer(), nullable=False),
    sa.Column('seq', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('n', sa.Integer(), nullable=False),
    sa.Column('x0', sa.Float(), nullable=True),
    sa.Column('x1', sa.Float(), nullable=True),
    sa.Column('ymin', sa.Float(), nullable=True),
    sa.Column('ymax', sa.Float(), nullable=True),
    sa.Column('x_ymin', sa.Float(), nullable=True),
    sa.Column('x_ymax', sa.Float(), nullable=True),
    sa.Column('xs', sa.LargeBinary(), nullable=False),
    sa.Column('ys', sa.LargeBinary(), nullable=False),
    sa.Column('walls', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['trace_id'], ['trace.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('trace_id', 'seq')
    )


def downgrade() -> None:
    op.drop_table('chunk')
    op.drop_table('trace')
    with op.batch_alter_table('pane', schema=None) as batch_op:
        batch_op.drop_index('ix_pane_env_position')

    op.drop_table('pane')
    op.drop_table('ingest_client')
    op.drop_table('env')
    op.drop_table('blob')

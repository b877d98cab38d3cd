"""Step records: one row per step of histogram, media and PR-curve panes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 17:20:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('step_record',
    sa.Column('pane_id', sa.Integer(), nullable=False),
    sa.Column('idx', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('step', sa.Float(), nullable=False),
    sa.Column('wall', sa.Float(), nullable=False),
    sa.Column('blob', sa.String(length=64), nullable=True),
    sa.Column('data', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['pane_id'], ['pane.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('pane_id', 'idx')
    )
    with op.batch_alter_table('step_record', schema=None) as batch_op:
        batch_op.create_index('ix_step_record_pane_step', ['pane_id', 'step'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('step_record', schema=None) as batch_op:
        batch_op.drop_index('ix_step_record_pane_step')
    op.drop_table('step_record')

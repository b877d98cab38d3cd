"""Sweeps and their trials.

Revision ID: 0009_sweeps
Revises: 0008
Create Date: 2026-11-28 23:10:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0009_sweeps'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('sweep',
    sa.Column('id', sa.String(length=32), nullable=False),
    sa.Column('project', sa.String(length=256), nullable=True),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('created', sa.Float(), nullable=False),
    sa.Column('updated', sa.Float(), nullable=False),
    sa.Column('version', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('sweep_trial',
    sa.Column('sweep_id', sa.String(length=32), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('config', sa.JSON(), nullable=False),
    sa.Column('run', sa.String(length=256), nullable=True),
    sa.Column('agent', sa.String(length=128), nullable=True),
    sa.Column('value', sa.Float(), nullable=True),
    sa.Column('intermediate', sa.JSON(), nullable=False),
    sa.Column('system_attrs', sa.JSON(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('retry_of', sa.Integer(), nullable=True),
    sa.Column('created', sa.Float(), nullable=False),
    sa.Column('started', sa.Float(), nullable=True),
    sa.Column('ended', sa.Float(), nullable=True),
    sa.Column('deadline', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['sweep_id'], ['sweep.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('sweep_id', 'number')
    )


def downgrade() -> None:
    op.drop_table('sweep_trial')
    op.drop_table('sweep')

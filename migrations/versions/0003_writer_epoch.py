"""Writer epoch: one counter row that serializes writer transactions of several servers on PostgreSQL.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 22:30:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    epoch = op.create_table('writer_epoch',
    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.bulk_insert(epoch, [{'id': 1, 'n': 0}])


def downgrade() -> None:
    op.drop_table('writer_epoch')

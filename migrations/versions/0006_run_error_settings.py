"""A failed run's traceback; settings every server on one database shares (the crash grace).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26 04:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column('run', sa.Column('error', sa.Text(), nullable=True))
    op.create_table('server_setting',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('value', sa.JSON(), nullable=False),
    sa.Column('updated', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )


def downgrade() -> None:
    op.drop_table('server_setting')
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('error')

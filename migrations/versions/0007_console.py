"""A run's console lines; the notification outbox and the alert rules.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26 05:00:00.000000
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('console_line',
    sa.Column('env_id', sa.Integer(), nullable=False),
    sa.Column('rank', sa.Integer(), nullable=False),
    sa.Column('n', sa.BigInteger(), nullable=False),
    sa.Column('t', sa.Float(), nullable=False),
    sa.Column('stream', sa.String(length=8), nullable=False),
    sa.Column('open', sa.Boolean(), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['env_id'], ['env.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('env_id', 'rank', 'n')
    )
    op.create_table('notify_outbox',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=255), nullable=False),
    sa.Column('url', sa.Text(), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('created', sa.Float(), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_try', sa.Float(), nullable=False),
    sa.Column('delivered', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('key')
    )
    op.create_table('alert_rule',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('query', sa.Text(), nullable=False),
    sa.Column('scope', sa.Text(), nullable=False),
    sa.Column('cooldown', sa.Float(), nullable=False),
    sa.Column('fired', sa.JSON(), nullable=False),
    sa.Column('created', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )


def downgrade() -> None:
    op.drop_table('alert_rule')
    op.drop_table('notify_outbox')
    op.drop_table('console_line')

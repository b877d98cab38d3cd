"""Artifacts (versions, aliases, uses), the points a rewind hid, and where a forked run came from.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26 04:44:48.362483
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('artifact_alias',
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('alias', sa.String(length=64), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('name', 'alias')
    )
    op.create_table('artifact_version',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=256), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('uid', sa.String(length=64), nullable=False),
    sa.Column('type', sa.String(length=64), nullable=False),
    sa.Column('size', sa.BigInteger(), nullable=False),
    sa.Column('step', sa.Float(), nullable=True),
    sa.Column('env', sa.String(length=256), nullable=True),
    sa.Column('created', sa.Float(), nullable=False),
    sa.Column('files', sa.JSON(), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', 'version', name='uq_artifact_name_version'),
    sa.UniqueConstraint('uid')
    )
    with op.batch_alter_table('artifact_version', schema=None) as batch_op:
        batch_op.create_index('ix_artifact_version_env', ['env'], unique=False)

    op.create_table('artifact_use',
    sa.Column('version_id', sa.Integer(), nullable=False),
    sa.Column('env', sa.String(length=256), nullable=False),
    sa.Column('wall', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['version_id'], ['artifact_version.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('version_id', 'env')
    )
    op.create_table('run_rewind',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('env_id', sa.Integer(), nullable=False),
    sa.Column('step', sa.Float(), nullable=False),
    sa.Column('wall', sa.Float(), nullable=False),
    sa.Column('points', sa.BigInteger(), nullable=False),
    sa.Column('data', sa.LargeBinary(), nullable=False),
    sa.ForeignKeyConstraint(['env_id'], ['env.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('run_rewind', schema=None) as batch_op:
        batch_op.create_index('ix_run_rewind_env', ['env_id'], unique=False)

    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.add_column(sa.Column('fork_from', sa.String(length=256), nullable=True))
        batch_op.add_column(sa.Column('fork_step', sa.Float(), nullable=True))



def downgrade() -> None:
    with op.batch_alter_table('run', schema=None) as batch_op:
        batch_op.drop_column('fork_step')
        batch_op.drop_column('fork_from')

    with op.batch_alter_table('run_rewind', schema=None) as batch_op:
        batch_op.drop_index('ix_run_rewind_env')

    op.drop_table('run_rewind')
    op.drop_table('artifact_use')
    with op.batch_alter_table('artifact_version', schema=None) as batch_op:
        batch_op.drop_index('ix_artifact_version_env')

    op.drop_table('artifact_version')
    op.drop_table('artifact_alias')

"""A trial's metric values in rows of their own: a report appends its new ones instead of rewriting them all.

sweep_trial.intermediate (a JSON list rewritten, and read back, at every report: the cost grew with the trial's
length) becomes sweep_trial_value, one row per (trial, step), with the count and the last value on the trial's
row; downgrade puts the lists back.

Revision ID: 0012_sweep_trial_values
Revises: 0011_provenance_parts
Create Date: 2026-11-29 02:05:00.000000
"""

from collections.abc import Iterator

import sqlalchemy as sa
from alembic import op

revision = '0012_sweep_trial_values'
down_revision = '0011_provenance_parts'
branch_labels = None
depends_on = None

BATCH = 500


def _tables() -> tuple[sa.TableClause, sa.TableClause]:
    trial = sa.table('sweep_trial', sa.column('sweep_id', sa.String(32)), sa.column('number', sa.Integer()),
                     sa.column('intermediate', sa.JSON()), sa.column('steps', sa.Integer()),
                     sa.column('last_value', sa.Float()))
    value = sa.table('sweep_trial_value', sa.column('sweep_id', sa.String(32)), sa.column('number', sa.Integer()),
                     sa.column('step', sa.Integer()), sa.column('value', sa.Float()))
    return trial, value


def _batches(conn: sa.Connection, trial: sa.TableClause, query: sa.Select) -> Iterator[list]:
    """The trials' rows by key, BATCH at a time: a database of many long trials is not held in memory at once."""
    last: tuple = ('', -1)
    while True:
        after = sa.tuple_(trial.c.sweep_id, trial.c.number) > sa.tuple_(*last)
        rows = conn.execute(query.where(after).order_by(trial.c.sweep_id, trial.c.number).limit(BATCH)).all()
        if not rows:
            return
        last = (rows[-1].sweep_id, rows[-1].number)
        yield rows


def upgrade() -> None:
    op.create_table('sweep_trial_value',
    sa.Column('sweep_id', sa.String(length=32), nullable=False),
    sa.Column('number', sa.Integer(), nullable=False),
    sa.Column('step', sa.Integer(), nullable=False),
    sa.Column('value', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['sweep_id', 'number'], ['sweep_trial.sweep_id', 'sweep_trial.number'],
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('sweep_id', 'number', 'step')
    )
    with op.batch_alter_table('sweep_trial') as batch:
        batch.add_column(sa.Column('steps', sa.Integer(), nullable=False, server_default='0'))
        batch.add_column(sa.Column('last_value', sa.Float(), nullable=True))
    conn = op.get_bind()
    trial, value = _tables()
    for rows in _batches(conn, trial, sa.select(trial.c.sweep_id, trial.c.number, trial.c.intermediate)):
        for sweep_id, number, values in rows:
            values = [float(v) for v in values or ()]
            if not values:
                continue
            conn.execute(sa.insert(value), [{'sweep_id': sweep_id, 'number': number, 'step': i + 1, 'value': v}
                                            for i, v in enumerate(values)])
            conn.execute(sa.update(trial).where(trial.c.sweep_id == sweep_id, trial.c.number == number)
                         .values(steps=len(values), last_value=values[-1]))
    # The values table refers to sweep_trial: SQLite drops a column in place (3.35+), no table rebuild that would
    # cascade the new rows away.
    op.drop_column('sweep_trial', 'intermediate')


def downgrade() -> None:
    with op.batch_alter_table('sweep_trial') as batch:
        batch.add_column(sa.Column('intermediate', sa.JSON(), nullable=False, server_default='[]'))
    conn = op.get_bind()
    trial, value = _tables()
    for rows in _batches(conn, trial, sa.select(trial.c.sweep_id, trial.c.number)):
        for sweep_id, number in rows:
            values = list(conn.execute(sa.select(value.c.value).where(value.c.sweep_id == sweep_id,
                                                                      value.c.number == number)
                                       .order_by(value.c.step)).scalars())
            if values:
                conn.execute(sa.update(trial).where(trial.c.sweep_id == sweep_id, trial.c.number == number)
                             .values(intermediate=values))
    op.drop_table('sweep_trial_value')
    op.drop_column('sweep_trial', 'steps')
    op.drop_column('sweep_trial', 'last_value')
    with op.batch_alter_table('sweep_trial') as batch:
        batch.alter_column('intermediate', server_default=None)

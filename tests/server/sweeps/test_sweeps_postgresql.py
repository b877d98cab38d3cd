"""The sweep tests with real agents, again on a PostgreSQL database: create, suggest, report, prune, crash."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text

# Collected here again, where `server` below is a server on PostgreSQL (the fixture of this module wins).
from test_sweeps_agents import (  # noqa: F401
    marks,
    test_a_killed_agents_trial_is_crashed_and_run_again_once,
    test_bayes_sweep_with_the_python_agent,
    test_grid_sweep_runs_every_point_once_with_wandb_arguments,
    test_hyperband_stops_a_bad_trial_early,
    test_pause_resume_and_stop_from_the_cli,
    test_two_agents_in_parallel_never_share_a_trial,
)

pytest.importorskip("optuna")


@pytest.fixture
def server(postgres: Any, server_types: Any) -> Iterator[Any]:
    """An in-process server on a fresh PostgreSQL database of the throwaway cluster."""
    srv = server_types.InProcessServer(db=postgres.new_database()).start()
    try:
        yield srv
    finally:
        srv.stop()


def test_the_sweeps_live_in_the_postgresql_database(server):
    made = server.http("POST", "/api/v1/sweeps", {"config": {"method": "random", "program": "t.py",
                                                              "parameters": {"x": {"min": 0, "max": 1}}}})
    server.http("POST", f"/api/v1/sweeps/{made['id']}/next", {"agent": "a", "heartbeat_s": 1})
    engine = create_engine(server.db)
    try:
        with engine.connect() as conn:
            assert conn.dialect.name == "postgresql"
            rows = conn.execute(text("SELECT number, state FROM sweep_trial WHERE sweep_id = :id"),
                                {"id": made["id"]}).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in rows] == [(0, "running")]

"""The sweep tests' server really keeps its sweeps in the database the test is parametrized with."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import create_engine, text


def test_the_sweeps_live_in_the_database_of_the_parameter(server: Any, request: pytest.FixtureRequest):
    made = server.http("POST", "/api/v1/sweeps", {"config": {"method": "random", "program": "t.py",
                                                              "parameters": {"x": {"min": 0, "max": 1}}}})
    server.http("POST", f"/api/v1/sweeps/{made['id']}/next", {"agent": "a", "heartbeat_s": 1})
    db = str(server.db)
    engine = create_engine(db if "://" in db else f"sqlite:///{db}")
    try:
        with engine.connect() as conn:
            assert conn.dialect.name == request.node.callspec.params["server"]
            rows = conn.execute(text("SELECT number, state FROM sweep_trial WHERE sweep_id = :id"),
                                {"id": made["id"]}).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in rows] == [(0, "running")]

"""A user's run colour kept server-side (op run_color, PUT /api/v1/envs/<env>/color): read back by every page through
GET /api/v1/runs/colors and the run record, forgotten with null, and bad colours refused with a message."""

from __future__ import annotations

import pytest

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings


@pytest.fixture
def api(db_url):
    settings = Settings(db=db_url)
    svc = Services.open(settings)
    svc.start()
    yield create_app(settings, svc).test_client()
    svc.stop()


def log(api, *envs):
    r = api.post("/api/v1/events", json={"events": [
        {"op": "set", "env": e, "win": "loss", "kind": "line", "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}
        for e in envs]})
    assert r.get_json()["errors"] == []


def test_a_chosen_colour_is_kept_listed_and_forgotten(api):
    log(api, "run-a", "run-b")
    assert api.get("/api/v1/runs/colors").get_json() == {"colors": {}}
    r = api.put("/api/v1/envs/run-a/color", json={"color": "#12AB34"})
    assert r.status_code == 200 and r.get_json() == {"color": "#12ab34"}
    assert api.get("/api/v1/runs/colors").get_json() == {"colors": {"run-a": "#12ab34"}}
    assert api.get("/api/v1/envs/run-a/run").get_json()["color"] == "#12ab34"
    listed = {r["env"]: r["color"] for r in api.get("/api/v1/runs").get_json()["runs"]}
    assert listed == {"run-a": "#12ab34", "run-b": None}
    # The producer op does the same (an SDK or script may colour its runs).
    r = api.post("/api/v1/events", json={"events": [{"op": "run_color", "env": "run-b", "color": "#000080"}]})
    assert r.get_json()["errors"] == []
    assert api.get("/api/v1/runs/colors").get_json()["colors"] == {"run-a": "#12ab34", "run-b": "#000080"}
    # null: back to the name's colour; the rest of the meta is untouched.
    api.put("/api/v1/envs/run-a/config", json={"config": {"lr": 0.1}})
    assert api.put("/api/v1/envs/run-a/color", json={"color": None}).get_json() == {"color": None}
    assert api.get("/api/v1/runs/colors").get_json()["colors"] == {"run-b": "#000080"}
    assert api.get("/api/v1/envs/run-a/run").get_json()["config"] == {"lr": 0.1}


@pytest.mark.parametrize("body, says", [
    ({"color": "red"}, "#rrggbb"), ({"color": "#12345"}, "#rrggbb"), ({"color": 255}, "#rrggbb"),
    ({}, "color"), ({"colour": "#123456"}, "unknown field"),
])
def test_a_bad_colour_is_refused_with_a_message(api, body, says):
    log(api, "run-a")
    r = api.put("/api/v1/envs/run-a/color", json=body)
    assert r.status_code == 400 and says in r.get_json()["error"]
    assert api.get("/api/v1/runs/colors").get_json() == {"colors": {}}


def test_colouring_a_missing_run_is_404_and_a_bad_event_names_its_field(api):
    assert api.put("/api/v1/envs/ghost/color", json={"color": "#123456"}).status_code == 404
    r = api.post("/api/v1/events", json={"events": [{"op": "run_color", "env": "e", "colour": "#123456"}]})
    assert "unknown field(s) colour" in r.get_json()["errors"][0]["error"]


def test_a_fork_takes_its_own_colour_not_its_sources(api):
    log(api, "base")
    api.put("/api/v1/envs/base/color", json={"color": "#123456"})
    assert api.post("/api/v1/envs/base/fork", json={"to": "copy"}).status_code == 200
    r = api.post("/api/v1/events", json={"events": [{"op": "run_fork", "env": "branch", "from": "base", "step": 0}]})
    assert r.get_json()["errors"] == []
    assert api.get("/api/v1/runs/colors").get_json()["colors"] == {"base": "#123456"}

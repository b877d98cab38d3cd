"""The runs a page names (server/web/scope_api.py) through the real app: ?q= / ?sel= / ?envs= resolved alike for
/api/v1/scope and /api/v1/hparams, saved selections and their clear errors."""

from __future__ import annotations

from helpers.hparams_sweep import sweep_events


def seed(api) -> None:
    events = sweep_events(6, prefix="sweep/t") + sweep_events(4, prefix="other/r", seed=1)
    assert api.post("/api/v1/events", json={"events": events}).get_json()["ok"]


def test_a_query_scopes_the_runs_and_hparams_and_a_bad_one_says_where(api):
    seed(api)
    q = 'name ~ "^sweep/"'
    assert api.get("/api/v1/scope", query_string={"q": q}).get_json()["envs"] == [f"sweep/t{i:04d}" for i in range(6)]
    assert api.get("/api/v1/scope").get_json() | {"envs": None} == {"envs": None, "total": 10, "scoped": False}
    rows = api.get("/api/v1/hparams", query_string={"q": q}).get_json()["sessions"]
    assert sorted(r["env"] for r in rows) == [f"sweep/t{i:04d}" for i in range(6)]
    imp = api.get("/api/v1/hparams/importance", query_string={"q": q, "metric": "loss"}).get_json()
    assert imp["rows"] == 6
    bad = api.get("/api/v1/hparams", query_string={"q": "lr < < 1"})
    assert bad.status_code == 400 and bad.get_json()["position"] == 5
    both = api.get("/api/v1/scope", query_string={"q": q, "envs": "sweep/t0000"})
    assert both.status_code == 400 and "one way" in both.get_json()["error"]


def test_a_selection_gets_a_short_stable_id_and_bad_ones_are_refused(api):
    seed(api)
    envs = ["sweep/t0003", "other/r0001"]
    made = api.post("/api/v1/selections", json={"envs": envs})
    assert made.status_code == 201
    sel = made.get_json()["id"]
    assert len(sel) == 10 and api.post("/api/v1/selections", json={"envs": envs}).get_json()["id"] == sel
    assert api.get(f"/api/v1/selections/{sel}").get_json()["envs"] == envs
    assert api.get("/api/v1/scope", query_string={"sel": sel}).get_json()["envs"] == envs
    assert sorted(r["env"] for r in api.get("/api/v1/hparams", query_string={"sel": sel}).get_json()["sessions"]) \
        == sorted(envs)
    # Nothing is saved for a run that is not there, an empty list or an unknown field; unknown ids are named.
    missing = api.post("/api/v1/selections", json={"envs": ["sweep/t0003", "nope"]})
    assert missing.status_code == 404 and "'nope'" in missing.get_json()["error"]
    assert api.post("/api/v1/selections", json={"envs": []}).status_code == 400
    assert api.post("/api/v1/selections", json={"envs": envs, "x": 1}).status_code == 400
    unknown = api.get("/api/v1/selections/0123456789")
    assert unknown.status_code == 404 and unknown.get_json()["error"] == "no saved selection 0123456789"
    assert api.get("/api/v1/scope", query_string={"sel": "../etc"}).status_code == 400

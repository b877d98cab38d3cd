"""Runs through the event path and the JSON API on SQLite and PostgreSQL: run records, config, tags, notes,
series summaries kept at ingest, the runs listing with queries, bad input, and deletion by query."""

from __future__ import annotations

import pytest

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings


@pytest.fixture
def svc_api(db_url):
    settings = Settings(db=db_url)
    svc = Services.open(settings)
    svc.start()
    yield svc, create_app(settings, svc).test_client()
    svc.stop()


@pytest.fixture
def api(svc_api):
    return svc_api[1]


def events(api, *evs, ok=True):
    r = api.post("/api/v1/events", json={"events": list(evs)})
    assert r.status_code == 200 and r.get_json()["ok"] is ok, r.get_json()
    return r.get_json()


def append(api, env, win, x, y, name=None, mode="append"):
    events(api, {"op": "update", "env": env, "win": win, "kind": "line", "mode": mode, "name": name,
                 "traces": [{"name": name, "x": list(map(float, x)), "y": list(map(float, y))}]})


def start(api, env, client="c1", t=1000.0, **provenance):
    events(api, {"op": "run_start", "env": env, "client": client, "t": t,
                 "provenance": {"host": "box", "git": {"commit": "abc", "diff": "+x", "dirty": True},
                                "packages": ["numpy==2"], **provenance}})


def runs(api, q=None, status=200):
    r = api.get("/api/v1/runs", query_string={"q": q} if q is not None else None)
    assert r.status_code == status, r.get_json()
    return r.get_json() if status != 200 else {run["env"]: run for run in r.get_json()["runs"]}


def test_run_lifecycle_config_tags_notes(api):
    start(api, "exp1")
    events(api, {"op": "run_config", "env": "exp1", "config": {"lr": 0.01, "optim": {"name": "adam"}}},
           {"op": "run_config", "env": "exp1", "config": {"seed": 1}},
           {"op": "run_tags", "env": "exp1", "add": ["baseline", "resnet"]},
           {"op": "run_note", "env": "exp1", "note": "**bold** <script>alert(1)</script>", "append": True})
    run = api.get("/api/v1/envs/exp1/run").get_json()
    assert run["status"] == "running" and run["started"] == 1000.0 and run["ended"] is None
    assert run["config"] == {"lr": 0.01, "optim": {"name": "adam"}, "seed": 1}
    assert run["tags"] == ["baseline", "resnet"]
    assert "<strong>bold</strong>" in run["notes_html"] and "<script" not in run["notes_html"]
    # The bulky parts of the provenance come back for one run, and stay out of the listing.
    assert run["provenance"]["packages"] == ["numpy==2"] and run["provenance"]["git"]["diff"] == "+x"
    listed = runs(api)["exp1"]
    assert listed["provenance"]["git"] == {"commit": "abc", "dirty": True} and "packages" not in listed["provenance"]
    assert listed["has_notes"] is True and "notes" not in listed
    # The Compare page's config diff reads the same env meta key.
    assert api.get("/api/v1/envs/exp1/meta").get_json()["meta"]["config"]["lr"] == 0.01
    events(api, {"op": "run_end", "env": "exp1", "client": "c1", "t": 2000.0})
    run = api.get("/api/v1/envs/exp1/run").get_json()
    assert (run["status"], run["ended"]) == ("finished", 2000.0)


def test_run_ends_when_its_last_client_does_and_server_status_changes(svc_api):
    svc, api = svc_api
    start(api, "ddp", client="rank0")
    start(api, "ddp", client="rank1", t=1001.0)  # joins: the start time and provenance stay the first one's
    events(api, {"op": "run_end", "env": "ddp", "client": "rank0"})
    assert api.get("/api/v1/envs/ddp/run").get_json()["status"] == "running"
    from paneboard.server.runs.ops import status_command

    assert svc.writer.submit_wait([status_command("ddp", "stalled", None, 1500.0)]).errors == []
    assert api.get("/api/v1/envs/ddp/run").get_json()["status"] == "stalled"
    assert svc.store.active_run_clients() == {"rank1": ["ddp"]}
    svc.writer.submit_wait([status_command("ddp", "crashed", "rank1", 1600.0)])
    run = api.get("/api/v1/envs/ddp/run").get_json()
    assert (run["status"], run["started"], run["ended"]) == ("crashed", 1000.0, 1600.0)
    svc.writer.submit_wait([status_command("ddp", "running", None, 1700.0)])  # no longer stalled: not a revival
    assert api.get("/api/v1/envs/ddp/run").get_json()["status"] == "crashed"
    # The crashed client reconnects (the watch says so): running again; its clean end then finishes the run.
    svc.writer.submit_wait([status_command("ddp", "running", "rank1", 1800.0)])
    run = api.get("/api/v1/envs/ddp/run").get_json()
    assert (run["status"], run["ended"]) == ("running", None)
    events(api, {"op": "run_end", "env": "ddp", "client": "rank1"})
    assert api.get("/api/v1/envs/ddp/run").get_json()["status"] == "finished"
    start(api, "ddp", client="again", t=3000.0)  # a new job in the same env: a new run
    run = api.get("/api/v1/envs/ddp/run").get_json()
    assert (run["status"], run["started"], run["ended"]) == ("running", 3000.0, None)


def test_summaries_are_kept_at_ingest(svc_api):
    svc, api = svc_api
    append(api, "s", "loss", [0, 1, 2], [0.9, 0.5, 0.7])
    append(api, "s", "loss", [3, 4], [float("nan"), 0.6])  # NaN is a gap: neither last nor min
    events(api, *({"op": "update", "env": "s", "win": "acc", "kind": "line", "mode": "append", "name": None,
                   "traces": [{"x": [float(i)], "y": [v]}]} for i, v in enumerate([0.1, 0.8, 0.4])))
    append(api, "s", "both", [0, 1], [1.0, 2.0], name="train")
    append(api, "s", "both", [0, 1], [3.0, 0.5], name="val")
    got = runs(api)["s"]["summaries"]
    assert got["loss"] == {"last": 0.6, "last_step": 4.0, "min": 0.5, "min_step": 1.0, "max": 0.9, "max_step": 0.0,
                           "count": 4, "best": 0.5, "direction": "min"}
    assert (got["acc"]["best"], got["acc"]["direction"], got["acc"]["max_step"]) == (0.8, "max", 1.0)
    assert got["both/train"]["last"] == 2.0 and got["both/val"]["min"] == 0.5
    # Summaries are columns of the trace, updated from the new points: no chunk is read back.
    with svc.store.engine.connect() as conn:
        from sqlalchemy import text

        assert conn.execute(text("SELECT s_count FROM trace ORDER BY id")).scalars().all() == [4, 3, 2, 2]
    append(api, "s", "loss", [0], [5.0], mode="replace")  # a replaced trace starts over
    assert runs(api)["s"]["summaries"]["loss"]["min"] == 5.0
    events(api, {"op": "run_best", "env": "s", "series": "loss", "direction": "max"})
    assert runs(api)["s"]["summaries"]["loss"]["direction"] == "max"
    events(api, {"op": "fork_env", "env": "s2", "from": "s"})  # a fork keeps its summaries
    assert runs(api)["s2"]["summaries"]["acc"]["max"] == 0.8


def test_queries_select_the_right_runs(api):
    for env, lr, loss, tags, acc in (("resnet_a", 0.001, 0.2, ["baseline"], 0.95), ("resnet_b", 0.1, 0.4, [], 0.7),
                                     ("vit", 0.005, 0.6, ["baseline"], 0.92), ("mlp", 0.2, 0.9, ["baseline"], 0.5)):
        start(api, env, client=env)
        events(api, {"op": "run_config", "env": env, "config": {"lr": lr, "model": env.split("_")[0]}},
               {"op": "run_tags", "env": env, "set": tags})
        append(api, env, "loss", [0, 1], [1.0, loss])
        append(api, env, "val/acc", [0, 1], [0.1, acc])
    for env in ("resnet_a", "vit", "resnet_b"):
        events(api, {"op": "run_end", "env": env, "client": env})
    cases = {
        "lr < 0.3": {"resnet_a", "resnet_b", "vit", "mlp"},
        "lr < 0.01 and tags:baseline and status:finished": {"resnet_a", "vit"},
        "loss.min < 0.5 and tags:baseline": {"resnet_a"},
        'val/acc.max >= 0.9 or name ~ "^resnet"': {"resnet_a", "resnet_b", "vit"},
        "not (status:finished) or (model = vit and loss.last > 0.5)": {"mlp", "vit"},
        "status:running": {"mlp"},
        "loss.min_step = 1 and config.model != mlp": {"resnet_a", "resnet_b", "vit"},
    }
    for q, want in cases.items():
        assert set(runs(api, q)) == want, q
    # A field no run has, a statistic that does not exist or a status no run can have: an error naming it (at its
    # position), never a silent 0 runs.
    for q, pos, words in (("nosuchkey > 1", 0, ("unknown field", "'nosuchkey'")),
                          ("lr < 1 and loss.mean < 0.5", 11, ("unknown statistic", "'mean'", "'loss'")),
                          ("status:banana", 7, ("unknown status", "'banana'")),
                          ("config.optim > 1", 0, ("unknown config key", "'optim'")),
                          ("vall/acc.max > 0.5", 0, ("unknown field", "'vall/acc.max'"))):
        body = runs(api, q, status=400)
        assert body["position"] == pos and all(w in body["error"] for w in words), (q, body)
    assert set(runs(api, "tags:nosuch or status:crashed")) == set()  # known fields, no match: 0 runs, no error


def test_sorted_windows_with_every_env_and_the_columns(api):
    for i, loss in enumerate([0.5, 0.1, 0.9, None]):
        env = f"r{i}"
        events(api, {"op": "run_config", "env": env, "config": {"lr": i / 10, **({"odd": True} if i % 2 else {})}})
        if loss is not None:
            append(api, env, "val/loss", [0, 1], [1.0, loss])
    page = api.get("/api/v1/runs?q=lr < 1&sort=series:val/loss.min&order=asc&offset=1&limit=2").get_json()
    assert page["total"] == 4 and page["envs"] == ["r1", "r0", "r2", "r3"]  # a run without the series is last
    assert [r["env"] for r in page["runs"]] == ["r0", "r2"]
    assert page["columns"] == {"config": ["lr", "odd"], "series": {"val/loss": "min"}}
    desc = api.get("/api/v1/runs?sort=config:lr&order=desc").get_json()
    assert [r["env"] for r in desc["runs"]] == ["r3", "r2", "r1", "r0"] and "envs" not in desc
    for bad in ("sort=nosuch", "sort=series:loss", "order=up", "limit=-1", "offset=x"):
        r = api.get(f"/api/v1/runs?{bad}")
        assert r.status_code == 400 and r.get_json()["error"], bad


@pytest.mark.parametrize("q, pos", [("lr <", 4), ("(lr < 1", 7), ("lr % 3", 3), ('name ~ "["', 7), ("lr < 1 lr", 7)])
def test_bad_query_is_a_400_with_the_position(api, q, pos):
    body = runs(api, q, status=400)
    assert body["position"] == pos and f"position {pos}" in body["error"]


def test_bad_input_gets_4xx_and_changes_nothing(api):
    start(api, "b")
    before = api.get("/api/v1/envs/b/run").get_json()
    bad = [
        {"op": "run_tags", "env": "b", "add": ["has space"]},
        {"op": "run_tags", "env": "b", "add": [f"t{i}" for i in range(65)]},
        {"op": "run_note", "env": "b", "note": "x" * (64 * 1024 + 1)},
        {"op": "run_config", "env": "b", "config": [1, 2]},
        {"op": "run_config", "env": "b", "config": {"lr": 1}, "typo": 1},
        {"op": "run_start", "env": "b", "provenance": {"git": {"diff": "x" * (256 * 1024 + 1)}}},
        {"op": "run_best", "env": "b", "series": "loss", "direction": "up"},
    ]
    for ev in bad:  # the event path reports each refused event with its reason
        assert events(api, ev, ok=False)["errors"][0]["error"], ev
    for path, body in (("config", {"config": {"a": 1}, "extra": 1}), ("tags", {"tags": "notalist"}),
                       ("notes", {"notes": 3}), ("best", {"series": "loss", "direction": 1})):
        r = api.put(f"/api/v1/envs/b/{path}", json=body)
        assert r.status_code == 400 and "error" in r.get_json(), path
    assert api.put("/api/v1/envs/nope/tags", json={"tags": []}).status_code == 404
    assert api.get("/api/v1/envs/b/run").get_json() == before


def test_api_edits_config_tags_notes_and_hparams_feed_the_config(api):
    append(api, "tb", "loss", [0], [1.0])  # an env no job reported (an import): a run without status
    assert api.put("/api/v1/envs/tb/tags", json={"tags": ["imported"]}).get_json() == {"tags": ["imported"]}
    assert api.put("/api/v1/envs/tb/tags", json={"add": ["x"], "remove": ["imported"]}).get_json() == {"tags": ["x"]}
    assert api.put("/api/v1/envs/tb/config", json={"config": {"bs": 32}}).get_json() == {"config": {"bs": 32}}
    notes = api.put("/api/v1/envs/tb/notes", json={"notes": "# Title\n<img src=x onerror=alert(1)>"}).get_json()
    assert "<h1>Title</h1>" in notes["notes_html"] and "onerror" not in notes["notes_html"]
    events(api, {"op": "hparams", "env": "tb", "hparams": {"lr": 0.5, "opt": "sgd"}, "metrics": {}})
    run = runs(api)["tb"]
    assert run["status"] is None and run["config"] == {"bs": 32, "lr": 0.5, "opt": "sgd"} and run["tags"] == ["x"]
    assert set(runs(api, "opt = sgd and bs = 32")) == {"tb"}


def test_delete_by_query_with_dry_run_and_age(svc_api):
    svc, api = svc_api
    for env in ("old_a", "old_b", "keep", "live"):
        start(api, env, client=env)
        append(api, env, "loss", [0], [1.0])
        if env != "live":
            events(api, {"op": "run_end", "env": env, "client": env})
    dry = api.post("/api/v1/runs/delete", json={"query": 'name ~ "^(old|live)"', "dry_run": True}).get_json()
    assert dry["count"] == 2 and set(dry["envs"]) == {"old_a", "old_b"}  # a running run is never deleted
    assert set(runs(api)) == {"old_a", "old_b", "keep", "live"}
    young = api.post("/api/v1/runs/delete", json={"query": 'name ~ "^old"', "older_than_days": 1}).get_json()
    assert young["count"] == 0
    done = api.post("/api/v1/runs/delete", json={"query": 'name ~ "^old"'}).get_json()
    assert done["count"] == 2 and set(runs(api)) == {"keep", "live"}
    assert svc.store.get_run("old_a") is None
    for body in ({"query": ""}, {"query": "lr <"}, {"query": "x:1", "older_than_days": -1}, {"query": "x:1", "y": 1}):
        assert api.post("/api/v1/runs/delete", json=body).status_code == 400, body
    assert set(runs(api)) == {"keep", "live"}

"""Env operations through the JSON API and the event path: fork, rename, delete, layout, views, config, compare."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings
from paneboard.server.store.chunks import CHUNK_POINTS


@pytest.fixture
def services(tmp_path):
    settings = Settings(db=str(tmp_path / "envs.db"))
    svc = Services.open(settings)
    svc.start()
    yield svc, create_app(settings, svc).test_client()
    svc.stop()


@pytest.fixture
def api(services):
    return services[1]


def events(api, *evs, status=200):
    r = api.post("/api/v1/events", json={"events": list(evs)})
    assert r.status_code == status, r.get_json()
    return r.get_json()


def append(api, env, win, x, y, name="t", op="update"):
    ev = {"op": op, "env": env, "win": win, "kind": "line", "opts": {"title": win},
          "traces": [{"name": name, "x": list(map(float, x)), "y": list(map(float, y))}]}
    if op == "update":
        ev.update(mode="append", name=name)
    return events(api, ev)


def export(api, env, win):
    r = api.get(f"/api/v1/envs/{env}/panes/{win}/export?format=csv")
    assert r.status_code == 200, r.data
    rows = list(csv.reader(io.StringIO(r.get_data(as_text=True))))[1:]
    return [(float(x), float(y)) for _, x, y, _ in rows]


def test_fork_copies_every_point_and_both_sides_then_diverge(api):
    n = 3 * CHUNK_POINTS + 77  # full chunks plus a partial tail the writer will merge on the next append
    x = np.arange(n, dtype=float)
    append(api, "orig", "loss", x, x * 2, op="set")
    events(api, {"op": "set", "env": "orig", "win": "note", "kind": "text", "content": "hello"})
    r = api.post("/api/v1/envs/orig/fork", json={"to": "copy"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["env"]["forked_from"] == "orig"
    assert r.get_json()["env"]["points"] == n
    assert export(api, "copy", "loss") == export(api, "orig", "loss")
    assert api.get("/api/v1/envs/copy/panes/note").get_json()["data"]["html"] == "hello"

    # Appending enough to each side to rewrite its partial tail chunk must not leak into the other.
    more = np.arange(n, n + CHUNK_POINTS, dtype=float)
    append(api, "orig", "loss", more, -more)
    append(api, "copy", "loss", more, more * 10)
    orig, copy = export(api, "orig", "loss"), export(api, "copy", "loss")
    assert len(orig) == len(copy) == n + CHUNK_POINTS
    assert orig[:n] == copy[:n] == [(float(i), 2.0 * i) for i in range(n)]
    assert orig[n:] == [(float(i), -float(i)) for i in more]
    assert copy[n:] == [(float(i), 10.0 * i) for i in more]


def test_fork_in_the_same_batch_as_appends_takes_only_what_came_before(api):
    append(api, "a", "w", [0, 1], [0, 1], op="set")
    single = [{"op": "update", "env": "a", "win": "w", "kind": "line", "mode": "append", "name": "t",
               "traces": [{"name": "t", "x": [float(i)], "y": [float(i)]}]} for i in (2, 3)]
    events(api, single[0], {"op": "fork_env", "env": "b", "from": "a"}, single[1])
    assert [p[0] for p in export(api, "a", "w")] == [0, 1, 2, 3]
    assert [p[0] for p in export(api, "b", "w")] == [0, 1, 2]


def test_fork_errors(api):
    append(api, "a", "w", [0], [0], op="set")
    append(api, "b", "w", [0], [0], op="set")
    assert api.post("/api/v1/envs/a/fork", json={"to": "b"}).status_code == 409
    assert api.post("/api/v1/envs/nope/fork", json={"to": "c"}).status_code == 404
    r = api.post("/api/v1/envs/a/fork", json={})
    assert r.status_code == 400 and "to" in r.get_json()["error"]
    assert api.post("/api/v1/envs/a/fork", data="{not json", content_type="application/json").status_code == 400
    res = events(api, {"op": "fork_env", "env": "c", "from": "missing"})
    assert not res["ok"] and "not found" in res["errors"][0]["error"]
    res = events(api, {"op": "fork_env", "env": "c"})
    assert not res["ok"] and "from" in res["errors"][0]["error"]


def test_rename_and_delete(api):
    append(api, "old", "w", [0, 1, 2], [5, 6, 7], op="set")
    append(api, "other", "w", [0], [0], op="set")
    api.post("/api/v1/envs/old/fork", json={"to": "child"})
    assert api.post("/api/v1/envs/old/rename", json={"to": "other"}).status_code == 409
    r = api.post("/api/v1/envs/old/rename", json={"to": "new"})
    assert r.status_code == 200 and r.get_json()["env"]["name"] == "new"
    assert api.get("/api/v1/envs/old").status_code == 404
    assert export(api, "new", "w") == [(0, 5), (1, 6), (2, 7)]
    assert api.get("/api/v1/envs/child").get_json()["env"]["forked_from"] == "new"
    append(api, "new", "w", [3], [8])  # the writer's caches follow the new name
    assert len(export(api, "new", "w")) == 4
    assert api.delete("/api/v1/envs/new").status_code == 200
    assert api.get("/api/v1/envs/new").status_code == 404
    assert len(export(api, "child", "w")) == 3  # the fork owns its points
    assert api.post("/api/v1/envs/new/rename", json={"to": "x"}).status_code == 404


def test_layout_views_and_config(api):
    append(api, "e", "a", [0], [0], op="set")
    append(api, "e", "b", [0], [0], op="set")
    url = "/api/v1/envs/e/panes/a/layout"
    r = api.put(url, json={"x": 6, "y": 2, "w": 6, "h": 9})
    assert r.status_code == 200 and r.get_json()["layout"] == {"x": 6, "y": 2, "w": 6, "h": 9}
    panes = {p["win"]: p for p in api.get("/api/v1/envs/e").get_json()["panes"]}
    assert panes["a"]["layout"] == {"x": 6, "y": 2, "w": 6, "h": 9} and panes["b"]["layout"] is None
    version = panes["a"]["version"]
    for bad in ({"x": 10, "y": 0, "w": 6, "h": 4}, {"x": 0, "y": 0, "w": 0, "h": 4}, {"x": "a", "y": 0, "w": 2, "h": 2},
                [1, 2]):
        r = api.put(url, json=bad)
        assert r.status_code == 400 and r.get_json()["error"], bad
    assert api.put("/api/v1/envs/e/panes/zz/layout", json={"x": 0, "y": 0, "w": 1, "h": 1}).status_code == 404

    assert api.post("/api/v1/envs/e/views", json={"name": "wide"}).status_code == 200
    api.put(url, json={"x": 0, "y": 0, "w": 3, "h": 3})
    assert api.post("/api/v1/envs/e/views/wide/load").status_code == 200
    assert api.get("/api/v1/envs/e/panes/a").get_json()["layout"] == {"x": 6, "y": 2, "w": 6, "h": 9}
    assert api.get("/api/v1/envs/e/panes/a").get_json()["version"] == version  # layout is not a data change
    assert api.post("/api/v1/envs/e/views/nope/load").status_code == 404

    r = api.put("/api/v1/envs/e/meta", json={"config": {"lr": 0.1, "layers": [64, 64]}})
    assert r.status_code == 200
    meta = api.get("/api/v1/envs/e/meta").get_json()["meta"]
    assert meta["config"] == {"lr": 0.1, "layers": [64, 64]} and "wide" in meta["views"]
    assert api.put("/api/v1/envs/e/meta", json={"config": [1]}).status_code == 400
    # A fork takes the layout and the meta along.
    api.post("/api/v1/envs/e/fork", json={"to": "f"})
    assert api.get("/api/v1/envs/f/meta").get_json()["meta"] == meta
    assert api.get("/api/v1/envs/f/panes/a").get_json()["layout"] == {"x": 6, "y": 2, "w": 6, "h": 9}


def test_env_list_search_and_sort(api):
    for name, n in (("mnist_a", 3), ("mnist_b", 1), ("cifar_x", 2)):
        append(api, name, "w", range(n), range(n), op="set")
    names = lambda q: [e["name"] for e in api.get("/api/v1/envs" + q).get_json()["envs"]]  # noqa: E731
    assert names("?q=MNIST&sort=name") == ["mnist_a", "mnist_b"]
    assert names("?sort=size") == ["mnist_a", "cifar_x", "mnist_b"]
    assert names("?sort=name&order=desc") == ["mnist_b", "mnist_a", "cifar_x"]
    assert api.get("/api/v1/envs?sort=bogus").status_code == 400


def test_compare_overlays_panes_by_title(api):
    append(api, "r1", "loss", [0, 1], [1, 0.5], op="set")
    append(api, "r2", "loss", [0, 1, 2], [2, 1, 0.2], op="set")
    events(api, {"op": "set", "env": "r2", "win": "txt", "kind": "text", "content": "x"})
    r = api.get("/api/v1/compare?envs=r1,r2&points=100")
    assert r.status_code == 200
    body = r.get_json()
    assert [e["name"] for e in body["envs"]] == ["r1", "r2"]
    (pane,) = body["panes"]
    assert pane["title"] == "loss"
    assert [(t["label"], t["y"]) for t in pane["traces"]] == [("r1", [1, 0.5]), ("r2", [2, 1, 0.2])]
    assert api.get("/api/v1/compare?envs=r1,missing").status_code == 404
    assert api.get("/api/v1/compare?envs=").status_code == 400


def test_a_null_layout_forgets_the_placement_as_the_workspace_repack_sends_it(api):
    append(api, "r", "a", [0], [0], op="set")
    url = "/api/v1/envs/r/panes/a/layout"
    assert api.put(url, json={"x": 0, "y": 0, "w": 3, "h": 3}).get_json()["layout"] == {"x": 0, "y": 0, "w": 3, "h": 3}
    r = api.put(url, data="null", content_type="application/json")  # what the browser's repack PUTs
    assert r.status_code == 200 and r.get_json()["layout"] is None
    assert api.get("/api/v1/envs/r/panes/a").get_json()["layout"] is None

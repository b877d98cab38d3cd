"""JSON API in-process (Flask test client + the real writer thread and store): semantics and errors."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings


@pytest.fixture
def api(db_url):
    settings = Settings(db=db_url)
    services = Services.open(settings)
    services.start()
    app = create_app(settings, services)
    yield app.test_client()
    services.stop()


def post(api, *events, status=200):
    r = api.post("/api/v1/events", json={"events": list(events)})
    assert r.status_code == status, r.get_json()
    return r.get_json()


def line(win="w", env="e", op="set", mode=None, name=None, traces=None, opts=None):
    ev = {"op": op, "env": env, "win": win, "kind": "line", "traces": traces or [], "opts": opts or {}}
    if mode:
        ev["mode"] = mode
    if name is not None:
        ev["name"] = name
    return ev


def traces_of(api, env="e", win="w", points=2000):
    r = api.get(f"/api/v1/envs/{env}/panes/{win}?points={points}")
    assert r.status_code == 200, r.get_json()
    return {t["name"]: (t["x"], t["y"]) for t in r.get_json()["data"]["traces"]}


def test_env_list_and_pane_read(api):
    post(api, line(traces=[{"name": "a", "x": [0, 1], "y": [1, 2]}], opts={"title": "loss"}))
    envs = api.get("/api/v1/envs").get_json()["envs"]
    assert [(e["name"], e["panes"], e["points"]) for e in envs] == [("e", 1, 2)]
    pane = api.get("/api/v1/envs/e/panes/w").get_json()
    assert pane["title"] == "loss" and pane["kind"] == "line" and pane["version"] == 1
    detail = api.get("/api/v1/envs/e").get_json()
    assert [p["win"] for p in detail["panes"]] == ["w"]


def test_update_semantics_follow_visdom(api):
    post(api, line(traces=[{"name": "a", "x": [0], "y": [0]}, {"name": "b", "x": [0], "y": [10]}]))
    # positional append: i-th sent trace extends the i-th stored trace
    post(api, line(op="update", mode="append", traces=[{"x": [1], "y": [1]}, {"x": [1], "y": [11]}]))
    # named append, and a new name adds a trace
    post(api, line(op="update", mode="append", name="b", traces=[{"x": [2], "y": [12]}]))
    post(api, line(op="update", mode="append", name="c", traces=[{"x": [5], "y": [50]}]))
    got = traces_of(api)
    assert got == {"a": ([0, 1], [0, 1]), "b": ([0, 1, 2], [10, 11, 12]), "c": ([5], [50])}
    # replace a named trace, then remove another
    post(api, line(op="update", mode="replace", name="a", traces=[{"x": [7, 8], "y": [70, 80]}]))
    post(api, line(op="update", mode="remove", name="b"))
    assert traces_of(api) == {"a": ([7, 8], [70, 80]), "c": ([5], [50])}


def test_append_creates_a_missing_pane_but_replace_reports_it(api):
    post(api, line(win="new", op="update", mode="append", traces=[{"x": [1], "y": [2]}]))
    assert traces_of(api, win="new") == {"1": ([1], [2])}
    res = post(api, line(win="missing", op="update", mode="replace", traces=[{"x": [1], "y": [2]}]))
    assert res["ok"] is False and "does not exist" in res["errors"][0]["error"]


def test_bad_events_are_rejected_one_by_one_and_nothing_else_is_lost(api):
    res = post(api,
               line(traces=[{"name": "a", "x": [0, 1], "y": [1, 2]}]),
               {"op": "set", "env": "e", "win": "bad", "kind": "nope"},
               line(win="w2", traces=[{"x": [0, 1], "y": ["a", "b"]}]),
               line(win="w3", traces=[{"x": [0, 1, 2], "y": [1]}]),
               {"op": "set", "env": "bad\x00env", "win": "w", "kind": "text", "content": "x"},
               {"op": "set", "env": "e", "win": "t", "kind": "text", "content": 5},
               {"op": "explode"},
               line(win="w", op="update", mode="append", traces=[{"x": [2], "y": [3]}]))
    assert res["ok"] is False
    assert sorted(e["index"] for e in res["errors"]) == [1, 2, 3, 4, 5, 6]
    messages = " | ".join(e["error"] for e in res["errors"])
    for fragment in ("unknown pane kind", "list of numbers", "x has 3 values", "control characters",
                     "content must be a string", "op must be one of"):
        assert fragment in messages
    assert traces_of(api) == {"a": ([0, 1, 2], [1, 2, 3])}


def test_http_errors_are_json_4xx(api):
    for url, status in [("/api/v1/envs/nope", 404), ("/api/v1/envs/nope/panes/w", 404),
                        ("/api/v1/envs/e/panes/w?points=abc", 404), ("/api/v1/nothing", 404)]:
        r = api.get(url)
        assert r.status_code == status and "error" in r.get_json()
    post(api, line(traces=[{"x": [0], "y": [0]}]))
    for q in ("points=abc", "points=0", "points=99999999", "x0=nan", "x1=zz"):
        r = api.get(f"/api/v1/envs/e/panes/w?{q}")
        assert r.status_code == 400 and r.get_json()["error"], q
    r = api.post("/api/v1/events", data=b"{not json", content_type="application/json")
    assert r.status_code == 400 and "not valid JSON" in r.get_json()["error"]
    r = api.post("/api/v1/events", json=[1, 2])
    assert r.status_code == 400
    assert api.get("/api/v1/envs/e/panes/w/export?format=xml").status_code == 400


def test_export_returns_every_point_with_wall_times(api):
    x = np.arange(5000)
    post(api, line(traces=[{"name": "a", "x": x.tolist(), "y": (x * 2).tolist()}]))
    csv_text = api.get("/api/v1/envs/e/panes/w/export?format=csv").get_data(as_text=True)
    lines = csv_text.strip().splitlines()
    assert lines[0] == "trace,x,y,wall" and len(lines) == 5001
    assert lines[4000].startswith("a,3999.0,7998.0,")
    data = api.get("/api/v1/envs/e/panes/w/export?format=json").get_json()
    assert len(data["traces"][0]["x"]) == 5000 and len(data["traces"][0]["wall"]) == 5000


def test_text_is_sanitized_when_served_and_append_joins_with_br(api):
    evil = '<b>hi</b><script>alert(1)</script><img src=x onerror="alert(2)"><a href="javascript:alert(3)">l</a>'
    post(api, {"op": "set", "env": "e", "win": "t", "kind": "text", "content": evil})
    post(api, {"op": "update", "mode": "append", "env": "e", "win": "t", "kind": "text", "content": "more"})
    html = api.get("/api/v1/envs/e/panes/t").get_json()["data"]["html"]
    assert "<b>hi</b>" in html and html.endswith("<br>more")
    for bad in ("<script", "onerror", "javascript:"):
        assert bad not in html


def png_b64(color=(255, 0, 0), size=(4, 3)) -> str:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_image_pane_stores_a_blob_and_rejects_garbage(api):
    post(api, {"op": "set", "env": "e", "win": "img", "kind": "image",
               "image": {"mime": "image/png", "data": png_b64()}, "opts": {"caption": "red"}})
    data = api.get("/api/v1/envs/e/panes/img").get_json()["data"]
    assert (data["width"], data["height"], data["caption"]) == (4, 3, "red")
    blob = api.get("/api/v1/" + data["src"].split("api/v1/")[1])
    assert blob.status_code == 200 and blob.mimetype == "image/png"
    assert Image.open(io.BytesIO(blob.data)).getpixel((0, 0)) == (255, 0, 0)
    res = post(api, {"op": "set", "env": "e", "win": "img2", "kind": "image",
                     "image": {"data": base64.b64encode(b"not an image").decode()}})
    assert "not a readable image" in res["errors"][0]["error"]
    res = post(api, {"op": "set", "env": "e", "win": "img3", "kind": "image", "image": {"data": "!!!"}})
    assert "base64" in res["errors"][0]["error"]


def test_delete_pane_and_env(api):
    post(api, line(traces=[{"x": [0], "y": [0]}]), line(win="w2", traces=[{"x": [0], "y": [0]}]))
    assert api.delete("/api/v1/envs/e/panes/w").get_json()["ok"] is True
    assert [p["win"] for p in api.get("/api/v1/envs/e").get_json()["panes"]] == ["w2"]
    assert api.delete("/api/v1/envs/e").status_code == 200
    assert api.get("/api/v1/envs/e").status_code == 404
    assert api.delete("/api/v1/envs/e").status_code == 404


def test_pages_render_with_csp_and_escaped_boot_data(api):
    r = api.get("/env/%3C%2Fscript%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert r.status_code == 200
    page = r.get_data(as_text=True)
    assert "</script><script>alert(1)" not in page
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert api.get("/").status_code == 200
    js = api.get("/static/vendor/plotly.min.js", headers={"Accept-Encoding": "gzip"})
    assert js.status_code == 200 and js.headers["Content-Encoding"] == "gzip"


def test_a_batch_of_interleaved_appends_is_stored_exactly_in_order(api):
    events = []
    for i in range(600):
        events.append(line(win="a", op="update", mode="append", traces=[{"x": [i], "y": [i]}]))
        events.append(line(win="b", op="update", mode="append", name="n1" if i % 3 else "n2",
                           traces=[{"x": [i], "y": [-i]}]))
        if i == 300:
            events.append(line(win="a", op="update", mode="append", opts={"title": "halfway"},
                               traces=[{"x": [1000], "y": [1000]}]))
    post(api, *events)
    a = traces_of(api, win="a")["1"]
    assert a[0] == list(range(301)) + [1000] + list(range(301, 600))
    b = traces_of(api, win="b")
    assert b["n2"][0] == list(range(0, 600, 3)) and len(b["n1"][0]) == 400
    assert api.get("/api/v1/envs/e/panes/a").get_json()["title"] == "halfway"


def test_coalesced_appends_respect_closes_and_deletes_in_between(api):
    events = [line(win="a", op="update", mode="append", traces=[{"x": [i], "y": [i]}]) for i in range(5)]
    events.append({"op": "close", "env": "e", "win": "a"})
    events += [line(win="a", op="update", mode="append", traces=[{"x": [i], "y": [i]}]) for i in range(5, 8)]
    events.append(line(win="z", env="other", op="update", mode="append", traces=[{"x": [0], "y": [0]}]))
    events.append({"op": "delete_env", "env": "other"})
    events.append(line(win="z", env="other", op="update", mode="append", traces=[{"x": [9], "y": [9]}]))
    post(api, *events)
    assert traces_of(api, win="a")["1"][0] == [5, 6, 7]
    assert traces_of(api, env="other", win="z")["1"][0] == [9]

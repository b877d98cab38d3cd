"""Env and pane names of every shape (absolute paths, "..", doubled slashes, "%", "#", "?", unicode, backslashes)
open on every route and page of the real server, and through the env list's own links in Chromium.

NAMES_PROPERTY_COUNT=10000 runs the property test over that many generated names (default: a few hundred).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paneboard import SummaryWriter
from paneboard.protocol import MAX_NAME

# The names the issue lists, as writers and clients really pass them.
TRICKY = ["/abs/work_dirs/20260101_120000/vis_data", "runs/../other", "../runs/x", "runs//exp1", "runs/exp1/",
          "with space", "100% done", "a#b", "what?", "ünïcødé/日本", "C:\\runs\\exp1", "a/panes/b", "x/run",
          "%2F", "%252F", "/", "//", ".hidden", "...", "a/./b", "a,b", " edge ", "+plus+"]
PER_EXAMPLE = 40
EXAMPLES = max(1, int(os.environ.get("NAMES_PROPERTY_COUNT", "240")) // PER_EXAMPLE)

SEGMENTS = st.one_of(st.sampled_from(["", ".", "..", " ", "%", "%2F", "#", "?", "&", "+", ",", "ü", "日本", "C:", "\\",
                                      "runs", "exp 1", "vis_data", "~", ";", "=", "'", '"', "<b>"]),
                     st.text(min_size=1, max_size=12))
PATHLIKE = st.tuples(st.sampled_from(["", "/", "//", "./", "../", "C:\\"]),
                     st.lists(SEGMENTS, min_size=1, max_size=6),
                     st.sampled_from(["/", "\\"]), st.sampled_from(["", "/", "//"])
                     ).map(lambda t: t[0] + t[2].join(t[1]) + t[3])
NAMES = st.one_of(PATHLIKE, st.text(min_size=1, max_size=MAX_NAME + 20))


def refused(name: str) -> bool:
    """What the store may refuse: names no URL can carry or no page can show (see commands.envelope.check_name)."""
    return (not name or len(name) > MAX_NAME or name in (".", "..") or bool(re.search(r"[\x00-\x1f\x7f]", name))
            or bool(re.search("[\ud800-\udfff]", name)))


def q(name: str) -> str:
    """A name as a URL path segment, as the UI's encodeURIComponent writes it."""
    return urllib.parse.quote(name, safe="-_.!~*'()")


class Http:
    """One keep-alive connection to the server: thousands of requests in seconds."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def request(self, method: str, path: str, body: object = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        resp = self.conn.getresponse()
        return resp.status, resp.read()

    def json(self, path: str) -> object:
        status, body = self.request("GET", path)
        assert status == 200, (path, status, body[:300])
        return json.loads(body)


def line(env: str, win: str) -> dict:
    return {"op": "update", "env": env, "win": win, "kind": "line", "mode": "append", "name": "t",
            "opts": {"title": "t"}, "traces": [{"name": "t", "x": [1.0, 2.0], "y": [3.0, 4.0]}]}


def boot_env(page: bytes) -> str:
    found = re.search(rb'<script type="application/json" id="boot">(.*?)</script>', page, re.S)
    assert found, page[:300]
    return json.loads(found.group(1))["env"]


def assert_opens_everywhere(http_: Http, name: str) -> None:
    """Every route and page a user reaches an env and its pane by answers for this exact name."""
    env, win = q(name), q(name)
    assert http_.json(f"/api/v1/envs/{env}")["env"]["name"] == name
    assert [p["win"] for p in http_.json(f"/api/v1/envs/{env}/panes")["panes"]] == [name]
    assert http_.json(f"/api/v1/envs/{env}/panes/{win}")["win"] == name
    assert http_.json(f"/api/v1/envs/{env}/panes/{win}/export?format=json")["traces"][0]["y"] == [3.0, 4.0]
    assert http_.json(f"/api/v1/envs/{env}/meta")["env"] == name
    http_.json(f"/api/v1/envs/{env}/run")
    for page in ("env", "console", "embed"):
        status, body = http_.request("GET", f"/{page}/{env}")
        assert status == 200 and boot_env(body) == name, (page, name, status)


def store_and_check(http_: Http, names: list[str]) -> None:
    status, body = http_.request("POST", "/api/v1/events", {"events": [line(n, n) for n in names]})
    assert status == 200, body[:300]
    errors: dict[int, str] = {}
    for e in json.loads(body).get("errors", []):  # alike rejections past the first few come grouped in "also"
        for index in [e["index"], *e.get("also", [])]:
            errors[index] = e["error"]
    for i, name in enumerate(names):
        assert (i in errors) == refused(name), (name, errors.get(i))
    listed = {e["name"] for e in http_.json("/api/v1/envs")["envs"]}
    kept = {n for n in names if not refused(n)}
    assert kept <= listed and not {n for n in names if refused(n)} & listed
    if kept:  # a list of names (Compare, Scalars, archives): each encoded, comma-separated, read back whole
        picked = http_.json("/api/v1/charts?by=win&envs=" + ",".join(q(n) for n in sorted(kept)) + ",")
        assert picked["envs"] == sorted(kept)
    for name in sorted(kept):
        assert_opens_everywhere(http_, name)
        status, _ = http_.request("DELETE", f"/api/v1/envs/{q(name)}")
        assert status == 200, name
    assert not kept & {e["name"] for e in http_.json("/api/v1/envs")["envs"]}


def test_the_issues_names_open_on_every_route(server) -> None:
    http_ = Http(server.port)
    store_and_check(http_, TRICKY)
    status, body = http_.request("GET", f"/api/v1/envs/{q('..')}")
    assert status == 400 and b"no URL can name it" in body


def test_generated_names_are_refused_or_open_on_every_route(server) -> None:
    http_ = Http(server.port)

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.lists(NAMES, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE, unique=True))
    def check(names: list[str]) -> None:
        store_and_check(http_, names)

    check()


def test_an_absolute_log_dir_opens_like_any_other(server, tmp_path: Path) -> None:
    """mmengine's TensorboardVisBackend passes an absolute log_dir outside the working directory."""
    log_dir = str(tmp_path / "work_dirs" / "20260101_120000" / "vis_data")
    with SummaryWriter(log_dir, server="http://127.0.0.1", port=server.port) as w:
        w.add_scalar("loss", 0.5, 0)
        w.add_scalar("loss", 0.25, 1)
        assert w.flush(timeout=10)
    http_ = Http(server.port)
    env = w.get_logdir()
    assert env == log_dir  # outside the working directory a live writer keeps the whole path (README)
    assert http_.json(f"/api/v1/envs/{q(env)}/panes/loss/export?format=json")["traces"][0]["y"] == [0.5, 0.25]
    status, body = http_.request("GET", f"/env/{q(env)}")
    assert status == 200 and boot_env(body) == env


@pytest.mark.parametrize("name", ["/abs/work_dirs/20260101_120000/vis_data", "%252F", "a/panes/b"])
def test_url_for_builds_links_that_route_back(api, name: str) -> None:
    """Links the server builds itself (url_for) name the env whole, a leading "/" included."""
    from flask import url_for

    with api.application.test_request_context():
        link = url_for("pages.env_page", name=name)
    page = api.get(link)
    assert page.status_code == 200 and boot_env(page.data) == name, link


def test_names_open_under_a_base_url(make_server) -> None:
    """Behind a proxy's prefix (--base-url /pb) the raw path holds the prefix: names still route whole."""
    srv = make_server("prefixed", base_url="/pb")
    http_ = Http(srv.port)
    name = "/abs/work_dirs/20260101_120000/vis_data"
    status, body = http_.request("POST", "/pb/api/v1/events", {"events": [line(name, "a,b/c")]})
    assert status == 200 and json.loads(body)["errors"] == [], body
    assert http_.json(f"/pb/api/v1/envs/{q(name)}/panes/{q('a,b/c')}")["win"] == "a,b/c"
    status, body = http_.request("GET", f"/pb/env/{q(name)}")
    assert status == 200 and boot_env(body) == name

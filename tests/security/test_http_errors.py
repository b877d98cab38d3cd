"""Malformed input on any HTTP route gets a 4xx JSON error, never a 500, and loses nothing already stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings

BODIES = [b"", b"{", b"[]", b"null", b"1", b'"s"', b"\xfc\xfd", b"[" * 3000 + b"]" * 3000]


@pytest.mark.parametrize("route", ["/vis_socket_wrap", "/vis_socket_wrap?sid=1", "/vis_event", "/events", "/update",
                                   "/win_data", "/win_exists", "/delete_env", "/save", "/close", "/win_hash",
                                   "/fork_env", "/api/v1/events"])
def test_malformed_bodies_never_get_a_5xx_and_refusals_explain_themselves(api: Any, route: str):
    for body in BODIES:
        resp = api.post(route, data=body, content_type="application/json")
        assert resp.status_code < 500, (route, body[:20], resp.status_code, resp.get_data()[:200])
        if resp.status_code >= 400:
            assert "error" in resp.get_json(), (route, body[:20])


def test_a_poison_event_over_http_is_rejected_alone(api: Any):
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    events = [{"op": "set", "kind": "text", "env": "h", "win": "a", "content": "kept"},
              {"op": "set", "kind": "text", "env": "h", "win": "deep", "content": deep},
              {"op": "update", "kind": "line", "env": "h", "win": "w", "mode": "append",
               "traces": [{"x": [1], "y": [10**400]}]},
              {"op": "set", "kind": "text", "env": "h", "win": "b", "content": "kept too"}]
    resp = api.post("/api/v1/events", data=json.dumps({"events": events}), content_type="application/json")
    assert resp.status_code == 200
    body = resp.get_json()
    assert body["ok"] is False and [e["index"] for e in body["errors"]] == [1, 2]
    assert api.get("/api/v1/envs/h/panes/a").get_json()["data"]["html"] == "kept"
    assert api.get("/api/v1/envs/h/panes/b").get_json()["data"]["html"] == "kept too"


def test_a_non_ascii_visdom_login_is_refused_not_a_500(tmp_path: Path):
    settings = Settings(db=str(tmp_path / "login.db"), username="u", password="p", token="t")
    svc = Services.open(settings)
    svc.start()
    try:
        client = create_app(settings, svc).test_client()
        for body in ({"username": "ü", "password": "ö"}, [1], {"username": "u", "password": "\ud800"}):
            resp = client.post("/", data=json.dumps(body), content_type="application/json",
                               headers={"Authorization": "Bearer t"})
            assert resp.status_code == 401, body
    finally:
        svc.stop()


def test_visdom_bodies_with_hostile_shapes_get_a_400(api: Any):
    deep_eid = b'{"eid": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    huge_x = b'{"eid":"e","win":"w","data":[{"x":[1,1' + b"0" * 400 + b'],"y":[1,2],"type":"scatter","mode":"lines"}]}'
    for route in ("/events", "/update", "/close", "/win_exists", "/win_hash", "/win_data", "/fork_env", "/delete_env"):
        for body in (deep_eid, huge_x):
            resp = api.post(route, data=body)
            assert resp.status_code == 400, (route, body[:30], resp.status_code)
            assert "error" in resp.get_json()


def test_a_browser_event_with_a_64_bit_overflowing_integer_is_forwarded_not_a_500(api: Any):
    body = b'{"event_type":"KeyPress","eid":"main","target":"w","pane_data":false,"key":"a","n":18446744073709551616}'
    assert api.post("/vis_event", data=body).status_code < 500

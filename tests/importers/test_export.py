"""Pane export over real HTTP: exact data in CSV and JSON, streamed, with any env or pane name as the filename."""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request
from typing import Any


def fetch(server: Any, env: str, win: str, fmt: str) -> tuple[Any, bytes]:
    path = f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/{urllib.parse.quote(win, safe='')}/export"
    with urllib.request.urlopen(f"{server.url}{path}?format={fmt}", timeout=30) as r:
        return r.headers, r.read()


def test_json_export_has_every_point_of_every_trace_in_order(server: Any):
    c = server.client("exp")
    n = 5000  # several chunk rows per trace
    c.line(X=list(range(n)), Y=[[float(i), -float(i)] for i in range(n)], win="w",
           opts={"legend": ["up", "down"]})
    c.line(X=[n], Y=[float("nan")], win="w", name="up", update="append")
    assert c.flush(timeout=30)
    headers, body = fetch(server, "exp", "w", "json")
    data = json.loads(body)
    assert (data["env"], data["win"]) == ("exp", "w")
    up, down = data["traces"]
    assert (up["name"], down["name"]) == ("up", "down")
    assert up["x"] == list(range(n + 1)) and up["y"][:n] == [float(i) for i in range(n)] and up["y"][n] is None
    assert down["y"] == [-float(i) for i in range(n)]
    assert len(up["wall"]) == n + 1 and all(math.isfinite(w) for w in up["wall"])
    assert headers["Content-Type"].startswith("application/json")
    c.close_connection(timeout=5)


def test_any_env_name_downloads_with_an_rfc_5987_filename(server: Any):
    env, win = "实验 🚀 \"quoted\"", "损失"
    c = server.client(env)
    c.line(X=[0, 1], Y=[1.0, 2.0], win=win)
    assert c.flush(timeout=30)
    for fmt in ("csv", "json"):
        headers, body = fetch(server, env, win, fmt)
        disposition = headers["Content-Disposition"]
        assert disposition.isascii()
        assert f"filename*=UTF-8''{urllib.parse.quote(f'{env}-{win}.{fmt}', safe='')}" in disposition
        assert body
    c.close_connection(timeout=5)

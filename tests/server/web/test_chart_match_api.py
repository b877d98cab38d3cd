"""Every tag matching a pattern on one chart (GET /api/v1/chart/match, server/web/charts_api.py): a glob or a regex
over the picked runs' line tags, one series per tag and run with its title, points per line bounded, 4xx JSON for
bad patterns."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
from collections.abc import Iterator

import pytest

from helpers.browser import http

RUNS = ["ma", "mb"]
LAYERS = 40
STEPS = 300


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("match") / "paneboard.db").start()
    events = []
    for r, env in enumerate(RUNS):
        for i in range(LAYERS):
            for what in ("grad_norm", "weight_norm"):
                y = [float(r * 1000 + i + s / STEPS) for s in range(STEPS)]
                events.append({"op": "set", "env": env, "win": f"l{i}_{what}", "kind": "line",
                               "opts": {"title": f"layer{i:02d}/{what}"},
                               "traces": [{"name": None, "x": [float(s) for s in range(STEPS)], "y": y}]})
    events.append({"op": "set", "env": "ma", "win": "pts", "kind": "scatter", "opts": {"title": "layer00/points"},
                   "traces": [{"name": None, "x": [0.0], "y": [1.0]}]})
    for k in range(0, len(events), 100):
        assert http(srv, "POST", "/api/v1/events", {"events": events[k:k + 100]})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def match(server, **args) -> dict:
    return http(server, "GET", f"/api/v1/chart/match?{urllib.parse.urlencode(args)}")


def test_a_glob_draws_every_matching_tag_of_every_run(server):
    res = match(server, pattern="layer*/grad_norm", width=300)
    s = res["series"]
    assert res["envs"] == RUNS
    assert sorted(zip(s["env"], s["title"], strict=True)) == sorted(
        (r, f"layer{i:02d}/grad_norm") for r in range(2) for i in range(LAYERS))
    assert all(t == STEPS for t in s["total"])
    # Each line is bounded (the default per-line budget), its first and last points kept: the right line per tag.
    assert max(s["n"]) <= 32 and sum(s["n"]) == len(res["x"]) == len(res["y"])
    k = 0
    for env, title, n in zip(s["env"], s["title"], s["n"], strict=True):
        layer = int(title[5:7])
        assert res["x"][k] == 0 and res["x"][k + n - 1] == STEPS - 1
        assert res["y"][k] == pytest.approx(env * 1000 + layer)
        k += n


def test_a_regex_and_a_run_pick_narrow_it(server):
    res = match(server, pattern=r"layer0[0-4]/(grad|weight)_norm$", regex=1, envs="mb", per=8)
    assert sorted(res["series"]["title"]) == sorted(f"layer0{i}/{w}_norm" for i in range(5) for w in ("grad", "weight"))
    assert set(res["series"]["env"]) == {0} and res["envs"] == ["mb"]
    assert max(res["series"]["n"]) <= 8
    # Scatter panes are no lines: a pattern matching one leaves it out.
    assert match(server, pattern="layer00/*")["series"]["title"] == ["layer00/grad_norm", "layer00/weight_norm"] * 2


@pytest.mark.parametrize("args,why", [({}, "pattern is required"), ({"pattern": "  "}, "pattern is required"),
                                      ({"pattern": "(", "regex": "1"}, "not a valid regex"),
                                      ({"pattern": "x" * 1001}, "longer than 1000"),
                                      ({"pattern": "*", "per": "0"}, "per must be"),
                                      ({"pattern": "*", "width": "abc"}, "width must be an integer"),
                                      ({"pattern": "*", "envs": "nope"}, "not found")])
def test_bad_input_is_a_4xx_naming_why(server, args, why):
    with pytest.raises(urllib.error.HTTPError) as err:
        match(server, **args)
    assert err.value.code in (400, 404)
    assert why in json.loads(err.value.read())["error"]

"""Chart reads of many runs (server/web/charts_api.py): no run cap, one budget shared by every series with its
spikes kept, only new points for a live update, Compare's (win, title) keying, and 4xx JSON for bad input."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
from collections.abc import Iterator

import pytest

from helpers.browser import http
from helpers.sweep import log_sweep

RUNS = [f"sw{i:03d}" for i in range(220)]
STEPS = 400


@pytest.fixture(scope="module")
def server(tmp_path_factory, server_types) -> Iterator:
    srv = server_types.InProcessServer(db=tmp_path_factory.mktemp("charts") / "paneboard.db").start()
    log_sweep(srv, RUNS, STEPS)
    # A spike in one run: a shared budget of a few points per run must still show it.
    spike = {"op": "update", "env": "sw007", "win": "train_loss", "kind": "line", "mode": "append",
             "traces": [{"name": None, "x": [float(STEPS)], "y": [50.0]}]}
    more = {"op": "update", "env": "sw007", "win": "train_loss", "kind": "line", "mode": "append",
            "traces": [{"name": None, "x": [float(x) for x in range(STEPS + 1, STEPS + 200)],
                        "y": [0.01] * 199}]}
    # Compare keying: two panes of one env share a title but not a win (iterations and epochs).
    two = [{"op": "set", "env": "cmp_a", "win": w, "kind": "line", "opts": {"title": "loss"},
            "traces": [{"name": None, "x": [0.0, 1.0], "y": [1.0, 0.5]}]} for w in ("loss_iter", "loss_epoch")]
    one = {"op": "set", "env": "cmp_b", "win": "loss_iter", "kind": "line", "opts": {"title": "loss"},
           "traces": [{"name": None, "x": [0.0, 1.0], "y": [2.0, 1.0]}]}
    assert http(srv, "POST", "/api/v1/events", {"events": [spike, more, *two, one]})["errors"] == []
    try:
        yield srv
    finally:
        srv.stop()


def _get(server, path: str, **params) -> dict:
    return server.get_json(f"{path}?{urllib.parse.urlencode(params)}")


def _status(server, path: str, **params) -> tuple[int, dict]:
    try:
        return 200, _get(server, path, **params)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _split(res: dict) -> list[tuple[str, list, list]]:
    """(env, x, y) per series from the columnar answer."""
    out, k = [], 0
    for i, n in zip(res["series"]["env"], res["series"]["n"], strict=True):
        out.append((res["envs"][i], res["x"][k:k + n], res["y"][k:k + n]))
        k += n
    return out


def test_every_run_in_one_read_with_a_shared_budget(server):
    envs = ",".join(RUNS)
    charts = _get(server, "/api/v1/charts", envs=envs)["charts"]
    assert sorted(c["title"] for c in charts) == ["train/acc", "train/loss", "val/loss"]
    assert all(len(c["envs"]) == len(RUNS) for c in charts)
    res = _get(server, "/api/v1/chart", envs=envs, title="train/loss", width=300, budget=8000)
    series = _split(res)
    assert [env for env, _, _ in series] == RUNS
    assert res["per_series"] == 8000 // len(RUNS)
    assert sum(len(x) for _, x, _ in series) <= 8000 + 2 * len(RUNS)  # + first and last point of each
    spiky = dict((env, y) for env, _, y in series)["sw007"]
    assert max(spiky) == 50.0  # the min/max buckets keep the spike
    assert all(isinstance(v, int) for v in res["x"][:50])  # steps go out as integers
    # A small chart of few runs: at most two points per pixel however big the budget.
    few = _get(server, "/api/v1/chart", envs="sw001,sw002", title="val/loss", width=100, budget=100_000)
    assert few["per_series"] == 200 and all(len(x) <= 202 for _, x, _ in _split(few))


def test_absent_envs_means_every_run(server):
    res = _get(server, "/api/v1/charts")
    assert set(res["envs"]) == {*RUNS, "cmp_a", "cmp_b"}


def test_after_returns_only_newer_points(server):
    res = _get(server, "/api/v1/chart", envs="sw001,sw007", title="train/loss", after=f"{STEPS - 3},{STEPS + 195}",
               walls=1)
    (e1, x1, _), (e7, x7, _) = _split(res)
    assert (e1, x1) == ("sw001", [STEPS - 2, STEPS - 1])
    assert (e7, x7) == ("sw007", [STEPS + 196, STEPS + 197, STEPS + 198, STEPS + 199])
    assert len(res["wall"]) == 6


def test_compare_keys_panes_by_win_and_title(server):
    by_win = _get(server, "/api/v1/charts", envs="cmp_a,cmp_b", by="win")["charts"]
    assert sorted((c["win"], c["title"], tuple(c["envs"])) for c in by_win) == [
        ("loss_epoch", "loss", ("cmp_a",)), ("loss_iter", "loss", ("cmp_a", "cmp_b"))]
    res = _get(server, "/api/v1/chart", envs="cmp_a,cmp_b", title="loss", win="loss_iter")
    assert [(env, y) for env, _, y in _split(res)] == [("cmp_a", [1.0, 0.5]), ("cmp_b", [2.0, 1.0])]


@pytest.mark.parametrize(("path", "params", "word"), [
    ("/api/v1/chart", {"envs": "sw001"}, "title"),
    ("/api/v1/chart", {"envs": "sw001", "title": "x", "width": "0"}, "width"),
    ("/api/v1/chart", {"envs": "sw001,sw002", "title": "x", "after": "1"}, "after"),
    ("/api/v1/chart", {"envs": "nope", "title": "x"}, "not found"),
    ("/api/v1/charts", {"envs": "sw001", "by": "colour"}, "by"),
])
def test_bad_chart_reads_are_4xx_json(server, path, params, word):
    code, body = _status(server, path, **params)
    assert 400 <= code < 500 and word in body["error"]


def test_compare_and_groups_take_more_than_the_old_caps(server):
    envs = ",".join(RUNS[:70])
    assert len(_get(server, "/api/v1/compare", envs=envs, points=50)["envs"]) == 70
    assert len(_get(server, "/api/v1/groups", envs=envs, points=50)["groups"]) >= 1


def test_compare_shares_the_chart_budget_across_every_trace(server):
    """A raw compare of 200 runs reads what a chart draws (24,000 points in all), not 2,000 points a trace."""
    res = _get(server, "/api/v1/compare", envs=",".join(RUNS[:200]))
    traces = [t for p in res["panes"] for t in p["traces"]]
    assert len(traces) >= 200 and all(t["total"] >= STEPS for t in traces)
    per = 24_000 // len(traces)
    assert all(len(t["x"]) <= per + 2 for t in traces) and sum(len(t["x"]) for t in traces) <= 24_000 + 2 * len(traces)
    few = _get(server, "/api/v1/compare", envs="sw001,sw002", points=100)  # few traces: ?points caps each
    assert all(len(t["x"]) <= 102 and t["downsampled"] for p in few["panes"] for t in p["traces"])
    code, body = _status(server, "/api/v1/compare", envs="sw001", budget="0")
    assert code == 400 and "budget" in body["error"]


def test_a_chart_read_equals_each_pane_read_at_its_share_of_the_budget(server):
    """The batched read of many series (one numpy pass) downsamples exactly as a pane's own read."""
    res = _get(server, "/api/v1/chart", envs=",".join(RUNS[:40]), title="val/loss", width=300, budget=1200)
    per = res["per_series"]
    assert per == 30
    for env, x, y in _split(res)[:6]:
        t = server.get_json(f"/api/v1/envs/{env}/panes/val_loss?points={per}")["data"]["traces"][0]
        assert t["downsampled"] and x == t["x"]
        assert y == pytest.approx(t["y"], rel=1e-6)  # float32 on the wire

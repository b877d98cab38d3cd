"""The `hparams` env op and GET /api/v1/hparams: sessions across envs, bools, domains, metric fallback to panes."""

from __future__ import annotations

import pytest


def events(api, *evs) -> dict:
    r = api.post("/api/v1/events", json={"events": list(evs)})
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def hp(env, hparams, metrics=None, session=None, domains=None, t=None) -> dict:
    ev = {"op": "hparams", "env": env, "hparams": hparams, "metrics": metrics or {}, "domains": domains}
    if session is not None:
        ev["session"] = session
    if t is not None:
        ev["t"] = t
    return ev


def line(env, title, ys) -> dict:
    return {"op": "set", "env": env, "win": f"w-{title}", "kind": "line", "opts": {"title": title},
            "traces": [{"name": "v", "x": list(range(len(ys))), "y": ys}]}


def get(api, query="") -> dict:
    r = api.get("/api/v1/hparams" + query)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def by_key(sessions) -> dict:
    return {(s["env"], s["session"]): s for s in sessions}


def test_sessions_across_envs_keep_types_domains_and_fall_back_to_last_line_value(api):
    res = events(
        api,
        hp("run_a", {"lr": 0.1, "opt": "sgd", "bn": True}, {"acc": 0.91, "loss": 0.3},
           domains={"opt": ["sgd", "adam"], "bn": [True, False]}, t=100.0),
        hp("run_b", {"lr": 0.01, "opt": "adam", "bn": False}, {"acc": 0.95}, session="seed1", t=200.0),
        hp("run_b", {"lr": 0.02, "opt": "adam", "bn": False}, {"acc": 0.93, "loss": 0.5}, session="seed2"),
        # run_b/seed1 logs no loss in the op, but its env has a line pane titled "loss": its last value counts.
        line("run_b", "loss", [2.0, 1.0, 0.25]),
        line("run_plain", "loss", [1.0]),  # an env without hparams is not a session
    )
    assert res["ok"], res
    out = get(api)
    cols = {c["name"]: c for c in out["hparams"]}
    assert cols["lr"] == {"name": "lr", "type": "number", "domain": None, "count": 3, "distinct": 3, "varying": True,
                          "log": True, "identifier": False}  # a learning rate by its name: a log axis even within one decade
    assert cols["opt"] == {"name": "opt", "type": "string", "domain": ["sgd", "adam"], "count": 3, "distinct": 2,
                           "varying": True, "log": False, "identifier": False}
    assert cols["bn"]["type"] == "bool" and cols["bn"]["domain"] == [True, False]
    assert out["metrics"] == ["acc", "loss"]
    rows = by_key(out["sessions"])
    assert set(rows) == {("run_a", "."), ("run_b", "seed1"), ("run_b", "seed2")}
    a = rows[("run_a", ".")]
    assert a["hparams"] == {"lr": 0.1, "opt": "sgd", "bn": True} and a["hparams"]["bn"] is True
    assert a["metrics"] == {"acc": 0.91, "loss": 0.3} and a["wall"] == 100.0
    assert rows[("run_b", "seed1")]["hparams"]["bn"] is False
    assert rows[("run_b", "seed1")]["metrics"] == {"acc": 0.95, "loss": 0.25}   # fallback: last point of the pane
    assert rows[("run_b", "seed2")]["metrics"] == {"acc": 0.93, "loss": 0.5}    # the op's own value wins

    only_b = get(api, "?envs=run_b")
    assert {s["env"] for s in only_b["sessions"]} == {"run_b"} and len(only_b["sessions"]) == 2
    assert {c["name"]: c["domain"] for c in only_b["hparams"]}["opt"] is None  # domains only from listed envs
    assert api.get("/api/v1/hparams?envs=nope").status_code == 404


def test_repeated_calls_merge_metrics_and_send_meta(api):
    events(api, hp("r", {"lr": 1}, {"acc": 0.5, "loss": None}, session="s"))
    events(api, hp("r", {"lr": 1}, {"loss": 0.7}, session="s"), hp("r", {"lr": 1}, {"acc": None}, session="s"))
    meta = api.get("/api/v1/envs/r/meta").get_json()["meta"]
    assert meta["hparams"]["s"]["metrics"] == {"acc": 0.5, "loss": 0.7}  # merged; a later null erases nothing
    assert meta["hparams"]["s"]["hparams"] == {"lr": 1}
    # A metric with no value anywhere (op nor pane) reads as null, never as a made-up number.
    events(api, hp("r", {"lr": 2}, {"f1": None}, session="t"))
    rows = by_key(get(api, "?envs=r")["sessions"])
    assert rows[("r", "t")]["metrics"] == {"acc": None, "loss": None, "f1": None}
    assert rows[("r", "s")]["metrics"]["f1"] is None


def test_metric_nan_is_stored_as_no_value(api):
    r = api.post("/api/v1/events", data=b'{"events": [{"op": "hparams", "env": "n", "hparams": {"a": 1}, '
                                         b'"metrics": {"loss": NaN}}]}', content_type="application/json")
    assert r.get_json()["ok"], r.get_json()
    assert get(api, "?envs=n")["sessions"][0]["metrics"] == {"loss": None}


@pytest.mark.parametrize("bad, message", [
    ({"hparams": "lr=1"}, "hparams must be an object"),
    ({"hparams": {"lr": [1, 2]}}, "must be a number, string or bool"),
    ({"hparams": {"lr": None}}, "must be a number, string or bool"),
    ({"hparams": {"": 1}}, "names must be non-empty"),
    ({"hparams": {"a": 1}, "metrics": {"acc": "high"}}, "metrics['acc'] must be a number or null"),
    ({"hparams": {"a": 1}, "metrics": {"acc": True}}, "metrics['acc'] must be a number or null"),
    ({"hparams": {"a": 1}, "domains": {"b": [1]}}, "names no hparam"),
    ({"hparams": {"a": 1}, "domains": {"a": []}}, "must be a list of 1..1000 values"),
    ({"hparams": {"a": 1}, "domains": {"a": ["x"]}}, "of the hparam's type (number)"),
    ({"hparams": {"a": "x" * 2000}}, "at most 1000 characters"),
    ({"hparams": {"a": 1}, "session": 5}, "session"),
    ({"hparams": {f"h{i}": i for i in range(1001)}}, "at most 1000 hparams"),
])
def test_invalid_ops_are_rejected_and_store_nothing(api, bad, message):
    res = events(api, {"op": "hparams", "env": "bad", **bad})
    assert not res["ok"] and message in res["errors"][0]["error"], res
    assert api.get("/api/v1/envs/bad").status_code == 404  # nothing written, not even the env


def test_summary_writer_add_hparams_reaches_the_api(server):
    import paneboard

    w = paneboard.SummaryWriter("sdk_run", server="http://127.0.0.1", port=server.port)
    w.add_hparams({"lr": 0.1, "bn": True, "opt": "sgd", "skip": None}, {"hparam/acc": 0.75},
                  hparam_domain_discrete={"opt": ["sgd", "adam"]}, run_name="trial1")
    w.add_hparams({"lr": 0.2, "bn": False, "opt": "adam"}, {"hparam/acc": 0.5}, run_name="trial2")
    assert w.flush(timeout=10)
    w.close()
    out = server.get_json("/api/v1/hparams?envs=sdk_run")
    assert {c["name"]: (c["type"], c["domain"]) for c in out["hparams"]} == {
        "lr": ("number", None), "bn": ("bool", None), "opt": ("string", ["sgd", "adam"])}
    rows = by_key(out["sessions"])
    assert rows[("sdk_run", "trial1")]["hparams"] == {"lr": 0.1, "bn": True, "opt": "sgd"}
    assert rows[("sdk_run", "trial1")]["metrics"] == {"hparam/acc": 0.75}
    assert rows[("sdk_run", "trial2")]["metrics"] == {"hparam/acc": 0.5}

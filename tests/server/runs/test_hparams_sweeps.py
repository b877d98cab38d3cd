"""GET /api/v1/hparams and /hparams/importance for real sweeps: Client(config=...) runs as rows, the keys that vary
as default axes, log axes, gaps, importance against a metric, and its cost at 1,000 runs."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import numpy as np

from helpers.hparams_sweep import hf_args, sweep_events


def _req(server, method: str, path: str, body=None) -> tuple[int, dict]:
    """(status, JSON answer) of a request to the real server; 4xx answers too."""
    req = urllib.request.Request(server.url + path, method=method, headers={"Content-Type": "application/json"},
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _get(server, path: str) -> dict:
    status, body = _req(server, "GET", path)
    assert status == 200, body
    return body


def test_client_config_runs_are_rows_with_their_varying_keys(server):
    import paneboard

    configs = {"cfg_a": {"lr": 1e-4, "batch_size": 32, "optim": {"name": "adam", "betas": [0.9, 0.99]}, "dropout": 0.1},
               "cfg_b": {"lr": 1e-3, "batch_size": 32, "optim": {"name": "sgd", "betas": [0.9, 0.99]}},
               "cfg_c": {"lr": 1e-2, "batch_size": 32, "optim": {"name": "sgd", "betas": [0.9, 0.99]}, "dropout": 0.3}}
    for i, (env, config) in enumerate(configs.items()):
        c = paneboard.Client(server="http://127.0.0.1", port=server.port, env=env, config=config, spool_dir=False)
        c.line(X=[0, 1, 2], Y=[2.0, 1.0, 0.5 + i], win="loss")
        assert c.flush(timeout=10)
        c.close_connection()
    out = _get(server, "/api/v1/hparams")
    rows = {r["env"]: r for r in out["sessions"]}
    assert set(rows) == set(configs) and {r["session"] for r in rows.values()} == {"."}
    # Nested keys are flattened as the runs query names them; lists are kept as JSON text; a missing key is absent.
    assert rows["cfg_a"]["hparams"] == {"lr": 1e-4, "batch_size": 32, "optim.name": "adam", "optim.betas": "[0.9,0.99]",
                                        "dropout": 0.1}
    assert "dropout" not in rows["cfg_b"]["hparams"]
    assert {e: r["metrics"] for e, r in rows.items()} == {"cfg_a": {"loss": 0.5}, "cfg_b": {"loss": 1.5},
                                                          "cfg_c": {"loss": 2.5}}
    cols = {c["name"]: c for c in out["hparams"]}
    assert cols["lr"]["varying"] and cols["lr"]["log"]               # two decades
    assert not cols["batch_size"]["varying"] and not cols["optim.betas"]["varying"]
    assert cols["dropout"]["varying"] and cols["dropout"]["count"] == 2 and not cols["dropout"]["log"]
    assert out["metric"] == "loss" and out["metrics"] == ["loss"]
    assert out["axes"] == ["h:lr", "h:optim.name", "h:dropout", "m:loss"]  # constant keys wait in the picker


def test_add_hparams_sessions_and_config_runs_appear_together(server):
    import paneboard

    w = paneboard.SummaryWriter("tb_run", server="http://127.0.0.1", port=server.port)
    w.add_hparams({"lr": 0.1, "opt": "sgd"}, {"hparam/loss": 0.7}, run_name="trial1")
    assert w.flush(timeout=10)
    w.close()
    c = paneboard.Client(server="http://127.0.0.1", port=server.port, env="sdk_run", config={"lr": 0.01},
                         spool_dir=False)
    assert c.flush(timeout=10)
    c.close_connection()
    out = _get(server, "/api/v1/hparams")
    # The add_hparams env is its sessions only: the config the op also fills is not a second row.
    assert sorted((r["env"], r["session"], r["source"]) for r in out["sessions"]) == [
        ("sdk_run", ".", "config"), ("tb_run", "trial1", "hparams")]
    assert out["metric"] == "hparam/loss"
    only = _get(server, "/api/v1/hparams?envs=sdk_run,tb_run&metric=hparam/loss")
    assert [r["env"] for r in only["sessions"]] == ["sdk_run", "tb_run"]  # the order asked for


def test_two_hundred_run_sweep_axes_gaps_and_importance(server):
    status, body = _req(server, "POST", "/api/v1/events", {"events": sweep_events(200)})
    assert status == 200 and body["ok"], body
    out = _get(server, "/api/v1/hparams")
    assert len(out["sessions"]) == 200
    cols = {c["name"]: c for c in out["hparams"]}
    assert {k for k, c in cols.items() if c["log"]} == {"lr", "weight_decay"}
    assert not cols["dataset"]["varying"] and not cols["model.act"]["varying"]
    assert cols["dropout"]["count"] == 160 and cols["dropout"]["varying"]
    # A name unique to each run varies but tells nothing: neither a default axis nor ranked below.
    assert cols["run_name"]["identifier"] and cols["run_name"]["varying"] and not cols["lr"]["identifier"]
    assert out["axes"] == ["h:lr", "h:weight_decay", "h:batch_size", "h:optimizer", "h:seed", "h:model.depth",
                           "h:dropout", "m:loss"]
    gaps = [r for r in out["sessions"] if "dropout" not in r["hparams"]]
    assert len(gaps) == 40

    assert out["metrics"] == ["loss", "val/acc"] and out["metric"] == "loss"
    assert _get(server, "/api/v1/hparams?metric=val/acc")["axes"][-1] == "m:val/acc"
    imp = _get(server, "/api/v1/hparams/importance?metric=loss")
    assert imp["metric"] == "loss" and imp["rows"] == 200 and imp["trees"] > 0
    params = {p["name"]: p for p in imp["params"]}
    assert set(params) == {"lr", "weight_decay", "batch_size", "optimizer", "seed", "model.depth", "dropout"}
    assert imp["params"][0]["name"] == "lr" and params["lr"]["importance"] > 0.5
    assert abs(sum(p["importance"] for p in imp["params"]) - 1) < 1e-3
    assert params["optimizer"]["correlation_kind"] == "eta" and params["optimizer"]["correlation"] > 0.1
    assert params["lr"]["correlation_kind"] == "pearson" and -1 <= params["lr"]["correlation"] <= 1
    assert _get(server, "/api/v1/hparams/importance?metric=loss") == imp   # seeded: the same forest every time

    status, body = _req(server, "GET", "/api/v1/hparams/importance?metric=acc")
    assert status == 400 and "metric 'acc' is not a metric" in body["error"]
    status, body = _req(server, "GET", "/api/v1/hparams?envs=sweep0000,nope")
    assert status == 404 and "nope" in body["error"]


def test_one_hf_run_with_a_hundred_args_gets_a_few_readable_default_axes(server):
    ev = {"op": "hparams", "env": "hf", "hparams": hf_args(100), "metrics": {"eval/loss": 0.4}}
    status, body = _req(server, "POST", "/api/v1/events", {"events": [ev]})
    assert status == 200 and body["ok"], body
    out = _get(server, "/api/v1/hparams")
    assert len(out["hparams"]) == 100 and not any(c["varying"] for c in out["hparams"])
    # Nothing varies in one run: a few well-known keys, not 100 axes; the rest are in the picker.
    assert out["axes"] == ["h:args/learning_rate", "h:args/per_device_train_batch_size", "h:args/num_train_epochs",
                           "h:args/weight_decay", "h:args/lr_scheduler_type", "h:args/seed", "m:eval/loss"]
    imp = _get(server, "/api/v1/hparams/importance")
    assert imp["metric"] == "eval/loss" and imp["params"] == []


def test_forest_finds_the_informative_key_at_bounded_cost_for_a_thousand_runs():
    from paneboard.server.hparams.importance import importance
    from paneboard.server.hparams.table import Table, columns

    rng = np.random.default_rng(3)
    rows = []
    for _ in range(1_000):
        hp = {f"noise{k}": float(rng.normal()) for k in range(40)}
        hp["lr"] = float(10 ** rng.uniform(-5, -1))
        rows.append({"hparams": hp, "metrics": {"loss": (np.log10(hp["lr"]) + 3) ** 2 + float(rng.normal(0, 0.1))}})
    table = Table(rows=rows)
    for r in rows:
        for k, v in r["hparams"].items():
            table.values.setdefault(k, []).append(v)
    cols = columns(table)
    start = time.perf_counter()
    out = importance(rows, cols, "loss")
    took = time.perf_counter() - start
    assert out["params"][0]["name"] == "lr" and out["params"][0]["importance"] > 0.6
    # |r| is small although lr decides the loss: a U-shaped dependence, which is why the forest is shown too.
    assert abs(out["params"][0]["correlation"]) < 0.3
    assert took < 10, f"importance for 1,000 runs x 41 keys took {took:.2f} s"


def test_importance_without_runs_is_empty(server):
    assert _get(server, "/api/v1/hparams/importance") == {"metric": None, "rows": 0, "params": [], "trees": 0,
                                                          "truncated": False}
    assert _get(server, "/api/v1/hparams")["sessions"] == []

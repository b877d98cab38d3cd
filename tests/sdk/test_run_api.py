"""The W&B-style run API (paneboard.init/log/finish, config, summary, define_metric, modes) against a real server."""

from __future__ import annotations

import logging
import urllib.parse

import numpy as np
import pytest
import torch

import paneboard
from helpers.tensorboard import exported, records


def _run_info(server, env: str) -> dict:
    return server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/run")


def test_log_steps_sections_values_and_summary(online, tmp_path) -> None:
    run = paneboard.init(project="proj", name="first", config={"lr": 0.1, "layers": 2}, tags=["a"], dir=tmp_path)
    assert paneboard.run is run and run.env == "proj/first" and run.name == "first"
    paneboard.config.batch = 32
    paneboard.config.update({"opt": "adam"})
    paneboard.log({"loss": 1.0, "acc": 0.5})                       # step 0
    paneboard.log({"loss": np.float32(0.5), "acc": torch.tensor(0.75)})  # step 1: numpy and 0-d tensor
    paneboard.log({"loss": 0.25}, commit=False)                    # step 2, not committed ...
    paneboard.log({"acc": 0.875})                                  # ... so this is step 2 too
    paneboard.log({"train": {"lr": 0.01}, "val/loss": 2, "flag": True, "name": "x"}, step=10)
    paneboard.log({"loss": 9.0}, step=3)                           # backwards: dropped, counted
    paneboard.log("not a dict")                                    # rejected, no exception
    paneboard.log({"w": np.arange(100.0)})                         # an array: a histogram at step 10
    paneboard.log({"loss": 0.125})                                 # step 11 (step=10 was committed: 11)
    run.summary["best_acc"] = 0.875
    assert run.summary["loss"] == 0.125 and paneboard.summary["best_acc"] == 0.875
    assert paneboard.config.lr == 0.1 and paneboard.config["batch"] == 32
    assert run.rejected == 2
    paneboard.finish()
    assert paneboard.run is None
    loss = exported(online, "proj/first", "loss")["loss"]
    assert loss["x"] == [0, 1, 2, 11] and loss["y"] == [1.0, 0.5, 0.25, 0.125]
    assert exported(online, "proj/first", "acc")["acc"]["x"] == [0, 1, 2]
    assert exported(online, "proj/first", "train/lr")["train/lr"]["x"] == [10]
    assert exported(online, "proj/first", "val/loss")["val/loss"]["y"] == [2.0]
    assert exported(online, "proj/first", "flag")["flag"]["y"] == [1.0]
    hist = records(online, "proj/first", "w")
    assert [r["step"] for r in hist] == [10]
    info = _run_info(online, "proj/first")
    cfg = info["config"]
    assert cfg["lr"] == 0.1 and cfg["batch"] == 32 and cfg["opt"] == "adam" and cfg["summary"] == {"best_acc": 0.875}
    assert "a" in info["tags"] and info["status"] == "finished"


def test_define_metric_step_metric_goal_and_summary(online, tmp_path) -> None:
    run = paneboard.init(project="p", name="metrics", dir=tmp_path)
    paneboard.define_metric("epoch")
    paneboard.define_metric("val/*", step_metric="epoch", summary="max", goal="maximize")
    paneboard.define_metric("train_loss", summary="min")
    for i in range(3):
        paneboard.log({"train_loss": [3.0, 1.0, 2.0][i]})
        paneboard.log({"epoch": i + 1, "val/acc": [0.2, 0.6, 0.4][i]})
    assert run.summary["val/acc"] == 0.6 and run.summary["train_loss"] == 1.0
    paneboard.finish()
    acc = exported(online, "p/metrics", "val/acc")["val/acc"]
    assert acc["x"] == [1, 2, 3]   # its x is the epoch, not the run's step
    pane = online.get_json("/api/v1/envs/p%2Fmetrics/panes/val%2Facc")
    assert pane["opts"].get("xlabel") == "epoch"
    assert _run_info(online, "p/metrics").get("best", {}).get("val/acc") == "max"


def test_generated_name_project_env_and_disabled_mode(online, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WANDB_PROJECT", "envproj")
    run = paneboard.init(dir=tmp_path)
    assert run.env == f"envproj/{run.name}" and run.name.count("-") == 2
    paneboard.log({"x": 1})
    paneboard.finish()
    assert exported(online, run.env, "x")["x"]["y"] == [1.0]
    monkeypatch.setenv("PANEBOARD_MODE", "disabled")
    off = paneboard.init(project="q", name="off", dir=tmp_path)
    paneboard.log({"x": 1})
    off.summary["y"] = 2
    paneboard.finish()
    assert off.client is None
    assert "q/off" not in [e["name"] for e in online.get_json("/api/v1/envs")["envs"]]


def test_offline_mode_spools_for_sync(online, tmp_path, monkeypatch, caplog) -> None:
    spool = tmp_path / "spool"
    monkeypatch.setenv("PANEBOARD_SPOOL_DIR", str(spool))
    caplog.set_level(logging.WARNING, "paneboard")
    paneboard.init(project="o", name="offline", mode="offline", dir=tmp_path)
    paneboard.log({"loss": 0.5})
    paneboard.log({"loss": 0.25})
    paneboard.finish()
    assert "o/offline" not in [e["name"] for e in online.get_json("/api/v1/envs")["envs"]]
    from paneboard.cli import main

    assert main(["sync", *map(str, spool.glob("*.spool"))]) == 0
    assert exported(online, "o/offline", "loss")["loss"]["y"] == [0.5, 0.25]


def test_unsupported_calls_name_themselves(online, tmp_path, caplog) -> None:
    with pytest.raises(RuntimeError, match="paneboard.init"):
        paneboard.log({"x": 1})
    assert paneboard.login() is True
    with pytest.raises(NotImplementedError, match="wandb.restore"):
        paneboard.restore("model.pt")
    paneboard.init(project="u", name="save", dir=tmp_path)
    caplog.set_level(logging.WARNING, "paneboard")
    assert paneboard.save("*.pt") == []
    assert "paneboard.save('*.pt') is not supported" in caplog.text

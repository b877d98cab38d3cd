"""`dash-server import` of W&B and MLflow data made by their own clients (offline), read back point for point."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import paneboard
from paneboard.server.cli.main import main as dash_server

WANDB_SCRIPT = """
import json, math, sys, wandb
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(5)
loss = rng.standard_normal(400)
loss[3], loss[4], loss[5] = math.nan, math.inf, -0.0
run = wandb.init(project="proj", name="r1", dir=out, config={"lr": 0.001, "opt": {"name": "adam"}},
                 tags=["base", "two words"], notes="some *notes*", settings=wandb.Settings(console="off"))
for i in range(400):
    row = {"train/loss": float(loss[i])}
    if i % 4 == 0:
        row["acc"] = i / 400
    run.log(row, step=i * 2)
run.summary["best_acc"] = 0.75
run.finish(exit_code=EXIT)
json.dump({"loss": loss.tolist(), "id": run.id}, open(out + "/truth.json", "w"))
"""


def _wandb_run(tmp_path: Path, exit_code: int = 0) -> dict:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true"}
    subprocess.run([sys.executable, "-c", WANDB_SCRIPT.replace("EXIT", str(exit_code)), str(tmp_path)], env=env,
                   check=True, timeout=120)
    return json.loads((tmp_path / "truth.json").read_text())


def _import(source: str | Path, db: Path, capsys) -> str:
    assert dash_server(["import", str(source), "--db", str(db)]) == 0
    return capsys.readouterr().out


@pytest.mark.e2e
def test_wandb_offline_run(tmp_path, make_server, capsys):
    t0 = time.time()
    truth = _wandb_run(tmp_path)
    db = tmp_path / "imported.db"
    out = _import(tmp_path / "wandb", db, capsys)
    assert re.search(r"imported (\d+) points of 1 wandb run", out) and int(out.split()[1]) >= 500  # + system
    assert "imported 0 points" in _import(tmp_path, db, capsys)  # the second import adds nothing
    api = paneboard.Api(server=make_server("imported").url)
    runs = api.runs()
    assert len(runs) == 1
    row = runs.iloc[0]
    assert row["env"] == "proj/r1" and row["status"] == "finished"
    assert row["config.lr"] == 0.001 and row["config.opt.name"] == "adam"
    assert row["config.summary.best_acc"] == 0.75 and "config.summary.acc" not in runs.columns
    assert list(row["tags"]) == ["base", "two_words"]
    assert t0 <= row["started"] <= row["ended"] <= time.time()
    record = json.loads(paneboard_get(api, "/api/v1/envs/proj%2Fr1/run"))
    assert record["notes"] == "some *notes*" and record["provenance"]["wandb"]["run_id"] == truth["id"]

    assert any(c.startswith("sys_") for c in runs.columns)  # W&B's system metrics
    h = api.history("proj/r1", keys=["train/loss", "acc"])
    np.testing.assert_array_equal(h["step"].to_numpy(), np.arange(400) * 2.0)
    got = h["train/loss"].to_numpy()
    np.testing.assert_array_equal(got, np.array(truth["loss"]))  # float64, NaN, inf and -0.0 included
    assert math.copysign(1, got[5]) == -1
    acc = h.dropna(subset=["acc"])
    np.testing.assert_array_equal(acc["acc"].to_numpy(), np.arange(0, 400, 4) / 400)
    walls = h["wall"].to_numpy()
    assert np.all(np.diff(walls) >= 0) and t0 <= walls[0] and walls[-1] <= time.time()


def paneboard_get(api: paneboard.Api, path: str) -> str:
    import urllib.request

    with urllib.request.urlopen(api.server + path) as r:
        return r.read().decode()


@pytest.mark.e2e
def test_wandb_failed_run_and_wandb_folder_of_runs(tmp_path, make_server, capsys):
    _wandb_run(tmp_path, exit_code=3)
    db = tmp_path / "imported.db"
    _import(tmp_path / "wandb", db, capsys)
    api = paneboard.Api(server=make_server("imported").url)
    assert api.runs()["status"].tolist() == ["failed"]


WANDB_MEDIA_SCRIPT = """
import json, sys, wandb
import numpy as np
out = sys.argv[1]
run = wandb.init(project="media", name="m", dir=out, settings=wandb.Settings(console="off"))
shas = []
for i in range(3):
    img = wandb.Image(np.full((4, 6, 3), 40 * i, np.uint8), caption=f"c{i}")
    run.log({"h": wandb.Histogram(np_histogram=(np.array([i, 2, 3]), np.array([0.0, 0.5, 2.0, 3.0]))),
             "img": img, "tab": wandb.Table(columns=["a", "b"], data=[[i, "x|y"]]),
             "train": {"loss": 0.5 / (i + 1)}}, step=i)
    shas.append(img._sha256)
run.finish()
json.dump({"shas": shas}, open(out + "/truth.json", "w"))
"""


@pytest.mark.e2e
def test_wandb_media(tmp_path, make_server, capsys):
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true"}
    subprocess.run([sys.executable, "-c", WANDB_MEDIA_SCRIPT, str(tmp_path)], env=env, check=True, timeout=120)
    truth = json.loads((tmp_path / "truth.json").read_text())
    db = tmp_path / "imported.db"
    assert "9 steps" in _import(tmp_path, db, capsys)  # 3 histograms, 3 images, 3 tables
    assert "0 steps" in _import(tmp_path, db, capsys)
    srv = make_server("imported")
    hist = srv.get_json("/api/v1/envs/media%2Fm/panes/h/steps?i0=0&i1=9")["records"]
    assert [r["step"] for r in hist] == [0, 1, 2]
    assert hist[1]["buckets"] == [[0.0, 0.5, 1.0], [0.5, 2.0, 2.0], [2.0, 3.0, 3.0]]
    imgs = srv.get_json("/api/v1/envs/media%2Fm/panes/img/steps?i0=0&i1=9")["records"]
    assert [r["src"].rsplit("/", 1)[1] for r in imgs] == truth["shas"]  # the very PNG bytes W&B wrote
    assert [r["caption"] for r in imgs] == ["c0", "c1", "c2"] and imgs[0]["width"] == 6
    tabs = srv.get_json("/api/v1/envs/media%2Fm/panes/tab/steps?i0=0&i1=9")["records"]
    assert "<th>a</th>" in tabs[2]["html"] and "<td>x|y</td>" in tabs[2]["html"]
    h = paneboard.Api(server=srv.url).history("media/m", keys=["train.loss"])  # a logged dict: dotted keys
    np.testing.assert_array_equal(h["train.loss"].to_numpy(), [0.5, 0.25, 0.5 / 3])


# Metrics go in with log_batch, as mlflow.log_metrics and autologging send them: one transaction per run instead of
# 600, which on the SQLite store took most of this test's time.
MLFLOW_SCRIPT = """
import math, sys
from mlflow.entities import Metric
from mlflow.tracking import MlflowClient
c = MlflowClient(tracking_uri=sys.argv[1])
eid = c.create_experiment("exp")
for name, status in (("a", "FINISHED"), ("a", "FAILED")):  # two runs of one name
    r = c.create_run(eid, run_name=name, tags={"team": "vision", "mlflow.user": "ada",
                     "mlflow.source.git.commit": "abc123", "mlflow.note.content": "why"}, start_time=1700000000000)
    c.log_param(r.info.run_id, "lr", "0.001")
    c.log_param(r.info.run_id, "opt", "adam")
    c.log_param(r.info.run_id, "layers", "12")
    c.log_batch(r.info.run_id, metrics=[Metric("loss", 1 / (i + 1) if i != 7 else math.nan, 1700000000000 + i * 11,
                                               i * 3) for i in range(300)])
    c.log_metric(r.info.run_id, "val_acc", 0.5, step=0, timestamp=1700000000001)
    c.set_terminated(r.info.run_id, status, end_time=1700000099000)
"""


@pytest.mark.long
@pytest.mark.e2e
@pytest.mark.parametrize("store", ["file", "sqlite"])
def test_mlflow_store(tmp_path, make_server, capsys, store):
    uri = (tmp_path / "mlruns").as_uri() if store == "file" else f"sqlite:///{tmp_path / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true"}
    subprocess.run([sys.executable, "-c", MLFLOW_SCRIPT, uri], env=env, check=True, timeout=120,
                   capture_output=True)
    db = tmp_path / "imported.db"
    source = tmp_path if store == "file" else tmp_path / "mlflow.db"
    assert "imported 602 points of 2 mlflow runs" in _import(source, db, capsys)
    assert "imported 0 points" in _import(uri if store == "sqlite" else tmp_path / "mlruns", db, capsys)

    from mlflow.tracking import MlflowClient  # the peer's own reader is the truth

    client = MlflowClient(tracking_uri=uri)
    runs = {r.info.run_id: r for r in client.search_runs([e.experiment_id for e in client.search_experiments()])}
    api = paneboard.Api(server=make_server("imported").url)
    table = api.runs()
    assert len(table) == 2 and "exp/a" in set(table["env"])
    for _, row in table.iterrows():
        record = json.loads(paneboard_get(api, f"/api/v1/envs/{row['env'].replace('/', '%2F')}/run"))
        run = runs[record["provenance"]["mlflow"]["run_id"]]
        assert row["env"] in ("exp/a", "exp/a-" + run.info.run_id[:8])  # two runs of one name: two envs
        assert row["status"] == {"FINISHED": "finished", "FAILED": "failed"}[run.info.status]
        assert row["config.lr"] == 0.001 and row["config.layers"] == 12 and row["config.opt"] == "adam"
        assert list(row["tags"]) == ["team=vision"] and record["notes"] == "why"
        assert record["provenance"]["user"] == "ada" and record["provenance"]["git"]["commit"] == "abc123"
        assert row["started"] == 1700000000.0 and row["ended"] == 1700000099.0
        h = api.history(row["env"], keys=["loss"])
        truth = client.get_metric_history(run.info.run_id, "loss")
        np.testing.assert_array_equal(h["step"].to_numpy(), [m.step for m in truth])
        np.testing.assert_array_equal(h["loss"].to_numpy(), [m.value for m in truth])
        np.testing.assert_array_equal(h["wall"].to_numpy(), [m.timestamp / 1000 for m in truth])
    assert len(api.runs("lr < 0.01")) == 2  # params that are numbers are numbers


def test_unknown_source_and_missing_path(tmp_path, capsys, unused_port):
    (tmp_path / "notes.txt").write_text("hi")
    assert dash_server(["import", str(tmp_path / "nope"), "--db", str(tmp_path / "x.db")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert dash_server(["import", str(tmp_path), "--db", str(tmp_path / "x.db")]) == 2
    assert "not a TensorBoard logdir" in capsys.readouterr().err
    (tmp_path / "mlruns" / "0").mkdir(parents=True)
    (tmp_path / "mlruns" / "0" / "meta.yaml").write_text("name: Default")
    assert dash_server(["import", str(tmp_path), "--server", f"http://127.0.0.1:{unused_port}"]) == 2
    assert f"http://127.0.0.1:{unused_port}: " in capsys.readouterr().err  # no server there: said, nothing done


@pytest.mark.parametrize("peer", ["wandb", "mlflow"])
def test_missing_extra_is_named(tmp_path, capsys, monkeypatch, peer):
    for name in list(sys.modules):  # as if the peer's library were not installed
        if name == peer or name.startswith(peer + "."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, peer, None)
    if peer == "wandb":
        (tmp_path / "run-x.wandb").write_bytes(b":W&B")
    else:
        (tmp_path / "mlruns" / "0").mkdir(parents=True)
        (tmp_path / "mlruns" / "0" / "meta.yaml").write_text("name: Default")
    assert dash_server(["import", str(tmp_path), "--db", str(tmp_path / "x.db"), "--quiet"]) == 2
    assert f'needs the {peer} extra: pip install "paneboard[{peer}]"' in capsys.readouterr().err

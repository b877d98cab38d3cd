"""Real offline W&B runs (wandb itself writing them) imported: image lists per step with their captions, media
left out named by type, key and count, and define_metric's declared x axes and best directions."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import paneboard
from paneboard.server.cli.main import main as dash_server

WANDB_SCRIPT = """
import os, sys
import numpy as np
import wandb
out = sys.argv[1]
os.makedirs(out + "/src", exist_ok=True)
open(out + "/src/clip.mp4", "wb").write(b"\\x00\\x00\\x00\\x18ftypmp42" + bytes(64))  # no encoder here
run = wandb.init(project="p", name="r", dir=out, settings=wandb.Settings(console="off"))
run.define_metric("train/step")
run.define_metric("eval/*", step_metric="train/step", summary="min")
run.define_metric("acc", summary="max,last", hidden=True)
for i in range(5):
    row = {"examples": [wandb.Image(np.full((4, 6, 3), 40 * i + k, np.uint8), caption=f"s{i}k{k}") for k in range(3)],
           "eval/loss": 1.0 / (i + 1), "acc": i * 0.1, "plain": i}
    if i != 2:  # a row without its step metric: W&B's step_sync draws it at the metric's last value
        row["train/step"] = 4 * i + 4
    if i < 2:
        row["clips"] = [wandb.Video(out + "/src/clip.mp4"), wandb.Video(out + "/src/clip.mp4")]
    run.log(row)
run.finish()
"""


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wandb-round3")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true",
           "WANDB_DIR": str(out)}
    subprocess.run([sys.executable, "-c", WANDB_SCRIPT, str(out)], env=env, check=True, timeout=120)
    return out


def wandb_rows(root: Path) -> list[dict]:
    """The run's history rows as wandb's own Record protobufs hold them: {key: value} with media as dicts."""
    from wandb.proto import wandb_internal_pb2 as pb

    from paneboard.server.peers.wandb_log import records

    [path] = root.glob("wandb/offline-run-*/run-*.wandb")
    rows, record = [], pb.Record()
    for data in records(path):
        record.ParseFromString(data)
        if record.WhichOneof("record_type") == "history":
            row: dict = {}
            for item in record.history.item:
                keys = list(item.nested_key) or [item.key]
                target = row
                for k in keys[:-1]:
                    target = target.setdefault(k, {})
                target[keys[-1]] = json.loads(item.value_json)
            rows.append(row)
    return rows


def _import(root: Path, db: Path, capsys) -> tuple[str, str]:
    assert dash_server(["import", str(root / "wandb"), "--db", str(db), "--quiet"]) == 0
    return capsys.readouterr()


def test_image_lists_with_captions_and_left_out_media_named(wandb_run, tmp_path, make_server, capsys):
    from PIL import Image

    out, err = _import(wandb_run, tmp_path / "imported.db", capsys)
    assert "(15 steps of media" in out  # 5 lists of 3 images
    assert "W&B media paneboard has no pane for, not imported: 4 video-file in 'clips'" in err
    rows = wandb_rows(wandb_run)
    files = next(wandb_run.glob("wandb/offline-run-*/files"))
    want = [(row["_step"], caption, hashlib.sha256((files / name).read_bytes()).hexdigest())
            for row in rows
            for name, caption in zip(row["examples"]["filenames"], row["examples"]["captions"], strict=True)]
    assert [w[1] for w in want] == [f"s{i}k{k}" for i in range(5) for k in range(3)]
    srv = make_server("imported")
    recs = srv.get_json("/api/v1/envs/p%2Fr/panes/examples/steps?i0=0&i1=99")["records"]
    assert [(r["step"], r["caption"], r["src"].rsplit("/", 1)[1]) for r in recs] == want
    for r, (i, k) in zip(recs, [(i, k) for i in range(5) for k in range(3)], strict=True):
        with urllib_open(srv.url + "/" + r["src"].lstrip("/")) as f:
            assert np.asarray(Image.open(f)).max() == 40 * i + k  # the very picture logged at that place
    runs = paneboard.Api(server=srv.url).runs()
    assert not [c for c in runs.columns if c.startswith("config.summary.examples")]  # media fields aren't summary


def urllib_open(url: str):
    import urllib.request

    return urllib.request.urlopen(url, timeout=30)


def wandb_metric_records(root: Path) -> list:
    from wandb.proto import wandb_internal_pb2 as pb

    from paneboard.server.peers.wandb_log import records

    [path] = root.glob("wandb/offline-run-*/run-*.wandb")
    out, record = [], pb.Record()
    for data in records(path):
        record.ParseFromString(data)
        if record.WhichOneof("record_type") == "metric":
            out.append(pb.MetricRecord.FromString(record.metric.SerializeToString()))
    return out


def test_define_metric_axes_summaries_and_best_directions(wandb_run, tmp_path, make_server, capsys):
    from helpers.tensorboard import exported

    _out, err = _import(wandb_run, tmp_path / "imported.db", capsys)
    metrics = {m.name or m.glob_name: m for m in wandb_metric_records(wandb_run)}
    assert metrics["eval/*"].step_metric == "train/step" and metrics["eval/*"].options.step_sync
    assert metrics["acc"].options.hidden and metrics["acc"].summary.max
    rows = wandb_rows(wandb_run)
    # What W&B draws: eval/loss at train/step's value in its row, else (step_sync) the last one before it.
    x_of_row, last = [], None
    for row in rows:
        last = row.get("train/step", last)
        x_of_row.append(last)
    srv = make_server("imported")
    loss = exported(srv, "p/r", "eval/loss")["eval/loss"]
    assert loss["x"] == x_of_row == [4, 8, 8, 16, 20]
    assert loss["y"] == [row["eval/loss"] for row in rows]
    for key in ("acc", "plain", "train/step"):  # no step metric declared for them: W&B's _step
        trace = exported(srv, "p/r", key)[key]
        assert trace["x"] == [row["_step"] for row in rows] and trace["y"] == [row[key] for row in rows], key
    panes = {p["win"]: p for p in srv.get_json("/api/v1/envs/p%2Fr")["panes"]}
    assert panes["eval/loss"]["opts"]["xlabel"] == "train/step" and panes["plain"]["opts"]["xlabel"] == "_step"
    info = srv.get_json("/api/v1/envs/p%2Fr/run")
    assert info["best"] == {"eval/loss": "min", "acc": "max"}  # the declared summaries say which way is better
    summary = info["config"]["summary"]
    assert summary["eval/loss"] == {"min": min(row["eval/loss"] for row in rows)}
    assert summary["acc"] == {"max": rows[-1]["acc"], "last": rows[-1]["acc"]}
    assert "metrics hidden in W&B (define_metric hidden=True) are shown here: acc" in err


def test_define_metric_rules_are_the_sdks(tmp_path):
    """The importer reads a run's declarations through the SDK's MetricRules: one mapping of W&B's semantics."""
    from paneboard.run_api.metrics import MetricRules, spec_of

    rules = MetricRules()
    rules.define("*", spec_of(step_metric="train/global_step", step_sync=True))
    rules.define("eval/loss", spec_of(summary="min"))
    assert rules.x_of("eval/loss") == "train/global_step"  # the name keeps what the earlier glob said
    assert rules.x_of("train/global_step") is None  # a step metric is drawn against the run's step
    assert rules.spec("eval/loss").direction == "min" and rules.spec("other").direction is None
    with pytest.raises(ValueError, match="goal"):
        spec_of(goal="sideways")


HF_SCRIPT = """
import sys
import torch, transformers
class Tokens(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(0)
        self.ids, self.labels = torch.randint(0, 64, (n, 12), generator=g), torch.randint(0, 2, (n,), generator=g)
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}
config = transformers.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32, max_position_embeddings=16, num_labels=2)
args = transformers.TrainingArguments(output_dir=sys.argv[1] + "/out", max_steps=12, logging_steps=2,
                                      eval_strategy="steps", eval_steps=4, per_device_train_batch_size=4,
                                      report_to=["wandb"], save_strategy="no", disable_tqdm=True, use_cpu=True,
                                      run_name="tiny-bert")
transformers.Trainer(model=transformers.BertForSequenceClassification(config), args=args,
                     train_dataset=Tokens(32), eval_dataset=Tokens(8)).train()
"""


@pytest.mark.e2e
def test_hf_trainer_report_to_wandb_drawn_by_global_step(tmp_path, make_server, capsys):
    pytest.importorskip("transformers")
    from helpers.tensorboard import exported

    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true",
           "WANDB_DIR": str(tmp_path), "WANDB_PROJECT": "hf", "HF_HUB_OFFLINE": "1", "WANDB_CONSOLE": "off"}
    subprocess.run([sys.executable, "-c", HF_SCRIPT, str(tmp_path)], env=env, check=True, timeout=300)
    _import(tmp_path, tmp_path / "imported.db", capsys)
    metrics = {m.name or m.glob_name: m for m in wandb_metric_records(tmp_path)}
    assert metrics["*"].step_metric == "train/global_step"  # what the Trainer's WandbCallback declares
    rows = wandb_rows(tmp_path)
    evals = [row for row in rows if "eval/loss" in row]
    assert [row["train/global_step"] for row in evals] == [4, 8, 12]
    assert [row["_step"] for row in evals] != [4, 8, 12]  # W&B's own row counter is another axis
    srv = make_server("imported")
    [env_name] = [e["name"] for e in srv.get_json("/api/v1/envs")["envs"] if e["name"].startswith("hf/")]
    q = env_name.replace("/", "%2F")
    loss = exported(srv, env_name, "eval/loss")["eval/loss"]
    assert loss["x"] == [4, 8, 12] and loss["y"] == [row["eval/loss"] for row in evals]
    train = exported(srv, env_name, "train/loss")["train/loss"]
    assert train["x"] == [row["train/global_step"] for row in rows if "train/loss" in row] == [2, 4, 6, 8, 10, 12]
    panes = {p["win"]: p for p in srv.get_json(f"/api/v1/envs/{q}")["panes"]}
    assert panes["train/global_step"]["opts"]["xlabel"] == "_step"  # the step metric keeps W&B's _step

"""W&B-style example scripts run unchanged but for `import paneboard as wandb`; what is stored equals what was logged."""

from __future__ import annotations

import numbers
import runpy
import urllib.parse

import pytest

import paneboard
from helpers.paths import TESTS
from helpers.tensorboard import exported, records
from paneboard.run_api.run import Run

EXAMPLES = TESTS / "helpers" / "wandb_examples"


@pytest.fixture
def run_script(server, monkeypatch, tmp_path):
    """Run an example script as __main__ against the server; returns each run's scalar values as logged."""
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    monkeypatch.setenv("PANEBOARD_HOME", str(tmp_path / "home"))  # run.dir lies under it (never the cwd)
    monkeypatch.chdir(tmp_path)
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        monkeypatch.delenv(var, raising=False)
    logged: dict[str, dict[str, list[float]]] = {}
    real_log = Run.log

    def recording_log(self, data, step=None, commit=None, sync=None):  # the real log, its input kept
        flat = logged.setdefault(self.env, {})

        def walk(prefix: str, d: dict) -> None:
            for k, v in d.items():
                key = f"{prefix}{k}"
                if isinstance(v, dict):
                    walk(key + "/", v)
                elif isinstance(v, numbers.Number) or getattr(v, "ndim", None) == 0:
                    flat.setdefault(key, []).append(float(v.item() if hasattr(v, "item") else v))
        walk("", data)
        return real_log(self, data, step=step, commit=commit, sync=sync)

    monkeypatch.setattr(Run, "log", recording_log)

    def run(name: str) -> dict[str, dict[str, list[float]]]:
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
        paneboard.finish()
        return logged

    yield run
    paneboard.finish()


def _stored(server, env: str, key: str) -> dict:
    return exported(server, env, key)[key]


def _same_values(server, logged: dict[str, dict[str, list[float]]]) -> None:
    for env, keys in logged.items():
        for key, values in keys.items():
            got = _stored(server, env, key)["y"]
            assert got == pytest.approx(values), (env, key)


def test_quickstart(server, run_script) -> None:
    logged = run_script("quickstart.py")
    _same_values(server, logged)
    env = "my-awesome-project/quickstart"
    assert _stored(server, env, "acc")["x"] == list(range(8))
    cfg = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/run")["config"]
    assert cfg == {"learning_rate": 0.01, "epochs": 10}


def test_pytorch_training_with_watch_summary_and_table(server, run_script) -> None:
    logged = run_script("pytorch_train.py")
    _same_values(server, logged)
    env = "pytorch-demo/mlp"
    assert _stored(server, env, "loss")["x"] == [16 * k for k in range(1, 13)]
    assert _stored(server, env, "test_accuracy")["x"] == [192]  # the step after the last committed one
    info = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/run")
    assert info["config"]["summary"]["test_accuracy"] == logged[env]["test_accuracy"][0]
    assert info["config"]["architecture"] == "MLP" and info["status"] == "finished"
    panes = {p["win"] for p in server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}")["panes"]}
    assert any(w.startswith("model") for w in panes), panes  # watch(model) logged its norms
    table = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/predictions")
    assert table["kind"] == "table" and table["data"]["columns"] == ["id", "truth", "guess"]


def test_define_metric_custom_axes(server, run_script) -> None:
    logged = run_script("define_metric.py")
    _same_values(server, logged)
    env = "axes/custom-steps"
    assert _stored(server, env, "train/loss")["x"] == [2 ** i for i in range(20)]
    assert _stored(server, env, "val/loss")["x"] == [0, 1, 2, 3]
    info = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/run")
    assert info.get("best", {}).get("val/loss") == "min"


def test_media_histograms_and_nested_metrics(server, run_script) -> None:
    logged = run_script("media_and_histograms.py")
    _same_values(server, logged)
    env = "media/gallery"
    assert _stored(server, env, "metrics/train/loss")["x"] == [0, 1, 2]
    for key, kind in (("examples", "image"), ("normalised", "image"), ("report", "text")):
        recs = records(server, env, key)
        assert [r["step"] for r in recs] == [0, 1, 2] and recs[0]["type"] == kind, key
    assert records(server, env, "examples")[1]["caption"] == "step 1"
    assert [r["step"] for r in records(server, env, "weights")] == [0, 1, 2]
    assert [r["step"] for r in records(server, env, "grads")] == [0, 1, 2]


def test_run_attributes_artifact_and_alert(server, run_script, tmp_path) -> None:
    logged = run_script("resume_and_artifacts.py")
    _same_values(server, logged)
    env = "artifacts/ckpt"
    assert (tmp_path / "home" / "runs" / "artifacts_ckpt" / "model.json").is_file()
    assert not (tmp_path / "paneboard").exists()  # nothing in the working directory to shadow the package
    found = server.get_json("/api/v1/artifact?ref=" + urllib.parse.quote("mlp-model:v1"))
    assert found["name"] == "mlp-model" and [f["path"] for f in found["files"]] == ["model.json"]
    panes = {p["win"] for p in server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}")["panes"]}
    assert "alerts" in panes

"""W&B semantics through paneboard.init/log against a real server: image galleries, a step's row keeping each key's
last value, and use_artifact("name:latest") (with W&B's project/entity prefixes) resolving on our server."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.parse

import numpy as np
import pytest

import paneboard
from helpers.tensorboard import exported
from paneboard.artifacts import ArtifactError


def _steps(server, env: str, win: str) -> list[dict]:
    return server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/{win}/steps?i0=0")["records"]


def test_a_list_of_images_is_a_record_each_at_its_step_with_captions(online, tmp_path) -> None:
    # One mapping with the W&B importer (server/peers/wandb_media.py): each image of the list at the step.
    paneboard.init(project="gal", name="lery", dir=tmp_path)
    for step in (0, 1):
        pictures = [paneboard.Image(np.full((4, 6, 3), 40 * (k + 1), np.uint8), caption=f"class {k} @ {step}")
                    for k in range(3)]
        paneboard.log({"examples": pictures, "loss": 1.0 / (step + 1)}, step=step)
    paneboard.finish()  # sends the last step's row
    recs = _steps(online, "gal/lery", "examples")
    assert [(r["step"], r["caption"]) for r in recs] == [(s, f"class {k} @ {s}") for s in (0, 1) for k in range(3)]
    assert exported(online, "gal/lery", "loss")["loss"]["x"] == [0, 1]


def test_a_key_logged_twice_in_one_step_keeps_its_last_value(online, tmp_path) -> None:
    run = paneboard.init(project="sem", name="last", dir=tmp_path)
    paneboard.log({"loss": 1.0, "acc": 0.1}, step=5)
    paneboard.log({"loss": 2.0}, step=5)                 # same step: replaces loss, keeps acc
    assert run.summary["loss"] == 2.0                    # the summary sees the step not yet sent
    paneboard.log({"loss": 3.0, "acc": 0.3}, step=6)     # a later step: step 5's row is complete
    paneboard.log({"lr": 0.5}, commit=False)             # step 6 again, not committed ...
    paneboard.log({"lr": 0.25, "loss": 4.0})             # ... so this is step 6 too: last values win
    paneboard.log({"loss": 5.0})                         # step 7
    paneboard.finish()
    assert exported(online, "sem/last", "loss")["loss"]["x"] == [5, 6, 7]
    assert exported(online, "sem/last", "loss")["loss"]["y"] == [2.0, 4.0, 5.0]
    assert exported(online, "sem/last", "acc")["acc"]["y"] == [0.1, 0.3]
    assert exported(online, "sem/last", "lr")["lr"]["x"] == [6] and exported(online, "sem/last", "lr")["lr"]["y"] == [0.25]


def test_use_artifact_latest_resolves_with_w_and_b_prefixes(online, tmp_path) -> None:
    weights = tmp_path / "model.txt"
    for version in (1, 2):
        weights.write_text(f"weights v{version}")
        paneboard.init(project="art", name=f"train-{version}", dir=tmp_path)
        art = paneboard.Artifact("classifier", type="model")
        art.add_file(str(weights))
        paneboard.log_artifact(art, aliases=["best"] if version == 1 else None)
        paneboard.finish()  # waits for the upload
    run = paneboard.init(project="art", name="evaluate", dir=tmp_path)
    for ref in ("classifier:latest", "art/classifier:latest", "my-team/art/classifier:latest", "classifier"):
        used = run.use_artifact(ref)
        folder = used.download()
        assert os.path.isdir(folder) and open(os.path.join(folder, "model.txt")).read() == "weights v2", ref
    assert open(paneboard.use_artifact("art/classifier:best").file()).read() == "weights v1"
    assert open(run.use_artifact("classifier:v1").file()).read() == "weights v1"
    with pytest.raises(ArtifactError, match="no artifact 'classifier:v9'"):
        run.use_artifact("art/classifier:v9")
    paneboard.finish()
    used = online.get_json("/api/v1/envs/art%2Fevaluate/artifacts")["used"]
    assert sorted((a["name"], a["version"]) for a in used) == [("classifier", 1), ("classifier", 2)]


def test_a_script_ending_without_finish_still_sends_its_last_step(server, tmp_path) -> None:
    """W&B finishes a run at exit: the last step's row (held until the step is complete) goes out then."""
    script = ("import paneboard as wandb\n"
              "wandb.init(project='exit', name='nofinish')\n"
              "for s in range(5):\n"
              "    wandb.log({'loss': 1.0 / (s + 1), 'acc': s / 4}, step=s)\n")
    env = {**os.environ, "PANEBOARD_URL": server.url, "PANEBOARD_SPOOL_DIR": str(tmp_path)}
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert exported(server, "exit/nofinish", "loss")["loss"]["x"] == [0, 1, 2, 3, 4]
    assert exported(server, "exit/nofinish", "acc")["acc"]["y"] == [0.0, 0.25, 0.5, 0.75, 1.0]

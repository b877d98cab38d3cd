"""W&B images with boxes and masks (logged by wandb itself, offline) import with their overlays as data."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from helpers.tensorboard import blob, records
from paneboard.server.cli.main import main as dash_server

WANDB_SCRIPT = """
import sys
import numpy as np
import wandb
run = wandb.init(project="vis", name="seg", dir=sys.argv[1], settings=wandb.Settings(console="off"))
labels = {1: "cat", 2: "dog"}
for i in range(2):
    m = np.zeros((16, 24), np.uint8); m[2:6, 3 + i:9] = 1; m[10:14, 12:20] = 2
    run.log({"img": wandb.Image(np.zeros((16, 24, 3), np.uint8), boxes={"predictions": {"box_data": [
        {"position": {"minX": 0.25, "maxX": 0.5, "minY": 0.5, "maxY": 1.0}, "class_id": 2,
         "scores": {"acc": 0.5 + i / 4}, "box_caption": "a dog"}], "class_labels": labels}},
        masks={"ground_truth": {"mask_data": m, "class_labels": labels}})}, step=i)
run.finish()
"""


def test_wandb_boxes_and_masks_come_over_as_overlays(tmp_path: Path, make_server, capsys) -> None:
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true"}
    subprocess.run([sys.executable, "-c", WANDB_SCRIPT, str(tmp_path / "wb")], env=env, check=True, timeout=120)
    srv = make_server()
    assert dash_server(["import", str(tmp_path / "wb"), "--server", srv.url, "--quiet"]) == 0
    recs = records(srv, "vis/seg", "img")
    assert [r["step"] for r in recs] == [0, 1]
    for i, r in enumerate(recs):
        (box,) = r["overlays"]["boxes"]["predictions"]["boxes"]
        assert box == {"xyxy": [6.0, 8.0, 12.0, 16.0], "class_id": 2, "scores": {"acc": 0.5 + i / 4},
                       "caption": "a dog"}
        assert r["overlays"]["boxes"]["predictions"]["class_labels"] == {"1": "cat", "2": "dog"}
        mask = r["overlays"]["masks"]["ground_truth"]
        assert mask["classes"] == [0, 1, 2] and mask["class_labels"]["2"] == "dog"
        ids = np.asarray(Image.open(io.BytesIO(blob(srv, mask["src"]))))
        assert ids.shape == (16, 24) and ids[3, 5] == 1 and ids[12, 15] == 2 and ids[3, 3] == (1 if i == 0 else 0)

"""W&B audio, video and HTML (logged by wandb itself, offline) imported as media panes, locally and over HTTP."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paneboard.server.cli.main import main as dash_server

WANDB_SCRIPT = """
import json, os, sys, wave
import numpy as np
import wandb
from PIL import Image
out = sys.argv[1]
os.makedirs(out + "/src", exist_ok=True)
def wav(path, n):
    with wave.open(path, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000)
        w.writeframes((np.sin(np.arange(n) / 5) * 1000).astype("<i2").tobytes())
def gif(path, k):
    frames = [Image.fromarray(np.full((8, 10, 3), 30 * (i + k), np.uint8)) for i in range(3)]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100, loop=0)
run = wandb.init(project="media", name="av", dir=out, settings=wandb.Settings(console="off"))
open(out + "/src/clip.mp4", "wb").write(b"\\x00\\x00\\x00\\x18ftypmp42" + bytes(64))  # no encoder here
truth = {"snd": [], "vid": []}
for i in range(3):
    wav(f"{out}/src/a{i}.wav", 800 + i)
    gif(f"{out}/src/v{i}.gif", i)
    snd = wandb.Audio(f"{out}/src/a{i}.wav", caption=f"s{i}")
    vid = wandb.Video(f"{out}/src/v{i}.gif", caption=f"v{i}")
    run.log({"snd": snd, "vid": vid, "page": wandb.Html(f"<h1>step {i}</h1><script>alert(1)</script>"),
             "mp4": wandb.Video(f"{out}/src/clip.mp4")}, step=i)
    truth["snd"].append(open(f"{out}/src/a{i}.wav", "rb").read().hex())
    truth["vid"].append(open(f"{out}/src/v{i}.gif", "rb").read().hex())
run.finish()
json.dump(truth, open(out + "/truth.json", "w"))
"""


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wandb-media")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true", "WANDB_DISABLE_GIT": "true"}
    subprocess.run([sys.executable, "-c", WANDB_SCRIPT, str(out)], env=env, check=True, timeout=120)
    return out


def _records(srv, win: str) -> list[dict]:
    return srv.get_json(f"/api/v1/envs/media%2Fav/panes/{win}/steps?i0=0&i1=9")["records"]


def _check(srv, truth: dict) -> None:
    snd = _records(srv, "snd")
    assert [r["step"] for r in snd] == [0, 1, 2] and {r["type"] for r in snd} == {"audio"}
    for i, r in enumerate(snd):
        wav = bytes.fromhex(truth["snd"][i])
        assert r["mime"] == "audio/wav" and r["sample_rate"] == 8000 and r["frames"] == 800 + i
        assert r["src"].rsplit("/", 1)[1] == hashlib.sha256(wav).hexdigest()  # the very bytes wandb kept
    vid = _records(srv, "vid")
    assert [(r["type"], r["mime"], r["width"], r["height"], r["caption"]) for r in vid] == \
        [("image", "image/gif", 10, 8, f"v{i}") for i in range(3)]
    assert [r["src"].rsplit("/", 1)[1] for r in vid] == \
        [hashlib.sha256(bytes.fromhex(h)).hexdigest() for h in truth["vid"]]
    page = _records(srv, "page")
    assert [r["format"] for r in page] == ["html"] * 3
    assert "<h1>step 2</h1>" in page[2]["html"]
    assert "<script" not in page[2]["html"] and "wandb.ai" not in page[2]["html"]  # sanitized: no CDN stylesheet


def test_wandb_audio_video_html_into_a_database(wandb_run, tmp_path, make_server, capsys):
    db = tmp_path / "imported.db"
    argv = ["import", str(wandb_run), "--db", str(db), "--quiet"]
    assert dash_server(argv) == 0
    out, err = capsys.readouterr()
    assert "(9 steps of media" in out  # 3 clips, 3 GIF videos, 3 pages
    assert "W&B media paneboard has no pane for, not imported: 3 video-file in 'mp4'" in err
    assert dash_server(argv) == 0
    assert "(0 steps of media" in capsys.readouterr().out
    _check(make_server("imported"), json.loads((wandb_run / "truth.json").read_text()))


def test_wandb_audio_video_html_into_a_running_server(wandb_run, make_server, capsys):
    srv = make_server()
    argv = ["import", str(wandb_run), "--server", srv.url, "--quiet"]
    assert dash_server(argv) == 0
    assert "(9 steps of media" in capsys.readouterr().out
    assert dash_server(argv) == 0
    assert "(0 steps of media" in capsys.readouterr().out
    _check(srv, json.loads((wandb_run / "truth.json").read_text()))

"""Blobs live exactly as long as something refers to them: overwritten images, closed panes and deleted envs
free theirs; image history and forks keep theirs."""

from __future__ import annotations

import sqlite3
import time
import urllib.error
import urllib.request
from typing import Any

import numpy as np

from helpers.waiting import wait_for


def blob_count(server: Any) -> int:
    with sqlite3.connect(server.db) as db:
        return db.execute("SELECT count(*) FROM blob").fetchone()[0]


def image(k: int) -> np.ndarray:
    return np.full((3, 8, 8), k, dtype=np.uint8)  # a different image (and blob) per k


def sha_of(src: str) -> str:
    return src.rsplit("/", 1)[-1]


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_overwriting_an_image_pane_keeps_one_blob(server: Any):
    c = server.client("over")
    for k in range(50):
        c.image(image(k), win="img")
    assert c.flush(timeout=30)
    assert wait_for(lambda: blob_count(server) == 1, timeout=15, every=0.1), blob_count(server)
    sha = sha_of(server.get_json("/api/v1/envs/over/panes/img")["data"]["src"])
    assert status(f"{server.url}/api/v1/blobs/{sha}") == 200
    c.close_connection(timeout=5)


def test_a_deleted_envs_blobs_answer_404_and_other_envs_keep_theirs(server: Any):
    c = server.client("gone")
    c.image(image(1), win="img")
    c.image(image(2), win="img", env="kept")
    assert c.flush(timeout=30)
    gone = sha_of(server.get_json("/api/v1/envs/gone/panes/img")["data"]["src"])
    kept = sha_of(server.get_json("/api/v1/envs/kept/panes/img")["data"]["src"])
    c.delete_env("gone")
    assert c.flush(timeout=30)
    assert wait_for(lambda: status(f"{server.url}/api/v1/blobs/{gone}") == 404, timeout=15, every=0.1)
    assert status(f"{server.url}/api/v1/blobs/{kept}") == 200
    c.close_connection(timeout=5)


def test_image_history_and_forks_keep_every_blob_they_show(server: Any):
    from paneboard.convert import encode_image, image_hwc

    c = server.client("hist")
    for k in range(5):  # Visdom's store_history: each image is appended to the pane's history
        c.transport.put({"op": "update", "mode": "append", "kind": "image", "env": "hist", "win": "img",
                         "opts": {}, "image": encode_image(image_hwc(image(k)))})
    assert c.flush(timeout=30)
    c.fork_env("hist", "hist-fork")
    c.delete_env("hist")
    c.text("nudge", win="t", env="other")  # another set: a sweep is due
    assert c.flush(timeout=30)
    time.sleep(6)  # past the sweep interval: a wrong sweep would have deleted the history by now
    history = server.get_json("/api/v1/envs/hist-fork/panes/img")["data"].get("history") or []
    assert len(history) == 5
    for entry in history:
        assert status(f"{server.url}/api/v1/blobs/{sha_of(entry['src'])}") == 200
    assert blob_count(server) == 5
    c.close_connection(timeout=5)

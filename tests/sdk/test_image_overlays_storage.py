"""What a mask costs in the store: a typical 512×512 segmentation is a PNG of at most 20 KB, and the same mask logged at
100 steps is stored once (real SDK, real server, its SQLite blob table)."""

from __future__ import annotations

import base64
import io
import sqlite3
from typing import Any

import numpy as np
from PIL import Image

from helpers.tensorboard import blob, records
from paneboard.overlays import mask_png

GOAL_BYTES = 20 * 1024


def segmentation(cells: int, classes: int = 6, seed: int = 0) -> np.ndarray:
    """A 512×512 map of `classes` irregular regions, about cells × cells of them across (a model's output is
    blobby, not noise): a smooth random field cut at its quantiles."""
    field = np.random.default_rng(seed).random((cells, cells)).astype(np.float32)
    smooth = np.asarray(Image.fromarray(field).resize((512, 512), Image.BICUBIC))
    return np.digitize(smooth, np.quantile(smooth, np.linspace(0, 1, classes + 1)[1:-1])).astype(np.uint8)


def blob_table(server: Any) -> tuple[int, int]:
    """(blobs, bytes) the server has stored."""
    with sqlite3.connect(server.db) as db:
        n, size = db.execute("SELECT count(*), coalesce(sum(size), 0) FROM blob").fetchone()
    return int(n), int(size)


def test_a_typical_512_mask_is_stored_in_at_most_20_kb() -> None:
    yy, xx = np.mgrid[:512, :512]
    discs = np.zeros((512, 512), np.uint8)
    for cls, (cy, cx, r) in enumerate([(120, 140, 80), (300, 330, 120), (420, 90, 60)], start=1):
        discs[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = cls
    for mask in (discs, segmentation(8), segmentation(16)):
        png = base64.b64decode(mask_png(mask))
        assert len(png) <= GOAL_BYTES, len(png)
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(png))), mask)  # lossless


def test_the_same_mask_at_100_steps_is_stored_once(online) -> None:
    client = online.client("dedup")
    picture = np.full((512, 512, 3), 90, np.uint8)
    mask = segmentation(16)
    client.image(picture, win="seg", step=0)  # the picture alone: what is stored before any mask
    assert client.flush(timeout=30)
    before = blob_table(online)
    for step in range(1, 101):
        client.image(picture, win="seg", step=step, masks={"pred": {"mask_data": mask, "class_labels": {1: "road"}}},
                     boxes={"b": {"box_data": [{"position": {"minX": step, "maxX": step + 20, "minY": 5, "maxY": 40},
                                                "domain": "pixel", "class_id": 1}]}})
    assert client.flush(timeout=60)
    after = blob_table(online)
    png = base64.b64decode(mask_png(mask))
    assert after[0] - before[0] == 1, (before, after)  # one mask blob for the 100 steps
    assert after[1] - before[1] <= len(png), (before, after, len(png))
    recs = records(online, "dedup", "seg")
    assert len(recs) == 101
    srcs = {r["overlays"]["masks"]["pred"]["src"] for r in recs[1:]}
    assert len(srcs) == 1
    np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(blob(online, srcs.pop())))), mask)
    assert client.close_connection(30)


def test_a_mask_changed_in_place_is_encoded_again() -> None:
    # The SDK keeps the PNGs of recent masks by content: a buffer reused across steps must not get a stale picture.
    mask = segmentation(8)
    first = mask_png(mask)
    assert mask_png(mask.copy()) == first
    mask[:100, :100] = 5
    again = np.asarray(Image.open(io.BytesIO(base64.b64decode(mask_png(mask)))))
    np.testing.assert_array_equal(again, mask)

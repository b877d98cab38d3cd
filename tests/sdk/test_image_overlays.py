"""Boxes and masks over images as data: W&B's documented dict formats through the SDK, validation, dedup, sweep."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

import paneboard
from helpers.http import request_json
from helpers.tensorboard import blob, records, writer

CLASS_LABELS = {0: "person", 1: "car", 2: "road", 3: "building"}
# W&B's "Image overlays" example (docs: Log media → Images → Bounding boxes): one box in fractions, one in pixels.
WANDB_BOXES = {"predictions": {"box_data": [
    {"position": {"minX": 0.1, "maxX": 0.2, "minY": 0.3, "maxY": 0.4}, "class_id": 2, "box_caption": "road",
     "scores": {"acc": 0.1, "loss": 1.2}},
    {"position": {"middle": [150, 20], "width": 68, "height": 112}, "domain": "pixel", "class_id": 3,
     "box_caption": "a building", "scores": {"acc": 0.5, "loss": 0.7}}], "class_labels": CLASS_LABELS}}


def _mask(h: int = 64, w: int = 200, shift: int = 0) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    m[10:30, 20 + shift:60 + shift] = 1
    m[40:60, 100:180] = 3
    return m



def test_wandb_image_boxes_and_masks_are_stored_as_data_in_pixels(online, tmp_path) -> None:
    image = np.full((64, 200, 3), 90, np.uint8)
    masks = {"predictions": {"mask_data": _mask(), "class_labels": CLASS_LABELS},
             "ground_truth": {"mask_data": _mask(shift=5)}}
    run = paneboard.init(project="ov", name="r1", dir=tmp_path)
    paneboard.log({"seg": paneboard.Image(image, boxes=WANDB_BOXES, masks=masks, classes=[
        {"id": 0, "name": "person"}, {"id": 1, "name": "car"}, {"id": 3, "name": "building"}], caption="c")})
    paneboard.finish()
    assert run.rejected == 0
    (rec,) = records(online, "ov/r1", "seg")
    layer = rec["overlays"]["boxes"]["predictions"]
    assert [b["xyxy"] for b in layer["boxes"]] == [[20.0, 19.2, 40.0, 25.6], [116.0, -36.0, 184.0, 76.0]]
    assert [(b["class_id"], b["caption"], b["scores"]) for b in layer["boxes"]] == [
        (2, "road", {"acc": 0.1, "loss": 1.2}), (3, "a building", {"acc": 0.5, "loss": 0.7})]
    assert layer["class_labels"] == {"0": "person", "1": "car", "2": "road", "3": "building"}
    masks_out = rec["overlays"]["masks"]
    assert sorted(masks_out) == ["ground_truth", "predictions"]
    assert masks_out["predictions"]["classes"] == [0, 1, 3]
    assert masks_out["ground_truth"]["class_labels"] == {"0": "person", "1": "car", "3": "building"}  # from classes
    got = np.asarray(Image.open(io.BytesIO(blob(online, masks_out["ground_truth"]["src"]))))
    np.testing.assert_array_equal(got, _mask(shift=5))


def test_client_image_overlays_over_steps_store_an_unchanged_mask_once(online) -> None:
    client = online.client("ovc")
    rng = np.random.default_rng(0)
    big = np.zeros((512, 512), np.uint8)  # a typical segmentation: a few blobby regions of a few classes
    yy, xx = np.mgrid[:512, :512]
    for cls, (cy, cx, r) in enumerate([(120, 140, 80), (300, 330, 120), (420, 90, 60)], start=1):
        big[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = cls
    for step in range(3):
        client.image(rng.integers(0, 255, (512, 512, 3), dtype=np.uint8), win="det", step=step,
                     boxes={"pred": {"box_data": [{"position": {"minX": 10, "maxX": 50 + step, "minY": 5,
                                                                "maxY": 40}, "domain": "pixel", "class_id": 1,
                                                   "scores": {"conf": 0.25 * (step + 1)}}]}},
                     masks={"truth": {"mask_data": big, "class_labels": {1: "a", 2: "b", 3: "c"}}})
    client.flush()
    recs = records(online, "ovc", "det")
    assert [r["overlays"]["boxes"]["pred"]["boxes"][0]["xyxy"][2] for r in recs] == [50, 51, 52]
    srcs = {r["overlays"]["masks"]["truth"]["src"] for r in recs}
    assert len(srcs) == 1  # content-addressed: the same mask at three steps is one blob
    png = blob(online, srcs.pop())
    assert len(png) <= 20 * 1024, len(png)


def test_bad_overlays_are_refused_with_a_clear_message_and_lose_nothing(online) -> None:
    good = paneboard.Image(np.zeros((8, 8, 3), np.uint8)).record()
    bad_mask = paneboard.Image(np.zeros((8, 8, 3), np.uint8), masks={"m": {"mask_data": np.zeros((4, 4))}}).record()
    cases = [({**good, "boxes": {"p": {"box_data": [{"position": {"minX": 1}}]}}}, "needs minX, maxX, minY, maxY"),
             ({**good, "boxes": {"p": {"box_data": [{"position": {"minX": 0, "maxX": 1, "minY": 0, "maxY": 1},
                                                     "scores": {"s": "high"}}]}}}, "scores[s] must be a finite"),
             (bad_mask, "the mask is 4x4, its image 8x8")]
    def post(rec: dict) -> dict:
        ev = {"op": "update", "env": "bad", "win": "im", "kind": "media", "mode": "append",
              "records": [{**rec, "step": 1}]}
        status, body = request_json(f"{online.url}/api/v1/events", "POST",
                                    json.dumps({"events": [ev]}).encode(), {"Content-Type": "application/json"})
        assert status == 200
        return body

    assert post({**good, "boxes": WANDB_BOXES})["ok"] is True
    for rec, message in cases:
        body = post(rec)
        assert body["ok"] is False and message in body["errors"][0]["error"], body
    (kept,) = records(online, "bad", "im")  # the accepted record stays, the refused ones added nothing
    assert len(kept["overlays"]["boxes"]["predictions"]["boxes"]) == 2
    with pytest.raises(ValueError, match="class ids 0..255"):
        paneboard.Image(np.zeros((8, 8, 3), np.uint8), masks={"m": {"mask_data": np.full((8, 8), 300)}})


def test_add_image_with_boxes_keeps_its_boxes_and_labels_as_an_overlay_layer(online) -> None:
    w = writer(online, "tbov")
    img = np.zeros((3, 40, 60), np.float32)
    w.add_image_with_boxes("det", img, np.array([[2, 3, 20, 30], [30, 5, 50, 25], [1, 1, 4, 4]]), global_step=7,
                           labels=["cat", "dog", "cat"])
    w.close()
    (rec,) = records(online, "tbov", "det")
    layer = rec["overlays"]["boxes"]["boxes"]
    assert rec["step"] == 7 and layer["class_labels"] == {"0": "cat", "1": "dog"}
    assert [(b["xyxy"], b["class_id"], b["caption"]) for b in layer["boxes"]] == [
        ([2, 3, 20, 30], 0, "cat"), ([30, 5, 50, 25], 1, "dog"), ([1, 1, 4, 4], 0, "cat")]

"""paneboard.log of a list of media objects (W&B's image list per step), as the W&B importer stores one."""

from __future__ import annotations

import numpy as np

import paneboard
from helpers.tensorboard import records


def test_a_list_of_images_is_one_pane_with_each_image_at_its_step(online, tmp_path) -> None:
    run = paneboard.init(project="lists", name="imgs", dir=tmp_path)
    for i in range(2):
        paneboard.log({"examples": [paneboard.Image(np.full((4, 6, 3), 40 * i + k, np.uint8), caption=f"s{i}k{k}")
                                    for k in range(3)]})
    paneboard.finish()
    assert run.rejected == 0
    recs = records(online, "lists/imgs", "examples")
    assert [(r["step"], r["caption"], r["type"]) for r in recs] == \
        [(i, f"s{i}k{k}", "image") for i in range(2) for k in range(3)]
